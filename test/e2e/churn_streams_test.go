package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// stream is a long-lived connection through the Gateway (a WebSocket or a
// gRPC stream) that checks, every 500 ms, that its backend still answers.
type stream struct {
	kind, pod string
	opened    time.Time

	mu     sync.Mutex
	closed time.Time
	why    string
	cancel func()
}

func (s *stream) end(why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.IsZero() {
		s.closed, s.why = time.Now(), why
	}
}

// state says whether the stream is open, and when and why it ended.
func (s *stream) state() (open bool, closed time.Time, why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed.IsZero(), s.closed, s.why
}

// openWebSocket opens a WebSocket to /ws through addr and keeps it busy.
func openWebSocket(addr, host string) (*stream, error) {
	d := websocket.Dialer{NetDial: func(string, string) (net.Conn, error) { return net.DialTimeout("tcp", addr, 5*time.Second) },
		HandshakeTimeout: 5 * time.Second}
	c, _, err := d.Dial("ws://"+host+"/ws", http.Header{})
	if err != nil {
		return nil, err
	}
	if err := c.WriteMessage(websocket.TextMessage, []byte("hello")); err != nil {
		_ = c.Close()
		return nil, err
	}
	_, msg, err := c.ReadMessage()
	if err != nil {
		_ = c.Close()
		return nil, err
	}
	pod, _, _ := strings.Cut(string(msg), " ")
	s := &stream{kind: "websocket", pod: pod, opened: time.Now()}
	stop := make(chan struct{})
	s.cancel = func() { close(stop); _ = c.Close() }
	go func() {
		for n := 0; ; n++ {
			select {
			case <-stop:
				s.end("closed by the test")
				return
			case <-time.After(500 * time.Millisecond):
			}
			_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
			if err := c.WriteMessage(websocket.TextMessage, []byte(fmt.Sprint(n))); err != nil {
				s.end(err.Error())
				return
			}
			if _, msg, err := c.ReadMessage(); err != nil || !strings.HasPrefix(string(msg), pod+" ") {
				s.end(fmt.Sprintf("%q %v", msg, err))
				return
			}
		}
	}()
	return s, nil
}

// openGRPCStream opens the backend's Tick stream through addr (h2c) and
// reads its ticks.
func openGRPCStream(addr, host string) (*stream, error) {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithAuthority(host))
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	st, err := conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true}, "/testbackend.Ticker/Tick")
	if err == nil {
		err = st.SendMsg(&emptypb.Empty{})
	}
	if err == nil {
		err = st.CloseSend()
	}
	first := &wrapperspb.StringValue{}
	if err == nil {
		err = st.RecvMsg(first)
	}
	if err != nil {
		cancel()
		_ = conn.Close()
		return nil, err
	}
	pod, _, _ := strings.Cut(first.Value, " ")
	s := &stream{kind: "grpc", pod: pod, opened: time.Now(), cancel: func() { cancel(); _ = conn.Close() }}
	go func() {
		for {
			tick := &wrapperspb.StringValue{}
			if err := st.RecvMsg(tick); err != nil {
				s.end(err.Error())
				return
			}
			if !strings.HasPrefix(tick.Value, pod+" ") {
				s.end("a tick from another pod: " + tick.Value)
				return
			}
		}
	}()
	return s, nil
}

// openStreams opens n streams of each kind served by pods whose names
// start with podPrefix (others are closed: their pods will be replaced).
func openStreams(t *testing.T, addr, host, grpcHost, podPrefix string, n int) []*stream {
	t.Helper()
	var out []*stream
	for _, open := range []func() (*stream, error){
		func() (*stream, error) { return openWebSocket(addr, host) },
		func() (*stream, error) { return openGRPCStream(addr, grpcHost) },
	} {
		got := 0
		for tries := 0; got < n; tries++ {
			if tries > 20*n {
				t.Fatalf("opened %d of %d streams on %s* pods", got, n, podPrefix)
			}
			s, err := open()
			if err != nil {
				t.Fatalf("opening a stream: %v", err)
			}
			if !strings.HasPrefix(s.pod, podPrefix) {
				s.cancel()
				continue
			}
			got++
			out = append(out, s)
		}
	}
	t.Cleanup(func() {
		for _, s := range out {
			s.cancel()
		}
	})
	return out
}

// openCount counts the streams still open.
func openCount(streams []*stream) (open int, ended []string) {
	for _, s := range streams {
		if ok, at, why := s.state(); ok {
			open++
		} else {
			ended = append(ended, fmt.Sprintf("%s to %s at %s: %s", s.kind, s.pod, at.Format("15:04:05.000"), why))
		}
	}
	return open, ended
}
