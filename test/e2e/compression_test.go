package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
)

// TestCompressionAndAccessLog: a Gateway whose own NginxProxy sets
// compression (gzip of text/plain and application/json responses of 1,024
// bytes or more) and an access log format of its own (a literal marker and
// a few variables), served by a data-plane pod on the local runtime.
// Through the load balancer, a large text/plain response to a client that
// accepts gzip comes back gzip-encoded and decodes to the backend's body; a
// small one, one of a type not listed and one to a client that does not
// accept gzip come back as the backend wrote them. The NGINX container's
// log, read through the API server, has one line in exactly that format for
// each request (a marker of its own in the path; gzipped ones with fewer
// bytes sent than the body) and none in NGINX's default format. Turning
// compression off (and changing the format) is a configuration change that
// Gatewall pushes through the agent, which reloads NGINX: neither field is
// in the pod template, so the data plane follows with the same pods, not
// restarted, and the Deployment's template unchanged.
func TestCompressionAndAccessLog(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t, "e2e-compression")
	gatewayClass(t)
	np := &v1alpha2.NginxProxy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gw"}, Spec: v1alpha2.NginxProxySpec{
		Compression: &v1alpha2.Compression{
			Type: v1alpha2.GzipCompressionType, Gzip: &v1alpha2.GzipSettings{Vary: ptr.To(true)},
			MinLength: ptr.To(int32(1024)), MimeTypes: []string{"text/plain", "application/json"},
		},
		Logging: &v1alpha2.NginxLogging{AccessLog: &v1alpha2.NginxAccessLog{Format: ptr.To(firstLogFormat)}},
	}}
	create(t, np, gatewayWithProxy(ns, "gw", "gw"))
	create(t, testBackend(t, ns, "backend")...)
	create(t, httpRoute(ns, "text", "gw", "text.example.com", "/", "backend"))
	addr := programmedAddress(t, types.NamespacedName{Namespace: ns, Name: "gw"}, 120*time.Second)
	serves(t, addr, "text.example.com", "/", 200, "testbackend", 60*time.Second)
	run := strconv.FormatInt(time.Now().UnixNano(), 36)

	cases := []textCase{
		{name: "large text/plain, gzip accepted", bytes: 65536, typ: "text/plain", acceptGzip: true, gzipped: true},
		{name: "large application/json, gzip accepted", bytes: 4096, typ: "application/json", acceptGzip: true, gzipped: true},
		{name: "under the minimum length", bytes: 512, typ: "text/plain", acceptGzip: true},
		{name: "a type not listed", bytes: 65536, typ: "text/csv", acceptGzip: true},
		{name: "gzip not accepted", bytes: 65536, typ: "text/plain"},
	}
	var sent []loggedRequest
	t.Run("compression", func(t *testing.T) {
		for i, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				marker := fmt.Sprintf("m-%s-on-%d", run, i)
				sent = append(sent, c.check(t, addr, marker))
			})
		}
	})
	t.Run("the access log has the format's lines only", func(t *testing.T) {
		accessLogged(t, ns, firstLogLine, sent)
	})

	pods := dataPlaneState(t, ns)
	t.Run("compression off and another format, without restarting the pods", func(t *testing.T) {
		start := time.Now()
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			p := &v1alpha2.NginxProxy{}
			if err := rt.Client.Get(ctx, client.ObjectKeyFromObject(np), p); err != nil {
				return err
			}
			p.Spec.Compression = nil
			p.Spec.Logging.AccessLog.Format = ptr.To(secondLogFormat)
			return rt.Client.Update(ctx, p)
		}); err != nil {
			t.Fatal(err)
		}
		off := textCase{bytes: 65536, typ: "text/plain", acceptGzip: true}
		i := 0
		eventually(t, 60*time.Second, func() error {
			i++
			x, err := off.fetch(addr, fmt.Sprintf("m-%s-waiting-%d", run, i))
			if err != nil {
				return err
			}
			if x.encoding != "" {
				return fmt.Errorf("still %s-encoded", x.encoding)
			}
			return nil
		})
		t.Logf("the data plane answered uncompressed %s after the NginxProxy's update", time.Since(start).Round(10*time.Millisecond))
		var after []loggedRequest
		for i, c := range cases {
			c.gzipped = false
			after = append(after, c.check(t, addr, fmt.Sprintf("m-%s-off-%d", run, i)))
		}
		accessLogged(t, ns, secondLogLine, after)
		// The pod template would have changed at once, with the
		// NginxProxy; a rollout would have replaced the pods by now.
		if now := dataPlaneState(t, ns); now != pods {
			t.Errorf("the data plane changed with the NginxProxy: before %s, after %s; want the same pods, not restarted, and the same template", pods, now)
		}
	})
}

// The access log formats of TestCompressionAndAccessLog: a literal marker
// and allow-listed variables, and what a line of each is for a request.
const (
	firstLogFormat  = `gatewall-e2e-log client=$remote_addr request="$request" status=$status bytes=$body_bytes_sent type=$sent_http_content_type`
	secondLogFormat = `gatewall-e2e-log2 $request_method $request_uri $status $body_bytes_sent`
)

var (
	firstLogLine  = regexp.MustCompile(`^gatewall-e2e-log client=\d+\.\d+\.\d+\.\d+ request="GET (\S+) HTTP/1\.1" status=(\d+) bytes=(\d+) type=\S+$`)
	secondLogLine = regexp.MustCompile(`^gatewall-e2e-log2 GET (\S+) (\d+) (\d+)$`)
	// defaultLogLine is a line of NGINX's combined format.
	defaultLogLine = regexp.MustCompile(`^\S+ - \S+ \[[^]]+\] "[A-Z]+ \S+ HTTP/[0-9.]+" \d{3} \d+ "`)
	// errorLogLine is a line of NGINX's error log, which names a request
	// when it logs about one.
	errorLogLine = regexp.MustCompile(`^\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2} \[[a-z]+\] `)
)

// textCase is a request for testbackend's /text.
type textCase struct {
	name       string
	bytes      int
	typ        string
	acceptGzip bool
	gzipped    bool // the answer is expected gzip-encoded
}

type textAnswer struct {
	status   int
	encoding string
	body     []byte
}

func (c textCase) path(marker string) string {
	return fmt.Sprintf("/text?bytes=%d&type=%s&m=%s", c.bytes, c.typ, marker)
}

// fetch sends the request, with marker in its path, through the load
// balancer at addr, and returns the answer as sent (not decompressed).
func (c textCase) fetch(addr, marker string) (textAnswer, error) {
	req, err := http.NewRequest(http.MethodGet, "http://"+addr+c.path(marker), nil)
	if err != nil {
		return textAnswer{}, err
	}
	req.Host = "text.example.com"
	if c.acceptGzip {
		req.Header.Set("Accept-Encoding", "gzip")
	}
	// DisableCompression: Go's client neither asks for gzip nor decodes
	// it; the test does both itself.
	cl := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableCompression: true, DisableKeepAlives: true}}
	resp, err := cl.Do(req)
	if err != nil {
		return textAnswer{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return textAnswer{status: resp.StatusCode, encoding: resp.Header.Get("Content-Encoding"), body: body}, err
}

// check sends the request and checks its answer: 200, gzip-encoded or not
// as expected, and the backend's body once decoded. It returns what the
// access log should say of it.
func (c textCase) check(t *testing.T, addr, marker string) loggedRequest {
	t.Helper()
	x, err := c.fetch(addr, marker)
	if err != nil {
		t.Fatal(err)
	}
	want := expectedText(c.bytes)
	body := x.body
	switch {
	case x.status != 200:
		t.Fatalf("%s: %d %s", c.path(marker), x.status, trunc(string(body)))
	case c.gzipped && x.encoding != "gzip":
		t.Errorf("%s: Content-Encoding %q; want gzip", c.path(marker), x.encoding)
	case !c.gzipped && x.encoding != "":
		t.Errorf("%s: Content-Encoding %q; want none", c.path(marker), x.encoding)
	case c.gzipped:
		if len(body) >= c.bytes {
			t.Errorf("%s: %d bytes gzipped of %d", c.path(marker), len(body), c.bytes)
		}
		r, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			t.Fatalf("%s: %v", c.path(marker), err)
		}
		if body, err = io.ReadAll(r); err != nil {
			t.Fatalf("%s: decoding: %v", c.path(marker), err)
		}
	}
	if string(body) != want {
		t.Errorf("%s: the client read %d bytes (%q…), not the backend's %d", c.path(marker), len(body), trunc(string(body)), c.bytes)
	}
	return loggedRequest{path: c.path(marker), marker: marker, bytes: c.bytes, gzipped: x.encoding == "gzip"}
}

// expectedText is testbackend's textBody (test/e2e/testbackend).
func expectedText(n int) string {
	const line = "Gatewall's test backend writes this line again and again.\n"
	return strings.Repeat(line, n/len(line)+1)[:n]
}

// loggedRequest is what the access log should say of one request: its
// path, with a marker no other request has, and the body bytes NGINX sent:
// the backend's when not gzipped, fewer when gzipped (the compressed body
// and its chunks' framing, which the client does not see).
type loggedRequest struct {
	path, marker string
	bytes        int
	gzipped      bool
}

// sentRight says whether sent is the body bytes NGINX should log for r.
func (r loggedRequest) sentRight(sent string) bool {
	n, err := strconv.Atoi(sent)
	if err != nil {
		return false
	}
	if r.gzipped {
		return n > 0 && n < r.bytes
	}
	return n == r.bytes
}

// accessLogged waits until the NGINX container's log of the Gateway gw's
// pods has, for each request, one line of the format (format's groups: the
// request's path, status and body bytes sent) saying what was sent, and
// fails for any line of NGINX's default format, or of no format, that
// names one of the requests' markers.
func accessLogged(t *testing.T, ns string, format *regexp.Regexp, sent []loggedRequest) {
	t.Helper()
	var lines []string
	eventually(t, 30*time.Second, func() error {
		lines = dataPlaneLog(t, ns)
		for _, r := range sent {
			if n := countMatching(lines, format, r.path); n != 1 {
				return fmt.Errorf("%d lines of the format for %s", n, r.path)
			}
		}
		return nil
	})
	for _, r := range sent {
		for _, l := range lines {
			if !strings.Contains(l, r.marker) {
				continue
			}
			m := format.FindStringSubmatch(l)
			switch {
			case defaultLogLine.MatchString(l):
				t.Errorf("a line of NGINX's default format for %s: %s", r.path, l)
			case m != nil && (m[1] != r.path || m[2] != "200" || !r.sentRight(m[3])):
				t.Errorf("the log line %q says %s %s %s bytes; want %s 200, %d bytes (gzipped: %v, then fewer)", l, m[1], m[2], m[3], r.path, r.bytes, r.gzipped)
			case m == nil && !errorLogLine.MatchString(l):
				t.Errorf("a line of no format for %s: %s", r.path, l)
			}
		}
	}
}

func countMatching(lines []string, format *regexp.Regexp, path string) int {
	n := 0
	for _, l := range lines {
		if m := format.FindStringSubmatch(l); m != nil && m[1] == path {
			n++
		}
	}
	return n
}

// dataPlaneLog is the log of the NGINX container (the pods' first) of
// every data-plane pod of the Gateway gw in ns, through the API server.
func dataPlaneLog(t *testing.T, ns string) []string {
	t.Helper()
	var lines []string
	for _, p := range gatewayPods(t, ns) {
		if p.Spec.Containers[0].Name != "nginx" {
			t.Fatalf("pod %s's first container is %s, not nginx", p.Name, p.Spec.Containers[0].Name)
		}
		l, err := rt.PodLog(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, l...)
	}
	return lines
}

// dataPlaneState names the Gateway gw's data-plane pods (with their
// containers' restarts) and its Deployment's generation: what a rollout or
// a restart changes.
func dataPlaneState(t *testing.T, ns string) string {
	t.Helper()
	var names []string
	for _, p := range gatewayPods(t, ns) {
		restarts := int32(0)
		for _, c := range p.Status.ContainerStatuses {
			restarts += c.RestartCount
		}
		names = append(names, fmt.Sprintf("%s (uid %s, %d restarts)", p.Name, p.UID, restarts))
	}
	slices.Sort(names)
	d := &appsv1.Deployment{}
	if err := rt.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "gw-nginx"}, d); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("pods %s, Deployment generation %d", strings.Join(names, ", "), d.Generation)
}
