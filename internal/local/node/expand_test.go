package node

import "testing"

func TestExpandFollowsKubernetesRules(t *testing.T) {
	env := map[string]string{"A": "a", "EMPTY": ""}
	for in, want := range map[string]string{
		"plain":          "plain",
		"$(A)":           "a",
		"x$(A)y$(A)":     "xaya",
		"$$(A)":          "$(A)",
		"$(UNKNOWN)":     "$(UNKNOWN)",
		"$(EMPTY)-":      "-",
		"cost $5":        "cost $5",
		"trailing $":     "trailing $",
		"$(unterminated": "$(unterminated",
	} {
		if got := expand(in, env); got != want {
			t.Errorf("expand(%q) = %q, want %q", in, got, want)
		}
	}
}
