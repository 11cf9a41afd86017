package auth

import (
	"encoding/json"
	"math/rand"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http/httpguts"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/internal/jwks"
	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/test/jwttest"
)

// replayCorpus is tokens for the replay: signed ones (by the set's keys,
// by others, with claims at the edges of the rules) and their mutations,
// the shapes FuzzDecide mutates, made with a fixed seed.
func replayCorpus(keys jwtKeys) []string {
	now := time.Now().Unix()
	b64 := func(s string) string { return jwttest.B64([]byte(s)) }
	var signed []string
	sign := func(alg string, k jwttest.Key, claims map[string]any) {
		signed = append(signed, jwttest.Token{Alg: alg, Key: k, Claims: claims}.Sign())
	}
	raw := func(alg string, k jwttest.Key, header, claims string) {
		signed = append(signed, jwttest.SignRaw(alg, k, b64(header)+"."+b64(claims)))
	}
	for _, alg := range jwks.Algorithms() {
		k := keys.forAlg(alg)
		sign(alg, k, authorized(nil))
		sign(alg, k, authorized(map[string]any{"role": "viewer"}))
		sign(alg, k, authorized(map[string]any{"exp": now - 3600}))
		sign(alg, keys.stranger, authorized(nil))
	}
	kid := `"kid":"p256"`
	for _, c := range []string{
		`{"sub":"alice","role":"admin","email":"a@example.com","groups":["team-x"]}`,
		`{"sub":"bob","role":["x","editor"],"email":"b@example.com","groups":"team-y"}`,
		`{"sub":"alice","realm_access":{"roles":["ops"]},"email":"é@example.com","groups":["team-é"]}`,
		`{"sub":"alice","role":"admin","email":"a@example.com","groups":["team-a",7,true,null,{"x":1},["team-b"]]}`,
		`{"sub":"alice","role":"admin","email":"a@example.com","groups":["team-a",1e21,3.0,-0,0.0001,12345678901234567890]}`,
		`{"sub":"alice","role":"admin","role":"viewer","email":"a@example.com","groups":["team-a"]}`,
		`{"sub":"alice","role":"viewer","role":"admin","email":"a@example.com","groups":["team-a"]}`,
		`{"sub":"\u0061lice","role":"\u0061dmin","email":"a@example.com","groups":["team-\ud83d\ude00"]}`,
		`{"sub":"alice","role":"admin","email":"a@example.com","groups":["team-a"],"exp":1e400}`,
		`{"sub":"alice","role":"admin","email":"a@example.com","groups":["team-a"],"exp":"1e400"}`,
		`{"sub":"alice","role":"admin","email":"a@example.com","groups":["team-a"],"nbf":null}`,
		`{"sub":"alice","role":"admin","email":"a@example.com","groups":["team-a\u0000"]}`,
		`{"sub":"alice","role":"admin","email":"a@example.com","groups":["team-a"],"x":` + strings.Repeat("[", 15) + strings.Repeat("]", 15) + `}`,
		`{"sub":"alice","role":"admin","email":"a@example.com","groups":["team-a"],"x":` + strings.Repeat("[", 16) + strings.Repeat("]", 16) + `}`,
		`{"sub":"alice","role":"admin","email":"A@EXAMPLE.COM","groups":["team-a"]}`,
		`{"sub":"alice","role":"admin","email":"a@example.com","groups":["team-a"]}` + " \r\n",
		` {"sub":"alice","role":"admin","email":"a@example.com","groups":["team-a"]}`,
		`{"sub":"alice","role":"admin","email":"a@example.com","groups":["team-a"],"x":"\ud800"}`,
		`["sub","alice"]`,
	} {
		raw("ES256", keys.p256, `{"alg":"ES256",`+kid+`}`, c)
	}
	for _, h := range []string{
		`{"alg":"ES256"}`, `{"alg":"ES256","kid":"p384"}`, `{"alg":"ES256","kid":""}`, `{"alg":"ES256","kid":null}`,
		`{"alg":"ES256","kid":"p256","crit":["x"]}`, `{"alg":"ES256","kid":"p256","crit":null}`, `{"alg":"es256","kid":"p256"}`,
		`{"alg":"ES256","kid":"p256","typ":"at+jwt","jku":"https://evil.example/jwks"}`, "{\"alg\":\"ES256\",\r\n \"kid\":\"p256\"}",
		`{"alg":["ES256"],"kid":"p256"}`, `{"kid":"p256"}`,
	} {
		raw("ES256", keys.p256, h, `{"sub":"alice","role":"admin","email":"a@example.com","groups":["team-a"]}`)
	}
	claims := b64(`{"sub":"alice","role":"admin","email":"a@example.com","groups":["team-a"]}`)
	signed = append(signed,
		b64(`{"alg":"none"}`)+"."+claims+".",
		jwttest.SignRaw("HS256", jwttest.Key{Secret: keys.rsa.PublicDER()}, b64(`{"alg":"HS256","kid":"rsa"}`)+"."+claims),
		jwttest.SignRaw("HS256", jwttest.Key{Secret: keys.rsa.PublicPEM()}, b64(`{"alg":"HS256","kid":"rsa"}`)+"."+claims),
		jwttest.SignRaw("HS256", jwttest.Key{Secret: keys.p256.PublicDER()}, b64(`{"alg":"HS256"}`)+"."+claims),
	)
	// Mutations: what a client may change of a token it holds.
	r := rand.New(rand.NewSource(7))
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.=+/ "
	corpus := append([]string(nil), signed...)
	for range 1500 {
		t := []byte(signed[r.Intn(len(signed))])
		switch r.Intn(7) {
		case 0: // a character changed
			t[r.Intn(len(t))] = alphabet[r.Intn(len(alphabet))]
		case 1: // cut
			t = t[:r.Intn(len(t))]
		case 2: // a character inserted
			i := r.Intn(len(t) + 1)
			t = append(t[:i], append([]byte{alphabet[r.Intn(len(alphabet))]}, t[i:]...)...)
		case 3: // another token's signature
			parts, other := strings.Split(string(t), "."), strings.Split(signed[r.Intn(len(signed))], ".")
			if len(parts) == 3 && len(other) == 3 {
				t = []byte(parts[0] + "." + parts[1] + "." + other[2])
			}
		case 4: // another token's claims
			parts, other := strings.Split(string(t), "."), strings.Split(signed[r.Intn(len(signed))], ".")
			if len(parts) == 3 && len(other) == 3 {
				t = []byte(parts[0] + "." + other[1] + "." + parts[2])
			}
		case 5: // the last character's spare bits
			i := len(t) - 1
			if c := strings.IndexByte(alphabet[:64], t[i]); c >= 0 {
				t[i] = alphabet[c^1]
			}
		case 6: // a part's case
			parts := strings.Split(string(t), ".")
			i := r.Intn(len(parts))
			parts[i] = strings.ToUpper(parts[i])
			t = []byte(strings.Join(parts, "."))
		}
		corpus = append(corpus, string(t))
	}
	return corpus
}

// TestJWTReplay: tokens replayed through a real NGINX get what
// jwks.Decide, the reference FuzzDecide holds to, decides: the same status
// and challenge, and the same claims forwarded. The Lua and the reference
// are one set of rules written twice; this is where they are compared.
func TestJWTReplay(t *testing.T) {
	keys := newJWTKeys()
	files, ids := renderGateway(t, jwtRoutes(jwttest.JWKS(keys.set())))
	var policies struct {
		Filters jwks.Policies `json:"filters"`
	}
	for _, f := range files {
		if f.Path == config.JWTPoliciesFile {
			if err := json.Unmarshal(f.Data, &policies); err != nil {
				t.Fatal(err)
			}
		}
	}
	policy, ok := policies.Filters[config.JWTFilterID(types.NamespacedName{Namespace: "ns", Name: "claims"})]
	if !ok {
		t.Fatalf("no policy of the filter in %v", policies.Filters)
	}
	header := map[string]string{}
	for _, h := range policy.Headers {
		header[h.Variable] = map[string]string{"sub": "X-Jwt-Sub", "groups": "X-Jwt-Groups"}[h.Path[0]]
	}
	d := start(t, files, ids)
	app := d.server("127.0.0.2", nil)
	d.endpoints(map[string][]string{"app": {app.addr}})

	corpus := replayCorpus(keys)
	start, sent, passed := time.Now(), 0, 0
	var mismatches []string
	for _, tok := range corpus {
		auth := "Bearer " + tok
		if !httpguts.ValidHeaderFieldValue(auth) {
			continue // a client cannot send it
		}
		sent++
		want := jwks.Decide(auth, &policy, nil, time.Now())
		resp, body := d.do(request("GET", "/claims/x", "", "Authorization", auth))
		got := resp.Header.Get("WWW-Authenticate")
		diff := ""
		switch {
		case resp.StatusCode != want.Status:
			diff = "status"
		case got != want.Challenge:
			diff = "challenge " + got + " vs " + want.Challenge
		case want.Status == 200:
			passed++
			var s seen
			_ = json.Unmarshal([]byte(body), &s)
			for v, value := range want.Headers {
				if h := header[v]; s.Header.Get(h) != value || len(s.Header.Values(h)) > 1 {
					diff += " " + h + "=" + strings.Join(s.Header.Values(h), "|") + " vs " + value
				}
			}
		}
		if diff != "" {
			mismatches = append(mismatches, strings.Join([]string{tok, http.StatusText(resp.StatusCode), "reference: " + http.StatusText(want.Status) + " (" + want.Reason + ")", diff}, "; "))
		}
	}
	t.Logf("%d tokens replayed in %s, %d let through", sent, time.Since(start), passed)
	if sent < 1000 || passed < 10 {
		t.Errorf("%d tokens replayed, %d let through: the corpus does not test much", sent, passed)
	}
	for _, m := range mismatches[:min(len(mismatches), 10)] {
		t.Errorf("NGINX and the reference disagree: %s", m)
	}
	if len(mismatches) > 10 {
		t.Errorf("and %d more", len(mismatches)-10)
	}
}
