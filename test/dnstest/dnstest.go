// Package dnstest is a small authoritative DNS server for tests: it listens
// on a loopback address (UDP and TCP on one port), answers A, AAAA and
// CNAME records that a test sets and changes while it runs, and can be
// made to fail (SERVFAIL), to keep silent, or to truncate its UDP answers
// so that clients ask again over TCP. It stops with the test.
package dnstest

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
)

// Server is a DNS server on loopback.
type Server struct {
	// Addr is "127.0.0.1:port", for UDP and TCP.
	Addr string

	udp net.PacketConn
	tcp net.Listener

	mu       sync.Mutex
	records  map[string][]record
	servfail bool
	silent   bool
	truncate bool

	// Queries counts the questions asked, by "name type" ("a.example. A").
	queries sync.Map
	total   atomic.Int64
}

type record struct {
	addr  netip.Addr
	cname string
	ttl   uint32
}

// Start starts a server on 127.0.0.1 (ip, when given: another loopback
// address) and stops it when the test ends.
func Start(t testing.TB, ip ...string) *Server {
	t.Helper()
	host := "127.0.0.1"
	if len(ip) > 0 {
		host = ip[0]
	}
	s := &Server{records: map[string][]record{}}
	for try := 0; ; try++ {
		udp, err := net.ListenPacket("udp", net.JoinHostPort(host, "0"))
		if err != nil {
			t.Fatal(err)
		}
		tcp, err := net.Listen("tcp", udp.LocalAddr().String())
		if err != nil {
			udp.Close()
			if try < 10 {
				continue // the port is taken for TCP: another one
			}
			t.Fatal(err)
		}
		s.udp, s.tcp, s.Addr = udp, tcp, udp.LocalAddr().String()
		break
	}
	go s.serveUDP()
	go s.serveTCP()
	t.Cleanup(func() { s.udp.Close(); s.tcp.Close() })
	return s
}

func fqdn(name string) string { return strings.ToLower(strings.TrimSuffix(name, ".")) + "." }

// Set makes name answer the addresses (A and AAAA records) with ttl
// seconds; no address makes it exist without any (NODATA).
func (s *Server) Set(name string, ttl uint32, addrs ...string) {
	var rs []record
	for _, a := range addrs {
		rs = append(rs, record{addr: netip.MustParseAddr(a), ttl: ttl})
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.records[fqdn(name)] = rs
}

// Alias makes name a CNAME of target.
func (s *Server) Alias(name, target string, ttl uint32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.records[fqdn(name)] = []record{{cname: fqdn(target), ttl: ttl}}
}

// Delete makes name not exist (NXDOMAIN).
func (s *Server) Delete(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.records, fqdn(name))
}

// Fail makes every answer SERVFAIL (or not).
func (s *Server) Fail(on bool) { s.mu.Lock(); s.servfail = on; s.mu.Unlock() }

// Silent makes the server answer nothing (or answer again).
func (s *Server) Silent(on bool) { s.mu.Lock(); s.silent = on; s.mu.Unlock() }

// Truncate makes UDP answers empty and truncated (or not), so that
// clients ask again over TCP.
func (s *Server) Truncate(on bool) { s.mu.Lock(); s.truncate = on; s.mu.Unlock() }

// Queries is how many questions of a name and type ("A", "AAAA") were
// asked; "" and "" count every question.
func (s *Server) Queries(name, typ string) int64 {
	if name == "" {
		return s.total.Load()
	}
	if v, ok := s.queries.Load(fqdn(name) + " " + typ); ok {
		return v.(*atomic.Int64).Load()
	}
	return 0
}

func (s *Server) serveUDP() {
	buf := make([]byte, 65535)
	for {
		n, from, err := s.udp.ReadFrom(buf)
		if err != nil {
			return
		}
		if out := s.answer(buf[:n], true); out != nil {
			_, _ = s.udp.WriteTo(out, from)
		}
	}
}

func (s *Server) serveTCP() {
	for {
		c, err := s.tcp.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			var size [2]byte
			if _, err := io.ReadFull(c, size[:]); err != nil {
				return
			}
			msg := make([]byte, binary.BigEndian.Uint16(size[:]))
			if _, err := io.ReadFull(c, msg); err != nil {
				return
			}
			if out := s.answer(msg, false); out != nil {
				_, _ = c.Write(append(binary.BigEndian.AppendUint16(nil, uint16(len(out))), out...))
			}
		}()
	}
}

// answer answers a query; nil answers nothing.
func (s *Server) answer(query []byte, udp bool) []byte {
	var q dnsmessage.Message
	if err := q.Unpack(query); err != nil || len(q.Questions) != 1 {
		return nil
	}
	question := q.Questions[0]
	name := strings.ToLower(question.Name.String())
	s.total.Add(1)
	v, _ := s.queries.LoadOrStore(name+" "+strings.TrimPrefix(question.Type.String(), "Type"), new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.silent {
		return nil
	}
	resp := dnsmessage.Message{Header: dnsmessage.Header{ID: q.ID, Response: true, Authoritative: true, RecursionDesired: q.RecursionDesired},
		Questions: q.Questions}
	switch rs, ok := s.records[name]; {
	case s.servfail:
		resp.RCode = dnsmessage.RCodeServerFailure
	case !ok:
		resp.RCode = dnsmessage.RCodeNameError
	case udp && s.truncate:
		resp.Truncated = true
	default:
		resp.Answers = s.resolve(name, question.Type, rs, 0)
	}
	out, err := resp.Pack()
	if err != nil {
		panic(errors.Join(errors.New("dnstest: packing an answer"), err))
	}
	return out
}

// resolve gives the records of name of type t, following aliases as a
// recursive server does (the alias, then its target's records).
func (s *Server) resolve(name string, t dnsmessage.Type, rs []record, depth int) []dnsmessage.Resource {
	var out []dnsmessage.Resource
	n := dnsmessage.MustNewName(name)
	for _, r := range rs {
		h := dnsmessage.ResourceHeader{Name: n, Class: dnsmessage.ClassINET, TTL: r.ttl}
		switch {
		case r.cname != "":
			h.Type = dnsmessage.TypeCNAME
			out = append(out, dnsmessage.Resource{Header: h, Body: &dnsmessage.CNAMEResource{CNAME: dnsmessage.MustNewName(r.cname)}})
			if target, ok := s.records[r.cname]; ok && depth < 8 {
				out = append(out, s.resolve(r.cname, t, target, depth+1)...)
			}
		case t == dnsmessage.TypeA && r.addr.Is4():
			h.Type = dnsmessage.TypeA
			out = append(out, dnsmessage.Resource{Header: h, Body: &dnsmessage.AResource{A: r.addr.As4()}})
		case t == dnsmessage.TypeAAAA && r.addr.Is6():
			h.Type = dnsmessage.TypeAAAA
			out = append(out, dnsmessage.Resource{Header: h, Body: &dnsmessage.AAAAResource{AAAA: r.addr.As16()}})
		}
	}
	return out
}
