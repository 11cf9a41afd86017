// Command testbackend is a backend for Gatewall's end-to-end tests, run as a
// pod by the local node: /stream writes a first chunk, waits, then writes a
// second; /headers?bytes=N answers with an N-byte response header;
// /big?id=X&mib=N writes N MiB, and /status?id=X says whether that response
// was written completely ("done") or is still being written ("writing");
// /upload reads the request body and says how many bytes it received;
// /conn says which of the server's TCP connections carried the request:
// "conn=<id> requests=<n> pod=<pod>", where ids number the accepted
// connections from 1 and n counts the connection's requests, this one
// included; /text?bytes=N&type=T answers N bytes of TextBody with the
// Content-Type T and a Content-Length. churn.go adds what the churn harness needs: /ready and
// /ready/fail, /ws, and a gRPC stream on -grpc-listen.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// conn is what the server knows of one accepted connection, kept in the
// context of each of its requests.
type conn struct {
	id       int64
	requests atomic.Int64
}

type connKey struct{}

func main() {
	addr := flag.String("listen", ":8080", "address to listen on")
	pause := flag.Duration("pause", 3*time.Second, "pause between the two chunks of /stream")
	grpcAddr := flag.String("grpc-listen", "", "address to serve the gRPC ticker on (cleartext HTTP/2); none when empty")
	flag.Parse()
	http.HandleFunc("/stream", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "first")
		w.(http.Flusher).Flush()
		time.Sleep(*pause)
		fmt.Fprintln(w, "second")
	})
	http.HandleFunc("/headers", func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.Atoi(r.URL.Query().Get("bytes"))
		if err != nil || n < 0 || n > 1<<20 {
			http.Error(w, "bytes=N, N up to 1048576", http.StatusBadRequest)
			return
		}
		w.Header().Set("X-Big", strings.Repeat("a", n))
		fmt.Fprintln(w, "ok")
	})
	http.HandleFunc("/text", func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.Atoi(r.URL.Query().Get("bytes"))
		if err != nil || n < 0 || n > 1<<20 {
			http.Error(w, "bytes=N, N up to 1048576", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", r.URL.Query().Get("type"))
		w.Header().Set("Content-Length", strconv.Itoa(n))
		_, _ = io.WriteString(w, textBody(n))
	})
	var mu sync.Mutex
	done := map[string]bool{}
	http.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		id := r.URL.Query().Get("id")
		n, err := strconv.Atoi(r.URL.Query().Get("mib"))
		if err != nil || n < 1 || n > 1024 {
			http.Error(w, "mib=N, N from 1 to 1024", http.StatusBadRequest)
			return
		}
		mu.Lock()
		done[id] = false
		mu.Unlock()
		chunk := make([]byte, 64<<10)
		for i := 0; i < n*16; i++ {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
		mu.Lock()
		done[id] = true
		mu.Unlock()
	})
	http.HandleFunc("/status", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		d, ok := done[r.URL.Query().Get("id")]
		mu.Unlock()
		switch {
		case !ok:
			fmt.Fprintln(w, "unknown")
		case d:
			fmt.Fprintln(w, "done")
		default:
			fmt.Fprintln(w, "writing")
		}
	})
	http.HandleFunc("/upload", func(w http.ResponseWriter, r *http.Request) {
		n, err := io.Copy(io.Discard, r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fmt.Fprintf(w, "received %d bytes\n", n)
	})
	pod := os.Getenv("POD_NAME")
	if pod == "" {
		pod, _ = os.Hostname()
	}
	http.HandleFunc("/conn", func(w http.ResponseWriter, r *http.Request) {
		c := r.Context().Value(connKey{}).(*conn)
		fmt.Fprintf(w, "conn=%d requests=%d pod=%s\n", c.id, c.requests.Add(1), pod)
	})
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "testbackend") })
	http.HandleFunc("/pod", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, pod) })
	// /flaky answers every third request it receives with 503 (a backend
	// failing a share of requests), the others with the pod's name.
	var flaky atomic.Int64
	http.HandleFunc("/flaky", func(w http.ResponseWriter, r *http.Request) {
		if flaky.Add(1)%3 == 0 {
			http.Error(w, "flaky", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, pod)
	})
	http.HandleFunc("/ws", echoWebSocket(pod))
	(&readiness{}).handle(http.DefaultServeMux)
	if *grpcAddr != "" {
		go func() { log.Fatal(serveGRPC(context.Background(), *grpcAddr, pod)) }()
	}
	var accepted atomic.Int64
	srv := &http.Server{Addr: *addr, ConnContext: func(ctx context.Context, _ net.Conn) context.Context {
		return context.WithValue(ctx, connKey{}, &conn{id: accepted.Add(1)})
	}}
	log.Fatal(srv.ListenAndServe())
}

// textBody is the first n bytes of a text that repeats one line: what
// /text answers, and what the tests expect of it.
func textBody(n int) string {
	const line = "Gatewall's test backend writes this line again and again.\n"
	return strings.Repeat(line, n/len(line)+1)[:n]
}
