package agent

import (
	"encoding/base64"
	"strconv"
	"strings"
	"testing"
	"time"
)

// jwt builds an unsigned-but-signature-shaped JWT with header and claims
// (JSON); the screen never checks the signature.
func jwt(header, claims string) string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(header)) + "." + enc([]byte(claims)) + "." + enc([]byte("signature"))
}

// TestScreenToken: what the TokenReview authenticator refuses without asking
// the API server is exactly what the API server could not authenticate for
// the audience: no signed JWT, another audience, no expiry or expired
// (beyond screenLeeway).
func TestScreenToken(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	a := &tokenReviewAuthenticator{audience: "gatewall", now: func() time.Time { return now }}
	rs256 := `{"alg":"RS256","kid":"k"}`
	claims := func(aud string, exp int64) string {
		return `{"aud":` + aud + `,"exp":` + strconv.FormatInt(exp, 10) + `,"sub":"system:serviceaccount:ns:gw-nginx"}`
	}
	for name, tc := range map[string]struct {
		token   string
		refusal string // "" passes to review
	}{
		"a bound token for the audience":    {token: jwt(rs256, claims(`["gatewall"]`, now.Unix()+600))},
		"aud as one string":                 {token: jwt(rs256, claims(`"gatewall"`, now.Unix()+600))},
		"the audience among others":         {token: jwt(rs256, claims(`["api","gatewall"]`, now.Unix()+600))},
		"expired within the leeway":         {token: jwt(rs256, claims(`["gatewall"]`, now.Unix()-30))},
		"expired beyond the leeway":         {token: jwt(rs256, claims(`["gatewall"]`, now.Unix()-120)), refusal: "it expired at"},
		"another audience":                  {token: jwt(rs256, claims(`["https://kubernetes.default.svc"]`, now.Unix()+600)), refusal: `issued for the audiences ["https://kubernetes.default.svc"], not "gatewall"`},
		"no audience":                       {token: jwt(rs256, `{"exp":1800000000}`), refusal: "not \"gatewall\""},
		"no expiry (a legacy Secret token)": {token: jwt(rs256, `{"aud":["gatewall"]}`), refusal: "no expiry"},
		"alg none":                          {token: jwt(`{"alg":"none"}`, claims(`["gatewall"]`, now.Unix()+600)), refusal: "not a signed JWT"},
		"no alg":                            {token: jwt(`{"typ":"JWT"}`, claims(`["gatewall"]`, now.Unix()+600)), refusal: "not a signed JWT"},
		"two segments":                      {token: "abc.def", refusal: "not a JWT"},
		"no signature":                      {token: strings.TrimSuffix(jwt(rs256, claims(`["gatewall"]`, now.Unix()+600)), base64.RawURLEncoding.EncodeToString([]byte("signature"))), refusal: "not a JWT"},
		"not base64":                        {token: "a!b.c!d.e", refusal: "not a JWT: header"},
		"claims not JSON":                   {token: jwt(rs256, "garbage"), refusal: "not a JWT: claims"},
		"aud neither string nor list":       {token: jwt(rs256, `{"aud":42,"exp":1800000000}`), refusal: "aud is neither"},
		"an opaque token":                   {token: "not-a-token", refusal: "not a JWT"},
	} {
		t.Run(name, func(t *testing.T) {
			err := a.ScreenToken(tc.token)
			switch {
			case tc.refusal == "" && err != nil:
				t.Fatalf("refused a token only the review can judge: %v", err)
			case tc.refusal != "" && (err == nil || !strings.Contains(err.Error(), tc.refusal)):
				t.Fatalf("got %v, want a refusal saying %q", err, tc.refusal)
			}
		})
	}
}
