package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// What the churn harness (test/e2e/churn_test.go) needs of a backend:
// /ready answers the kubelet's readiness probe, 503 while /ready/fail?for=D
// asked it to fail; /ws echoes WebSocket messages; the gRPC service
// testbackend.Ticker's Tick sends the pod's name every tick until the
// client ends the stream.

// readiness is the /ready state: failing until the time it holds.
type readiness struct{ failUntil atomic.Int64 }

func (r *readiness) handle(mux *http.ServeMux) {
	mux.HandleFunc("/ready", func(w http.ResponseWriter, _ *http.Request) {
		if time.Now().UnixNano() < r.failUntil.Load() {
			http.Error(w, "failing on purpose", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ready")
	})
	mux.HandleFunc("/ready/fail", func(w http.ResponseWriter, req *http.Request) {
		d, err := time.ParseDuration(req.URL.Query().Get("for"))
		if err != nil {
			http.Error(w, "for=DURATION", http.StatusBadRequest)
			return
		}
		r.failUntil.Store(time.Now().Add(d).UnixNano())
		fmt.Fprintf(w, "failing for %s\n", d)
	})
}

var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

// echoWebSocket echoes every message, prefixed with the pod's name.
func echoWebSocket(pod string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c, err := upgrader.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer func() { _ = c.Close() }()
		for {
			kind, msg, err := c.ReadMessage()
			if err != nil {
				return
			}
			if err := c.WriteMessage(kind, append([]byte(pod+" "), msg...)); err != nil {
				return
			}
		}
	}
}

// tickerService is testbackend.Ticker: Tick(Empty) streams StringValue
// ticks. It is described by hand (no generated code): its messages are
// protobuf's well-known types.
var tickerService = grpc.ServiceDesc{
	ServiceName: "testbackend.Ticker",
	HandlerType: (*any)(nil),
	Streams: []grpc.StreamDesc{{
		StreamName:    "Tick",
		ServerStreams: true,
		Handler: func(srv any, stream grpc.ServerStream) error {
			if err := stream.RecvMsg(&emptypb.Empty{}); err != nil {
				return err
			}
			return srv.(*ticker).tick(stream)
		},
	}},
}

type ticker struct {
	pod   string
	every time.Duration
}

func (t *ticker) tick(stream grpc.ServerStream) error {
	for n := 0; ; n++ {
		if err := stream.SendMsg(wrapperspb.String(fmt.Sprintf("%s %d", t.pod, n))); err != nil {
			return err
		}
		select {
		case <-stream.Context().Done():
			return nil
		case <-time.After(t.every):
		}
	}
}

// serveGRPC serves the ticker on addr (cleartext HTTP/2) until ctx ends.
func serveGRPC(ctx context.Context, addr, pod string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	s := grpc.NewServer()
	s.RegisterService(&tickerService, &ticker{pod: pod, every: 500 * time.Millisecond})
	go func() { <-ctx.Done(); s.Stop() }()
	return s.Serve(l)
}
