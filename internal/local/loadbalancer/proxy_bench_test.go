package loadbalancer

import (
	"io"
	"net"
	"sync"
	"syscall"
	"testing"
	"time"
)

// BenchmarkProxyRoundTrips is the proxy's cost per request of a keep-alive
// client (issue 41): 16 connections through the proxy, each sending a
// small request and reading a small answer, as HTTP/1.1 clients of a
// Gateway do. docs/benchmarks.md compares ways of copying.
func BenchmarkProxyRoundTrips(b *testing.B) {
	const clients, request, answer = 16, 120, 300
	backend, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer backend.Close()
	go func() {
		for {
			c, err := backend.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				in, out := make([]byte, request), make([]byte, answer)
				for {
					if _, err := io.ReadFull(c, in); err != nil {
						return
					}
					if _, err := c.Write(out); err != nil {
						return
					}
				}
			}()
		}
	}()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	p := NewProxy(ln)
	defer p.Close()
	p.SetBackends([]string{backend.Addr().String()})
	conns := make([]net.Conn, clients)
	for i := range conns {
		if conns[i], err = net.Dial("tcp", ln.Addr().String()); err != nil {
			b.Fatal(err)
		}
		defer conns[i].Close()
	}
	b.ResetTimer()
	before := cpuTime(b)
	var wg sync.WaitGroup
	for i, c := range conns {
		n := b.N / clients
		if i < b.N%clients {
			n++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			in, out := make([]byte, answer), make([]byte, request)
			for range n {
				if _, err := c.Write(out); err != nil {
					b.Error(err)
					return
				}
				if _, err := io.ReadFull(c, in); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	// The process's CPU (clients, proxy and backend alike) per request:
	// the machine's other load disturbs it less than the time.
	b.ReportMetric(float64(cpuTime(b)-before)/float64(b.N), "cpu-ns/op")
}

func cpuTime(b *testing.B) time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		b.Fatal(err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
