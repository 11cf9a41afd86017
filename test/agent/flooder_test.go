package agente2e

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
)

// The flooder is an attacker in a process of its own, so that what it holds
// is not counted in the test's (the server's) heap. TestMain runs it, in a
// re-executed test binary, when floodEnv holds its orders.
const floodEnv = "GATEWALL_AGENT_FLOOD"

func TestMain(m *testing.M) {
	if orders := os.Getenv(floodEnv); orders != "" {
		os.Exit(runFlooder(orders))
	}
	os.Exit(m.Run())
}

// floodOrders say whom to flood, from where and how long.
type floodOrders struct {
	Addr     string
	Audience string
	Seconds  int
	// RPCIPs send RPCs with bad tokens, 4 connections each; StallIPs open
	// connections that never handshake and try plaintext HTTP/2.
	RPCIPs, StallIPs []string
}

// floodReport is what the flooder did, printed as JSON on stdout.
type floodReport struct {
	Requests, LargeRequests, Stalls, Plaintext int64
}

func runFlooder(orders string) int {
	var o floodOrders
	if err := json.Unmarshal([]byte(orders), &o); err != nil {
		fmt.Fprintln(os.Stderr, "flooder orders:", err)
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(o.Seconds)*time.Second)
	defer cancel()
	var rep floodReport
	var wg sync.WaitGroup
	// The same forged token again and again: signed by no one, but of the
	// right audience and not expired, so only a review can refuse it.
	repeated := forgedToken(o.Audience)
	for _, ip := range o.RPCIPs {
		for c := range 4 {
			client := floodClient(ip)
			kinds := []func() (token string, body int64){
				// 15 MiB requests with the same bad token.
				func() (string, int64) { return repeated, 15 << 20 },
				// Garbage tokens, new each time.
				func() (string, int64) { return randomHex(32), 1 << 10 },
				// Forged tokens, new each time: each needs a review.
				func() (string, int64) { return forgedToken(o.Audience), 1 << 20 },
				// No token at all.
				func() (string, int64) { return "", 1 << 20 },
			}
			for _, kind := range kinds {
				wg.Go(func() {
					for ctx.Err() == nil {
						token, size := kind()
						floodRPC(ctx, client, o.Addr, token, size)
						atomic.AddInt64(&rep.Requests, 1)
						if size > 1<<20 {
							atomic.AddInt64(&rep.LargeRequests, 1)
						}
						if c > 0 { // one connection per address floods flat out
							time.Sleep(10 * time.Millisecond)
						}
					}
				})
			}
		}
	}
	for _, ip := range o.StallIPs {
		for range 30 {
			wg.Go(func() {
				for ctx.Err() == nil {
					stall(ctx, ip, o.Addr)
					atomic.AddInt64(&rep.Stalls, 1)
					time.Sleep(100 * time.Millisecond)
				}
			})
		}
		wg.Go(func() {
			for ctx.Err() == nil {
				plaintext(ip, o.Addr)
				atomic.AddInt64(&rep.Plaintext, 1)
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
	wg.Wait()
	if err := json.NewEncoder(os.Stdout).Encode(rep); err != nil {
		return 1
	}
	return 0
}

// floodClient is an HTTP/2 client holding one connection from ip. It
// streams request bodies, so that the flooder holds none of them.
func floodClient(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	tr := &http.Transport{
		DialContext: d.DialContext,
		// An attacker does not verify the server.
		TLSClientConfig:     &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS13},
		ForceAttemptHTTP2:   true,
		MaxConnsPerHost:     1,
		TLSHandshakeTimeout: 5 * time.Second,
	}
	tr.Protocols = new(http.Protocols)
	tr.Protocols.SetHTTP2(true)
	return &http.Client{Transport: tr}
}

// floodRPC sends one FileService.UpdateFile whose request declares size
// bytes of file contents, then reads what comes back.
func floodRPC(ctx context.Context, client *http.Client, addr, token string, size int64) {
	// gRPC's frame: no compression, then the message's length; the message
	// is an UpdateFileRequest (contents = 2) with FileContents (contents = 1).
	inner := protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.BytesType), uint64(size))
	msg := protowire.AppendVarint(protowire.AppendTag(nil, 2, protowire.BytesType), uint64(int64(len(inner))+size))
	msg = append(msg, inner...)
	frame := make([]byte, 5, 5+len(msg))
	binary.BigEndian.PutUint32(frame[1:], uint32(int64(len(msg))+size))
	frame = append(frame, msg...)
	body := io.MultiReader(strings.NewReader(string(frame)), io.LimitReader(zeros{}, size))

	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "https://"+addr+"/mpi.v1.FileService/UpdateFile", body)
	if err != nil {
		return
	}
	req.ContentLength = int64(len(frame)) + size
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("TE", "trailers")
	req.Header.Set("uuid", "flooder")
	if token != "" {
		req.Header.Set("Authorization", token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// stall connects from ip and sends nothing until the server closes the
// connection or the flood ends.
func stall(ctx context.Context, ip, addr string) {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	_, _ = c.Read(make([]byte, 1))
}

// plaintext tries HTTP/2 without TLS.
func plaintext(ip, addr string) {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		return
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	_, _ = io.WriteString(c, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
	_, _ = c.Read(make([]byte, 64))
}

// forgedToken is a JWT of the audience that expires in an hour, signed by
// no one.
func forgedToken(audience string) string {
	enc := base64.RawURLEncoding.EncodeToString
	claims := fmt.Sprintf(`{"aud":[%q],"exp":%d,"sub":"system:serviceaccount:flood:%s"}`, audience, time.Now().Add(time.Hour).Unix(), randomHex(8))
	return enc([]byte(`{"alg":"RS256","kid":"forged"}`)) + "." + enc([]byte(claims)) + "." + enc([]byte(randomHex(64)))
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
