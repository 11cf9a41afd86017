package agent

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// screenLeeway is how far past its expiry a token is still sent to review:
// the API server judges expiry by its own clock, which may be behind ours.
// The kubelet replaces a projected token well before it expires.
const screenLeeway = time.Minute

// ScreenToken refuses, without a review, a token the API server would not
// authenticate for the audience: one that is not a signed JWT, is not
// issued for the audience, or has no expiry or expired (a bound
// ServiceAccount token has one). The signature is not checked: that is the
// review's job; a forged token that passes costs a review.
func (a *tokenReviewAuthenticator) ScreenToken(token string) error {
	parts := strings.Split(token, ".")
	if len(parts) != 3 || parts[2] == "" {
		return errors.New("not a JWT (header.payload.signature)")
	}
	var header struct {
		Alg string `json:"alg"`
	}
	if err := decodeSegment(parts[0], &header); err != nil {
		return fmt.Errorf("not a JWT: header: %w", err)
	}
	if header.Alg == "" || strings.EqualFold(header.Alg, "none") {
		return errors.New("not a signed JWT")
	}
	var claims struct {
		Aud audiences `json:"aud"`
		Exp *float64  `json:"exp"`
	}
	if err := decodeSegment(parts[1], &claims); err != nil {
		return fmt.Errorf("not a JWT: claims: %w", err)
	}
	switch {
	case !slices.Contains(claims.Aud, a.audience):
		return fmt.Errorf("issued for the audiences %q, not %q", []string(claims.Aud), a.audience)
	case claims.Exp == nil:
		return errors.New("it has no expiry: not a bound ServiceAccount token")
	}
	if exp := time.Unix(int64(*claims.Exp), 0); a.now().After(exp.Add(screenLeeway)) {
		return fmt.Errorf("it expired at %s", exp.UTC().Format(time.RFC3339))
	}
	return nil
}

func decodeSegment(seg string, into any) error {
	raw, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, into)
}

// audiences is a JWT's aud claim: one string or a list.
type audiences []string

func (a *audiences) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*a = audiences{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return fmt.Errorf("aud is neither a string nor a list of strings")
	}
	*a = many
	return nil
}
