package validation

import "sort"

// TLSGroupNames are the names ssl-ecdh-curve accepts, sorted.
func TLSGroupNames() []string {
	out := make([]string, 0, len(tlsGroups))
	for n := range tlsGroups {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// WeakTLSGroupNames are the names refused under the security level, sorted.
func WeakTLSGroupNames() []string {
	out := make([]string, 0, len(weakTLSGroups))
	for n := range weakTLSGroups {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// TLSGroupProtocols says which protocols negotiate a group, and its name.
func TLSGroupProtocols(name string) (tls13, tls12 bool, canonical string) {
	g := tlsGroups[name]
	return g.tls13, g.tls12, g.name
}
