package testenv

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/gatewall/gatewall/internal/localrun"
)

// MetricsReaderRole is the ClusterRole config/rbac gives scrapers of the
// manager's metrics, as the default installation names it.
const MetricsReaderRole = "gatewall-metrics-reader"

// MetricsToken returns a token of a new ServiceAccount in the manager's
// namespace, bound to MetricsReaderRole when reader; both go when the
// test ends.
func (l *Local) MetricsToken(t testing.TB, name string, reader bool) string {
	t.Helper()
	ctx := context.Background()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: localrun.ManagerNamespace, Name: name}}
	if err := l.Client.Create(ctx, sa); err != nil {
		t.Fatalf("creating ServiceAccount %s: %v", name, err)
	}
	t.Cleanup(func() { _ = l.Client.Delete(context.Background(), sa) })
	if reader {
		b := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: MetricsReaderRole},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: sa.Namespace, Name: name}},
		}
		if err := l.Client.Create(ctx, b); err != nil {
			t.Fatalf("binding %s to %s: %v", name, MetricsReaderRole, err)
		}
		t.Cleanup(func() { _ = l.Client.Delete(context.Background(), b) })
	}
	cs, err := kubernetes.NewForConfig(l.Config)
	if err != nil {
		t.Fatal(err)
	}
	if reader {
		// The manager's filter caches a denial for 30 s: ask only once
		// the API server's authorizer knows the binding.
		awaitMetricsReader(t, cs, "system:serviceaccount:"+sa.Namespace+":"+name)
	}
	tr, err := cs.CoreV1().ServiceAccounts(sa.Namespace).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("a token of %s: %v", name, err)
	}
	return tr.Status.Token
}

func awaitMetricsReader(t testing.TB, cs kubernetes.Interface, user string) {
	t.Helper()
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user, NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/metrics", Verb: "get"},
	}}
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err := cs.AuthorizationV1().SubjectAccessReviews().Create(context.Background(), sar, metav1.CreateOptions{})
		if err == nil && got.Status.Allowed {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s is not allowed to get /metrics after 30 s: %v %+v", user, err, got)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// ScrapeMetrics GETs the metrics of a manager pod (port 8080 on its
// address, which this host routes to) over HTTPS, with token as bearer
// ("" for none). The manager's certificate is self-signed: not verified.
func ScrapeMetrics(pod corev1.Pod, token string) (int, []byte, error) {
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // the manager's self-signed certificate
	}}
	req, err := http.NewRequest(http.MethodGet, "https://"+net.JoinHostPort(pod.Status.PodIP, "8080")+"/metrics", nil)
	if err != nil {
		return 0, nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}

// ManagerMetrics scrapes a manager pod with token (MetricsToken) and
// parses the answer with Prometheus' own text parser; the test fails if
// either fails.
func ManagerMetrics(t testing.TB, pod corev1.Pod, token string) map[string]*dto.MetricFamily {
	t.Helper()
	code, body, err := ScrapeMetrics(pod, token)
	if err != nil || code != http.StatusOK {
		t.Fatalf("scraping the manager's metrics: %d %v: %.200s", code, err, body)
	}
	families, err := parseMetrics(body)
	if err != nil {
		t.Fatalf("parsing the manager's metrics: %v", err)
	}
	return families
}

func parseMetrics(body []byte) (map[string]*dto.MetricFamily, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	return p.TextToMetricFamilies(bytes.NewReader(body))
}

// DataPlaneMetrics GETs a data-plane pod's metrics (plain HTTP, no
// authentication: they are NGINX's counts) from addr (host:port) and parses
// them with Prometheus' own text parser.
func DataPlaneMetrics(addr string) (map[string]*dto.MetricFamily, error) {
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: %s: %.200s", resp.Status, body)
	}
	return parseMetrics(body)
}

// Series is the value of the series of family name whose labels include
// labels, and whether there is one: a counter's, gauge's or untyped value, a
// histogram's count.
func Series(families map[string]*dto.MetricFamily, name string, labels map[string]string) (float64, bool) {
	for _, m := range families[name].GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range labels {
			match = match && have[k] == v
		}
		if !match {
			continue
		}
		switch {
		case m.GetHistogram() != nil:
			return float64(m.GetHistogram().GetSampleCount()), true
		case m.GetCounter() != nil:
			return m.GetCounter().GetValue(), true
		case m.GetGauge() != nil:
			return m.GetGauge().GetValue(), true
		}
		return m.GetUntyped().GetValue(), true
	}
	return 0, false
}

// Gauge is the value of a family's only series (a gauge or an untyped
// one), for families with one series, such as the Go runtime's.
func Gauge(t testing.TB, families map[string]*dto.MetricFamily, name string) float64 {
	t.Helper()
	f := families[name]
	if f == nil || len(f.GetMetric()) != 1 {
		t.Fatalf("the manager's metrics have no single series %s", name)
	}
	m := f.GetMetric()[0]
	if g := m.GetGauge(); g != nil {
		return g.GetValue()
	}
	return m.GetUntyped().GetValue()
}
