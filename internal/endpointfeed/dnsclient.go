package endpointfeed

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// A small DNS client: the data plane needs each answer's TTL, which Go's
// net.Resolver does not give, and asks the servers it is told in order
// (the NginxProxy's dnsResolver, else the pod's resolv.conf). Names are
// asked as absolute names (an ExternalName is one: Kubernetes' DNS answers
// a CNAME to it as written), never through the pod's search list, so that
// "httpbin.org" is never first tried as httpbin.org.<namespace>.svc....

// errNoSuchName is the answer that a name does not exist (NXDOMAIN).
var errNoSuchName = errors.New("no such name (NXDOMAIN)")

// dnsAnswer is what a name resolved to: its addresses of both families (not
// yet checked) and the smallest TTL of the records that gave them.
type dnsAnswer struct {
	addrs []netip.Addr
	ttl   time.Duration
}

// maxCNAMEs bounds the aliases followed from a name.
const maxCNAMEs = 8

// udpSize is the EDNS0 payload size asked for: answers up to it fit one
// datagram without fragmenting (the DNS flag day's figure); larger ones
// come truncated, and are asked again over TCP.
const udpSize = 1232

// lookup resolves host (absolute) at servers ("address:port"), asking for
// A records, and AAAA records unless ipv4Only, until ctx ends. A server
// that does not answer, or answers SERVFAIL or REFUSED, passes the
// question to the next; NXDOMAIN is an answer.
func lookup(ctx context.Context, servers []string, host string, ipv4Only bool) (dnsAnswer, error) {
	if len(servers) == 0 {
		return dnsAnswer{}, errors.New("no DNS server to ask")
	}
	types := []dnsmessage.Type{dnsmessage.TypeA}
	if !ipv4Only {
		types = append(types, dnsmessage.TypeAAAA)
	}
	type result struct {
		a   dnsAnswer
		err error
	}
	// Both families are asked at once; their answers are taken in order
	// (A first), so that the same answers read the same.
	results := make([]result, len(types))
	var wg sync.WaitGroup
	for i, t := range types {
		wg.Go(func() {
			a, err := lookupType(ctx, servers, host, t)
			results[i] = result{a, err}
		})
	}
	wg.Wait()
	var out dnsAnswer
	var errs []error
	for _, r := range results {
		switch {
		case r.err != nil:
			errs = append(errs, r.err)
		case len(r.a.addrs) > 0:
			out.addrs = append(out.addrs, r.a.addrs...)
			if out.ttl == 0 || r.a.ttl < out.ttl {
				out.ttl = r.a.ttl
			}
		}
	}
	switch {
	case len(out.addrs) > 0:
		// One family answering is enough (a name with no AAAA record
		// fails no lookup; a server that times out on AAAA neither).
		return out, nil
	case len(errs) > 0:
		for _, err := range errs {
			if errors.Is(err, errNoSuchName) {
				return out, err
			}
		}
		return out, errs[0]
	}
	return out, errors.New("the name has no address records")
}

// lookupType asks for one type of records of host, following aliases.
func lookupType(ctx context.Context, servers []string, host string, t dnsmessage.Type) (dnsAnswer, error) {
	name := host
	for range maxCNAMEs {
		msg, err := ask(ctx, servers, name, t)
		if err != nil {
			return dnsAnswer{}, err
		}
		a, next := addresses(msg, name, t)
		if len(a.addrs) > 0 || next == "" {
			return a, nil
		}
		// An alias whose target the server did not resolve for us.
		name = next
	}
	return dnsAnswer{}, fmt.Errorf("more than %d aliases (CNAME) from %s", maxCNAMEs, host)
}

// addresses takes the records of type t of name from an answer, through
// the aliases it holds: the addresses, with the smallest TTL of the
// records on the way, or the last alias when no address came with it.
func addresses(msg *dnsmessage.Message, name string, t dnsmessage.Type) (dnsAnswer, string) {
	var out dnsAnswer
	want := strings.ToLower(name) + "."
	var ttls []uint32
	for range maxCNAMEs + 1 {
		next := ""
		for _, r := range msg.Answers {
			if strings.ToLower(r.Header.Name.String()) != want {
				continue
			}
			switch body := r.Body.(type) {
			case *dnsmessage.AResource:
				if t == dnsmessage.TypeA {
					out.addrs = append(out.addrs, netip.AddrFrom4(body.A))
					ttls = append(ttls, r.Header.TTL)
				}
			case *dnsmessage.AAAAResource:
				if t == dnsmessage.TypeAAAA {
					out.addrs = append(out.addrs, netip.AddrFrom16(body.AAAA))
					ttls = append(ttls, r.Header.TTL)
				}
			case *dnsmessage.CNAMEResource:
				next = strings.ToLower(body.CNAME.String())
				ttls = append(ttls, r.Header.TTL)
			}
		}
		if len(out.addrs) > 0 || next == "" {
			break
		}
		want = next
	}
	if len(out.addrs) == 0 {
		if want != strings.ToLower(name)+"." {
			return out, strings.TrimSuffix(want, ".")
		}
		return out, ""
	}
	out.ttl = time.Duration(slices.Min(ttls)) * time.Second
	return out, ""
}

// ask asks the servers, in order, one question, within ctx: each server
// gets an equal share of the time left (at least attemptFloor), so that
// one that does not answer leaves time for the next.
func ask(ctx context.Context, servers []string, name string, t dnsmessage.Type) (*dnsmessage.Message, error) {
	q, err := dnsmessage.NewName(name + ".")
	if err != nil {
		return nil, err
	}
	var errs []string
	for i, s := range servers {
		attempt := ctx
		if deadline, ok := ctx.Deadline(); ok {
			share := max(time.Until(deadline)/time.Duration(len(servers)-i), attemptFloor)
			var cancel context.CancelFunc
			attempt, cancel = context.WithTimeout(ctx, share)
			defer cancel()
		}
		msg, err := exchange(attempt, s, dnsmessage.Question{Name: q, Type: t, Class: dnsmessage.ClassINET})
		switch {
		case err != nil:
			errs = append(errs, fmt.Sprintf("%s: %s", s, stableError(err)))
			continue
		case msg.RCode == dnsmessage.RCodeNameError:
			return nil, errNoSuchName
		case msg.RCode != dnsmessage.RCodeSuccess:
			errs = append(errs, fmt.Sprintf("%s answered %s", s, strings.TrimPrefix(msg.RCode.String(), "RCode")))
			continue
		}
		return msg, nil
	}
	if ctx.Err() != nil && len(errs) == 0 {
		return nil, fmt.Errorf("no answer in time: %w", ctx.Err())
	}
	return nil, errors.New(strings.Join(errs, "; "))
}

// attemptFloor is the least time one server is given.
const attemptFloor = 200 * time.Millisecond

// exchange asks one server one question over UDP, and again over TCP when
// the answer was truncated.
func exchange(ctx context.Context, server string, q dnsmessage.Question) (*dnsmessage.Message, error) {
	var idb [2]byte
	if _, err := rand.Read(idb[:]); err != nil {
		return nil, err
	}
	id := binary.BigEndian.Uint16(idb[:])
	query := dnsmessage.Message{Header: dnsmessage.Header{ID: id, RecursionDesired: true}, Questions: []dnsmessage.Question{q}}
	var opt dnsmessage.ResourceHeader
	if err := opt.SetEDNS0(udpSize, dnsmessage.RCodeSuccess, false); err != nil {
		return nil, err
	}
	query.Additionals = []dnsmessage.Resource{{Header: opt, Body: &dnsmessage.OPTResource{}}}
	packed, err := query.Pack()
	if err != nil {
		return nil, err
	}
	msg, err := roundTrip(ctx, "udp", server, packed, id, q)
	if err == nil && msg.Truncated {
		msg, err = roundTrip(ctx, "tcp", server, packed, id, q)
	}
	return msg, err
}

// roundTrip sends a query and reads its answer: the first message whose
// ID and question are the query's (others are stray or forged, and
// skipped, on UDP).
func roundTrip(ctx context.Context, network, server string, query []byte, id uint16, q dnsmessage.Question) (*dnsmessage.Message, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, network, server)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if deadline, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(deadline)
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if network == "tcp" {
		framed := binary.BigEndian.AppendUint16(nil, uint16(len(query)))
		if _, err := conn.Write(append(framed, query...)); err != nil {
			return nil, err
		}
		var size [2]byte
		if _, err := io.ReadFull(conn, size[:]); err != nil {
			return nil, err
		}
		buf := make([]byte, binary.BigEndian.Uint16(size[:]))
		if _, err := io.ReadFull(conn, buf); err != nil {
			return nil, err
		}
		return parseAnswer(buf, id, q)
	}
	if _, err := conn.Write(query); err != nil {
		return nil, err
	}
	buf := make([]byte, 65535)
	for {
		n, err := conn.Read(buf)
		if err != nil {
			return nil, err
		}
		if msg, err := parseAnswer(buf[:n], id, q); err == nil {
			return msg, nil
		}
	}
}

// parseAnswer decodes an answer to the query of id and q.
func parseAnswer(buf []byte, id uint16, q dnsmessage.Question) (*dnsmessage.Message, error) {
	var msg dnsmessage.Message
	if err := msg.Unpack(buf); err != nil {
		return nil, fmt.Errorf("an answer that is not DNS: %w", err)
	}
	if !msg.Response || msg.ID != id || len(msg.Questions) != 1 || msg.Questions[0].Type != q.Type ||
		!strings.EqualFold(msg.Questions[0].Name.String(), q.Name.String()) {
		return nil, errors.New("an answer to another question")
	}
	return &msg, nil
}

// resolvConfServers are the nameservers of a resolv.conf, on port 53.
func resolvConfServers(data []byte) []string {
	var out []string
	for line := range strings.SplitSeq(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != "nameserver" {
			continue
		}
		if a, err := netip.ParseAddr(f[1]); err == nil {
			out = append(out, netip.AddrPortFrom(a, 53).String())
		}
	}
	return out
}

// stableError says what went wrong talking to a server without what
// changes from one try to the next (local ports), so that a name failing
// the same way reports the same reason.
func stableError(err error) string {
	var op *net.OpError
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, context.DeadlineExceeded):
		return "no answer in time"
	case errors.As(err, &op):
		return op.Err.Error()
	}
	return err.Error()
}
