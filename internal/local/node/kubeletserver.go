package node

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"time"

	"github.com/gatewall/gatewall/internal/local/pki"
)

// startKubeletServer serves the part of the kubelet API the API server
// proxies to: /containerLogs (kubectl logs). It listens on the node address
// inside the pod network, over TLS with a certificate from the kubelet CA,
// and accepts only clients with a certificate from that CA (the API server).
func (n *Node) startKubeletServer() error {
	nodeIP := n.network.NodeIP()
	kp, err := n.opts.KubeletCA.IssueServing(n.opts.Name, []net.IP{net.IP(nodeIP.AsSlice())}, []string{n.opts.Name})
	if err != nil {
		return fmt.Errorf("node: kubelet certificate: %w", err)
	}
	cert, err := kp.TLSCertificate()
	if err != nil {
		return fmt.Errorf("node: kubelet certificate: %w", err)
	}
	var ln net.Listener
	addr := netip.AddrPortFrom(nodeIP, uint16(n.opts.KubeletPort)).String()
	if err := n.network.InNode(func() (err error) { ln, err = net.Listen("tcp", addr); return err }); err != nil {
		return fmt.Errorf("node: kubelet endpoint on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /containerLogs/{namespace}/{pod}/{container}", n.serveContainerLogs)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	n.kubelet = &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		TLSConfig:         kubeletTLS(cert, n.opts.KubeletCA),
	}
	go func() {
		if err := n.kubelet.ServeTLS(ln, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
			n.log.Error(err, "kubelet endpoint")
		}
	}()
	return nil
}

func kubeletTLS(cert tls.Certificate, ca *pki.CA) *tls.Config {
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		ClientCAs:    ca.Pool(),
		ClientAuth:   tls.RequireAndVerifyClientCert,
		MinVersion:   tls.VersionTLS12,
	}
}

// serveContainerLogs answers like the kubelet, honouring follow, previous,
// sinceSeconds, sinceTime, timestamps, tailLines and limitBytes.
func (n *Node) serveContainerLogs(w http.ResponseWriter, r *http.Request) {
	ns, podName, name := r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("container")
	q := r.URL.Query()
	o := logOptions{timestamps: q.Get("timestamps") == "true"}
	if v := q.Get("sinceTime"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			http.Error(w, "invalid sinceTime: "+err.Error(), http.StatusBadRequest)
			return
		}
		o.since = t
	}
	if v := q.Get("sinceSeconds"); v != "" {
		s, err := strconv.Atoi(v)
		if err != nil {
			http.Error(w, "invalid sinceSeconds", http.StatusBadRequest)
			return
		}
		o.since = time.Now().Add(-time.Duration(s) * time.Second)
	}
	if v := q.Get("tailLines"); v != "" {
		o.tailLines, _ = strconv.Atoi(v)
		if o.tailLines == 0 {
			return // tailLines=0: nothing
		}
	}
	if v := q.Get("limitBytes"); v != "" {
		o.limitBytes, _ = strconv.ParseInt(v, 10, 64)
	}
	if q.Get("follow") == "true" {
		o.follow = r.Context()
	}
	src, status, msg := n.logSource(r.Context(), ns, podName, name, q.Get("previous") == "true")
	if status != http.StatusOK {
		http.Error(w, msg, status)
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	if err := readLog(src.path, o, src.done, flushWriter{w}); err != nil {
		n.log.Error(err, "serving container log", "pod", ns+"/"+podName, "container", name)
	}
}

// logSource is the log file of a container instance and when it completes.
type logSource struct {
	path string
	done <-chan struct{}
}

// logSource asks the pod's worker for the container's current (or
// previous) log.
func (n *Node) logSource(ctx context.Context, ns, podName, name string, previous bool) (logSource, int, string) {
	w := n.workerByName(ns, podName)
	if w == nil {
		return logSource{}, http.StatusNotFound, fmt.Sprintf("pod %s/%s not found on node %s", ns, podName, n.opts.Name)
	}
	type answer struct {
		src    logSource
		status int
		msg    string
	}
	reply := make(chan answer, 1)
	w.post(func() {
		for _, c := range w.containers {
			if c.spec.Name != name {
				continue
			}
			switch {
			case previous && c.previousLog == "":
				reply <- answer{status: http.StatusBadRequest, msg: fmt.Sprintf("previous terminated container %q in pod %q not found", name, podName)}
			case previous:
				reply <- answer{src: logSource{path: c.previousLog, done: closedChan()}, status: http.StatusOK}
			case c.log == nil:
				reason := "ContainerCreating"
				if c.waiting != nil {
					reason = c.waiting.Reason
				}
				reply <- answer{status: http.StatusBadRequest, msg: fmt.Sprintf("container %q in pod %q is waiting to start: %s", name, podName, reason)}
			default:
				reply <- answer{src: logSource{path: c.log.path, done: c.log.done}, status: http.StatusOK}
			}
			return
		}
		reply <- answer{status: http.StatusNotFound, msg: fmt.Sprintf("container %q not found in pod %q", name, podName)}
	})
	select {
	case a := <-reply:
		return a.src, a.status, a.msg
	case <-w.done:
		return logSource{}, http.StatusNotFound, fmt.Sprintf("pod %s/%s is gone", ns, podName)
	case <-ctx.Done():
		return logSource{}, http.StatusServiceUnavailable, "cancelled"
	}
}

func closedChan() <-chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

// flushWriter flushes after each followed entry so `kubectl logs -f` streams.
type flushWriter struct{ w http.ResponseWriter }

func (f flushWriter) Write(p []byte) (int, error) { return f.w.Write(p) }
func (f flushWriter) Flush() {
	if fl, ok := f.w.(http.Flusher); ok {
		fl.Flush()
	}
}
