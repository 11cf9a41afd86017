package render_test

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"regexp"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/internal/render"
	"github.com/gatewall/gatewall/internal/syntax"
	"github.com/gatewall/gatewall/internal/validation"
	"github.com/gatewall/gatewall/test/confcheck"
	"github.com/gatewall/gatewall/test/nginxtest"
	"github.com/gatewall/gatewall/test/valuecheck"
)

var (
	valuesCount = flag.Int("values.count", 64, "generated header values and regexes TestValuesAreCarriedOrRefused checks beside its fixed ones")
	valuesSeed  = flag.Uint64("values.seed", 1, "seed of TestValuesAreCarriedOrRefused's generated values")
)

// Every value a user gives for a header or a regular expression is either
// refused, with a message saying why, or carried: NGINX reads back exactly
// the value, with the allow-listed variables (and only those) read as
// variables. Each value is given in every place a header value or a regex
// reaches nginx.conf (valueRoutes), and the rendered files are read as
// NGINX reads them (confcheck.Parse, valuecheck.Interpolate) and compared
// with what the user asked for (valuecheck.Expand).

// valueRule is one rule of a value's routes: where it puts the value, and
// which check of package validation decides whether it is refused.
type valueRule struct {
	path  string
	check func(string) error
	// text says the rule writes the value as header text, where only
	// '"', '\' and '$' make it longer.
	text bool
}

func headerCheck(v string) error { return validation.HeaderValue(v) }

// valueRules are the HTTPRoute's rules, in order; the GRPCRoute has a
// header rule (/grpc) and a method regex rule.
var valueRules = []valueRule{
	{"/set", headerCheck, true},     // request and response headers set
	{"/add", headerCheck, true},     // request and response headers added
	{"/backend", headerCheck, true}, // a backendRef's request header
	{"/compose", headerCheck, true}, // the rule's value then the backendRef's, joined
	{"/split", headerCheck, true},   // two backendRefs' values, in maps of the drawn backend
	{"/match", headerCheck, false},  // an exact header match
	{"/regex", validation.HeaderValueRegex, false},
	{"(path regex)", validation.RegexPath, false},
}

// grpcRules are the GRPCRoute's rules, in order. An empty service is
// unset: the rule matches any service.
var grpcRules = []valueRule{
	{"/grpc", headerCheck, true},
	{"(gRPC service)", func(v string) error {
		if v == "" {
			return nil
		}
		return validation.GRPCRegex("service", v)
	}, false},
}

// valueRoutes are value v's routes: HTTPRoute v<i> and GRPCRoute g<i>.
func valueRoutes(i int, v string) []any {
	parent := gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw"}}}
	ref := func(svc string, filters ...gatewayv1.HTTPRouteFilter) gatewayv1.HTTPBackendRef {
		return gatewayv1.HTTPBackendRef{Filters: filters, BackendRef: gatewayv1.BackendRef{Weight: ptr.To[int32](1),
			BackendObjectReference: gatewayv1.BackendObjectReference{Name: gatewayv1.ObjectName(svc), Port: ptr.To[gatewayv1.PortNumber](80)}}}
	}
	request := func(m gatewayv1.HTTPHeaderFilter) gatewayv1.HTTPRouteFilter {
		return gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterRequestHeaderModifier, RequestHeaderModifier: &m}
	}
	response := func(m gatewayv1.HTTPHeaderFilter) gatewayv1.HTTPRouteFilter {
		return gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterResponseHeaderModifier, ResponseHeaderModifier: &m}
	}
	header := func(name string) []gatewayv1.HTTPHeader {
		return []gatewayv1.HTTPHeader{{Name: gatewayv1.HTTPHeaderName(name), Value: v}}
	}
	prefix := func(p string) []gatewayv1.HTTPRouteMatch {
		return []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{Type: ptr.To(gatewayv1.PathMatchPathPrefix), Value: ptr.To(p)}}}
	}
	match := prefix("/match")
	match[0].Headers = []gatewayv1.HTTPHeaderMatch{{Name: "X-M", Value: v}}
	regex := prefix("/regex")
	regex[0].Headers = []gatewayv1.HTTPHeaderMatch{{Name: "X-M", Type: ptr.To(gatewayv1.HeaderMatchRegularExpression), Value: v}}
	rules := []gatewayv1.HTTPRouteRule{
		{Matches: prefix("/set"), BackendRefs: []gatewayv1.HTTPBackendRef{ref("app")},
			Filters: []gatewayv1.HTTPRouteFilter{request(gatewayv1.HTTPHeaderFilter{Set: header("X-V")}), response(gatewayv1.HTTPHeaderFilter{Set: header("X-R")})}},
		{Matches: prefix("/add"), BackendRefs: []gatewayv1.HTTPBackendRef{ref("app")},
			Filters: []gatewayv1.HTTPRouteFilter{request(gatewayv1.HTTPHeaderFilter{Add: header("X-A")}), response(gatewayv1.HTTPHeaderFilter{Add: header("X-RA")})}},
		{Matches: prefix("/backend"), BackendRefs: []gatewayv1.HTTPBackendRef{ref("app", request(gatewayv1.HTTPHeaderFilter{Set: header("X-B")}))}},
		{Matches: prefix("/compose"), BackendRefs: []gatewayv1.HTTPBackendRef{ref("app", request(gatewayv1.HTTPHeaderFilter{Add: header("X-C")}))},
			Filters: []gatewayv1.HTTPRouteFilter{request(gatewayv1.HTTPHeaderFilter{Set: []gatewayv1.HTTPHeader{{Name: "X-C", Value: "r"}}})}},
		{Matches: prefix("/split"), BackendRefs: []gatewayv1.HTTPBackendRef{
			ref("app", request(gatewayv1.HTTPHeaderFilter{Set: header("X-P")})), ref("app2", request(gatewayv1.HTTPHeaderFilter{Add: header("X-P")}))}},
		{Matches: match, BackendRefs: []gatewayv1.HTTPBackendRef{ref("app")}},
		{Matches: regex, BackendRefs: []gatewayv1.HTTPBackendRef{ref("app")}},
		{Matches: []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{Type: ptr.To(gatewayv1.PathMatchRegularExpression), Value: ptr.To(v)}}},
			BackendRefs: []gatewayv1.HTTPBackendRef{ref("app")}},
	}
	grpcRef := []gatewayv1.GRPCBackendRef{{BackendRef: gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{
		Name: "grpc", Port: ptr.To[gatewayv1.PortNumber](80)}}}}
	return []any{
		&gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("v%d", i)}, Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: parent, Hostnames: []gatewayv1.Hostname{gatewayv1.Hostname(fmt.Sprintf("v%d.example.com", i))}, Rules: rules}},
		&gatewayv1.GRPCRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("g%d", i)}, Spec: gatewayv1.GRPCRouteSpec{
			CommonRouteSpec: parent, Hostnames: []gatewayv1.Hostname{gatewayv1.Hostname(fmt.Sprintf("g%d.example.com", i))},
			Rules: []gatewayv1.GRPCRouteRule{
				{BackendRefs: grpcRef, Filters: []gatewayv1.GRPCRouteFilter{
					{Type: gatewayv1.GRPCRouteFilterRequestHeaderModifier, RequestHeaderModifier: &gatewayv1.HTTPHeaderFilter{Set: header("X-G")}},
					{Type: gatewayv1.GRPCRouteFilterResponseHeaderModifier, ResponseHeaderModifier: &gatewayv1.HTTPHeaderFilter{Set: header("X-GR")}}}},
				{BackendRefs: grpcRef, Matches: []gatewayv1.GRPCRouteMatch{{Method: &gatewayv1.GRPCMethodMatch{
					Type: ptr.To(gatewayv1.GRPCMethodMatchRegularExpression), Service: ptr.To(v), Method: ptr.To("M")}}}},
			}}},
	}
}

var valuesGateway = types.NamespacedName{Namespace: "ns", Name: "gw"}

// valuesInput is a Gateway with the routes of each value.
func valuesInput(values []string) *graph.Input {
	in := graph.NewInput(graph.DefaultControllerName)
	in.Add(&gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Spec: gatewayv1.GatewayClassSpec{ControllerName: graph.DefaultControllerName}})
	in.Add(&gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "gw"}, Spec: gatewayv1.GatewaySpec{GatewayClassName: "c",
		Listeners: []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}}}})
	for i, svc := range []string{"app", "app2", "grpc"} {
		port := corev1.ServicePort{Name: "http", Port: 80}
		if svc == "grpc" {
			port.AppProtocol = ptr.To("kubernetes.io/h2c")
		}
		in.Add(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: svc}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{port}}})
		in.Add(&discoveryv1.EndpointSlice{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: svc + "-1", Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
			Ports:      []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080)}},
			Endpoints:  []discoveryv1.Endpoint{{Addresses: []string{fmt.Sprintf("10.0.0.%d", i+1)}}},
		})
	}
	for i, v := range values {
		for _, o := range valueRoutes(i, v) {
			in.Add(o)
		}
	}
	return in
}

// conf is a configuration read as NGINX reads it: maps by variable,
// locations by server name, modifier and path, servers by name.
type conf struct {
	maps      map[string]*confcheck.Directive
	locations map[string]*confcheck.Directive
	servers   map[string]*confcheck.Directive
}

func readConf(t testing.TB, files []config.File) *conf {
	t.Helper()
	c := &conf{maps: map[string]*confcheck.Directive{}, locations: map[string]*confcheck.Directive{}, servers: map[string]*confcheck.Directive{}}
	var walk func(ds []*confcheck.Directive, server string)
	walk = func(ds []*confcheck.Directive, server string) {
		for _, d := range ds {
			switch d.Name {
			case "map":
				c.maps[d.Args[1].Value] = d
			case "server":
				name := ""
				for _, sd := range d.Block {
					if sd.Name == "server_name" {
						name = sd.Args[0].Value
					}
				}
				c.servers[name] = d
				walk(d.Block, name)
			case "location":
				words := make([]string, len(d.Args))
				for i, a := range d.Args {
					words[i] = a.Value
				}
				if len(words) == 1 {
					words = append([]string{""}, words...)
				}
				c.locations[server+" "+strings.Join(words, " ")] = d
			}
		}
	}
	for _, f := range files {
		if !strings.HasSuffix(f.Path, ".conf") {
			continue
		}
		ds, err := confcheck.Parse(f.Path, f.Data)
		if err != nil {
			t.Fatalf("%s: %v", f.Path, err)
		}
		walk(ds, "")
	}
	return c
}

// placeholder is what the checks give a variable a value may read.
func placeholder(name string) string { return "<" + name + ">" }

// readValue is what NGINX makes of a header value's argument: the value
// interpolated, or, for a map's variable, each value the map can give
// (the renderer's own maps of added headers and of drawn backends). A
// variable may only be the literal '$', an allow-listed one, or the
// request's own header (an added header's).
func (c *conf) readValue(arg string) ([]string, error) {
	if strings.HasPrefix(arg, "$gw_") && !strings.ContainsAny(arg[1:], "${}") {
		m := c.maps[arg]
		if m == nil {
			return nil, fmt.Errorf("%s is no map", arg)
		}
		var out []string
		for _, e := range m.Block {
			vs, err := c.readValue(e.Args[0].Value)
			if err != nil {
				return nil, err
			}
			out = append(out, vs...)
		}
		return out, nil
	}
	v, err := valuecheck.Interpolate(arg, func(name string) (string, bool) {
		switch {
		case name == syntax.DollarVariable:
			return "$", true
		case syntax.ValueVariable(name), strings.HasPrefix(name, "http_x_"):
			return placeholder(name), true
		}
		return "", false
	})
	return []string{v}, err
}

// directive is the first directive of a location with these first arguments.
func directive(loc *confcheck.Directive, name string, args ...string) *confcheck.Directive {
	for _, d := range loc.Block {
		if d.Name != name || len(d.Args) < len(args) {
			continue
		}
		match := true
		for i, a := range args {
			match = match && d.Args[i].Value == a
		}
		if match {
			return d
		}
	}
	return nil
}

// valueOutcome is what became of one value in one rule.
type valueOutcome struct{ carried, refused int }

// checkValues renders a Gateway with each value's routes and checks that
// each rule is either refused with validation's reason (or NGINX's token
// limit) or carried exactly. It returns the Gateway's files (nil when
// every rule of every value was refused) and counts the outcomes.
func checkValues(t testing.TB, values []string, out *valueOutcome) []config.File {
	t.Helper()
	in := valuesInput(values)
	res := render.Render(in, goldenTime)
	files := res.Files[valuesGateway]
	g := graph.Build(in, valuesGateway)
	if g == nil || !g.Valid || files == nil {
		t.Fatalf("the Gateway was not rendered")
	}
	if err := confcheck.Check(files); err != nil {
		t.Fatalf("values %q: %v", values, err)
	}
	c := readConf(t, files)
	routes := map[string]*graph.Route{}
	for _, r := range g.Routes {
		routes[r.Key.Name] = r
	}
	for i, v := range values {
		http, grpc := routes[fmt.Sprintf("v%d", i)], routes[fmt.Sprintf("g%d", i)]
		if http == nil || grpc == nil {
			t.Fatalf("value %q: the routes are not in the graph", v)
		}
		host, ghost := fmt.Sprintf("v%d.example.com", i), fmt.Sprintf("g%d.example.com", i)
		rules := append(append([]*graph.Rule(nil), http.Rules...), grpc.Rules...)
		checks := append(append([]valueRule(nil), valueRules...), grpcRules...)
		if len(rules) != len(checks) {
			t.Fatalf("value %q: %d rules, want %d", v, len(rules), len(checks))
		}
		for j, rule := range rules {
			where := checks[j].path
			if why := refusal(v, rule, checks[j]); why != "" {
				t.Errorf("value %q, rule %s: %s", v, where, why)
				continue
			}
			if !rule.Valid {
				out.refused++
				continue
			}
			out.carried++
			if err := c.carries(where, host, ghost, v); err != nil {
				t.Errorf("value %q, rule %s: %v", v, where, err)
			}
		}
	}
	return files
}

// tokenRefusal is the message of a value whose written form is longer
// than NGINX reads in one token (package syntax).
var tokenRefusal = regexp.MustCompile(`takes [0-9]+ bytes in NGINX's configuration, more than the 4093`)

// refusal says what is wrong with a rule's refusal, or acceptance, of v:
// a value validation refuses must be refused with its message; one it
// accepts may only be refused for NGINX's token limit, when written it is
// longer than the value can be without escapes.
func refusal(v string, rule *graph.Rule, check valueRule) string {
	err := check.check(v)
	switch {
	case err != nil && rule.Valid:
		return fmt.Sprintf("carried, but validation refuses it: %v", err)
	case err != nil && !strings.Contains(rule.Err, err.Error()):
		return fmt.Sprintf("refused with %q, which does not say %q", rule.Err, err)
	case err == nil && !rule.Valid && !tokenRefusal.MatchString(rule.Err):
		return fmt.Sprintf("refused: %s", rule.Err)
	case err == nil && !rule.Valid && check.text && len(v)+len("r,$http_x_a,") < syntax.MaxToken && !strings.ContainsAny(v, `"\$`):
		return fmt.Sprintf("refused as too long, but it is %d bytes and needs no escape: %s", len(v), rule.Err)
	}
	return ""
}

// carries checks that the configuration holds value v where rule where
// puts it, as NGINX reads it.
func (c *conf) carries(where, host, ghost, v string) error {
	want := valuecheck.Expand(v, func(s string) string { return s }, placeholder)
	if where != "/regex" && !strings.HasPrefix(where, "(") && strings.IndexFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0 {
		return fmt.Errorf("a control character is carried into a header, which HTTP forbids (CR and LF end it)")
	}
	locs := func(h, p string) []*confcheck.Directive {
		return []*confcheck.Directive{c.locations[h+" = "+p], c.locations[h+"  "+p+"/"]}
	}
	// same checks that the directive's value reads as each of wants.
	same := func(d *confcheck.Directive, arg int, wants ...string) error {
		if d == nil {
			return fmt.Errorf("no directive carries it")
		}
		got, err := c.readValue(d.Args[arg].Value)
		if err != nil {
			return fmt.Errorf("%s: %w", d, err)
		}
		sort.Strings(got)
		sort.Strings(wants)
		if strings.Join(got, "\x00") != strings.Join(wants, "\x00") {
			return fmt.Errorf("%s: NGINX reads %q, want %q", d, got, wants)
		}
		return nil
	}
	var errs []error
	for _, loc := range locs(host, where) {
		if !strings.HasPrefix(where, "/") || where == "/grpc" {
			break
		}
		if loc == nil {
			return fmt.Errorf("no location %s", where)
		}
		switch where {
		case "/set":
			errs = append(errs, same(directive(loc, "proxy_set_header", "X-V"), 1, want), same(directive(loc, "add_header", "X-R"), 1, want))
		case "/add":
			errs = append(errs, same(directive(loc, "proxy_set_header", "X-A"), 1, want, placeholder("http_x_a")+","+want),
				same(directive(loc, "add_header", "X-RA"), 1, want))
		case "/backend":
			errs = append(errs, same(directive(loc, "proxy_set_header", "X-B"), 1, want))
		case "/compose":
			errs = append(errs, same(directive(loc, "proxy_set_header", "X-C"), 1, "r,"+want))
		case "/split":
			errs = append(errs, same(directive(loc, "proxy_set_header", "X-P"), 1, "", want, want, placeholder("http_x_p")+","+want))
		}
	}
	switch where {
	case "/match", "/regex":
		key := "~^" + regexp.QuoteMeta(v) + "$"
		if where == "/regex" {
			key = "~" + v
		}
		if !c.hasConditionKey("$http_x_m", key) {
			errs = append(errs, fmt.Errorf("no condition on X-M reads %q", key))
		}
	case "(path regex)":
		if c.locations[host+" ~ "+v] == nil {
			errs = append(errs, fmt.Errorf("no location ~ %q", v))
		}
	case "/grpc":
		loc := c.locations[ghost+"  /"]
		if loc == nil {
			return fmt.Errorf("no location / on %s", ghost)
		}
		errs = append(errs, same(directive(loc, "grpc_set_header", "X-G"), 1, want), same(directive(loc, "add_header", "X-GR"), 1, want))
	case "(gRPC service)":
		p := "^/(" + v + ")/(M)$"
		if v == "" {
			p = "^/[^/]+/(M)$"
		}
		if c.locations[ghost+" ~ "+p] == nil {
			errs = append(errs, fmt.Errorf("no location ~ %q", p))
		}
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// hasConditionKey says whether a condition map on source reads key as a key.
func (c *conf) hasConditionKey(source, key string) bool {
	for _, m := range c.maps {
		if m.Args[0].Value != source {
			continue
		}
		for _, e := range m.Block {
			if e.Name == key && e.Args[0].Value == "1" {
				return true
			}
		}
	}
	return false
}

// serverShape is the names of a server's directives, nested, without
// their arguments, its blocks sorted (internal locations are ordered by
// names that differ from value to value): a value that added a directive
// or ended a block would change it. "" for no server.
func serverShape(d *confcheck.Directive) string {
	if d == nil {
		return ""
	}
	var shape func(d *confcheck.Directive) string
	shape = func(d *confcheck.Directive) string {
		if d.Block == nil {
			return d.Name + ";"
		}
		var inner []string
		for _, sub := range d.Block {
			inner = append(inner, shape(sub))
		}
		sort.Strings(inner)
		return d.Name + "{" + strings.Join(inner, "") + "}"
	}
	return shape(d)
}

// TestValuesAreCarriedOrRefused gives every value of the corpus (fixed
// attacks and values users write, then -values.count generated ones) in
// every place a header value or a regex reaches nginx.conf, and checks
// that each is refused with validation's reason or carried exactly
// (checkValues), that a value carried everywhere gives its servers the
// shape a plain value gives them (no directive added, no block ended),
// and that real `nginx -t` accepts every configuration.
func TestValuesAreCarriedOrRefused(t *testing.T) {
	if err := nginxtest.Available(); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(*valuesSeed, 2))
	values := append(valuecheck.Values(r, *valuesCount), valuecheck.Regexes(r, *valuesCount)...)
	base := readConf(t, checkValues(t, []string{"v"}, &valueOutcome{}))
	const perGateway = 32
	var configs [][]config.File
	var out valueOutcome
	shaped := 0
	for start := 0; start < len(values); start += perGateway {
		batch := values[start:min(start+perGateway, len(values))]
		files := checkValues(t, batch, &out)
		configs = append(configs, files)
		c := readConf(t, files)
		for i := range batch {
			for _, host := range []string{"v%d.example.com", "g%d.example.com"} {
				h := fmt.Sprintf(host, i)
				want := serverShape(base.servers[fmt.Sprintf(host, 0)])
				if got := serverShape(c.servers[h]); got == want {
					shaped++
				} else if everyRuleCarried(t, batch[i]) {
					t.Errorf("value %q: server %s has another shape than a plain value's:\n%s\nwant\n%s", batch[i], h, got, want)
				}
			}
		}
	}
	results, err := nginxtest.TestBatch(configs)
	if err != nil {
		t.Fatal(err)
	}
	for i, res := range results {
		if !res.OK {
			t.Errorf("nginx -t refuses the configuration of values %q:\n%s", values[i*perGateway:min((i+1)*perGateway, len(values))], res.Output)
		} else if ws := nginxtest.Warnings(res.Output); len(ws) > 0 {
			t.Errorf("NGINX warns on the configuration of values %q:\n%s", values[i*perGateway:min((i+1)*perGateway, len(values))], strings.Join(ws, "\n"))
		}
	}
	t.Logf("%d values, %d places each: %d carried, %d refused; %d servers shaped as a plain value's; %d configurations passed nginx -t",
		len(values), len(valueRules)+len(grpcRules), out.carried, out.refused, shaped, len(configs))
}

// everyRuleCarried says whether validation accepts v in every place, and
// its longest written form fits NGINX's token: then its servers must have
// a plain value's shape.
func everyRuleCarried(t testing.TB, v string) bool {
	t.Helper()
	for _, r := range append(append([]valueRule(nil), valueRules...), grpcRules...) {
		if r.check(v) != nil {
			return false
		}
	}
	return syntax.CheckToken("", syntax.AppendedHeaderValue("X-P", "r,"+v)) == nil
}

// FuzzValues gives one value in every place (as TestValuesAreCarriedOrRefused,
// without nginx -t): `go test -fuzz FuzzValues ./internal/render` explores.
func FuzzValues(f *testing.F) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, v := range append(valuecheck.Values(r, 0), valuecheck.Regexes(r, 0)...) {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v string) {
		checkValues(t, []string{v}, &valueOutcome{})
	})
}
