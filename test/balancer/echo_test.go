package balancer

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"
)

// echoBackend is an HTTP server inside the data plane's namespace that
// answers every request with its name and the request's headers, as Go's
// server parsed them (JSON), and adds the response headers of answer.
type echoBackend struct {
	name, addr string
}

// echoed is what an echo backend answers.
type echoed struct {
	Backend string
	Header  http.Header
}

func (d *dataPlane) echoBackend(name, ip string, answer http.Header) *echoBackend {
	d.t.Helper()
	l, err := d.srv.Listen("tcp", ip+":8080")
	if err != nil {
		d.t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range answer {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(echoed{Backend: name, Header: r.Header})
	})}
	go func() { _ = srv.Serve(l) }()
	d.t.Cleanup(func() { _ = srv.Close() })
	return &echoBackend{name: name, addr: l.Addr().String()}
}

// exchange is one request through NGINX and what came of it.
type exchange struct {
	status int
	// echo is what the backend received (zero when NGINX answered itself).
	echo echoed
	// header is the response's headers as the client got them.
	header http.Header
	// clientPort is the port the request left from (NGINX's $remote_port).
	clientPort string
}

// client sends requests to NGINX's port 80, one connection each, so that
// the client's port of each is known.
type client struct {
	t    testing.TB
	d    *dataPlane
	mu   sync.Mutex
	port string
	http *http.Client
}

func (d *dataPlane) newClient() *client {
	c := &client{t: d.t, d: d}
	c.http = &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		DisableKeepAlives: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			conn, err := d.srv.DialContext(ctx, network, addr)
			if err == nil {
				_, port, _ := net.SplitHostPort(conn.LocalAddr().String())
				c.mu.Lock()
				c.port = port
				c.mu.Unlock()
			}
			return conn, err
		},
	}}
	return c
}

// do sends method to host and path (with its query) on port 80 with header.
func (c *client) do(method, host, path string, header http.Header) exchange {
	c.t.Helper()
	req, err := http.NewRequest(method, "http://127.0.0.1:80"+path, nil)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Host = host
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s%s: %v", method, host, path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	x := exchange{status: resp.StatusCode, header: resp.Header}
	c.mu.Lock()
	x.clientPort = c.port
	c.mu.Unlock()
	if resp.Header.Get("Content-Type") == "application/json" {
		if err := json.Unmarshal(body, &x.echo); err != nil {
			c.t.Fatalf("%s %s%s: the backend's answer %q: %v", method, host, path, body, err)
		}
	}
	return x
}

// one is the single value of a header, and whether there is one; more
// than one fails the test.
func one(t testing.TB, h http.Header, name string) (string, bool) {
	t.Helper()
	vs := h.Values(name)
	if len(vs) > 1 {
		t.Errorf("header %s sent %d times: %q", name, len(vs), vs)
	}
	if len(vs) == 0 {
		return "", false
	}
	return vs[0], true
}

func (x exchange) String() string {
	return strconv.Itoa(x.status) + " from " + fmt.Sprint(x.echo.Backend)
}

// decodeEchoed reads an echo backend's answer.
func decodeEchoed(t testing.TB, body []byte) echoed {
	t.Helper()
	var e echoed
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("the backend's answer %q: %v", body, err)
	}
	return e
}
