package config

import (
	"strconv"
	"strings"
)

// NGINX keeps server names and map keys in hash tables whose buckets must
// hold the longest key: a name of 47 characters or more makes `nginx -t`
// fail ("could not build server_names_hash, you should increase
// server_names_hash_bucket_size") with the default bucket size of one cache
// line (64 bytes). Gatewall sizes the buckets from the keys it renders, so
// long hostnames (up to 253 characters) never break a configuration.

// cacheLine is NGINX's default bucket size and the unit it rounds bucket
// sizes up to (x86-64 and arm64).
const cacheLine = 64

// hashBucketSize returns the bucket size that fits every key, or 0 when the
// default does. It follows ngx_hash_init: an element takes a pointer plus
// the key and two bytes rounded up to a pointer, and a bucket needs one
// more pointer for its end marker.
func hashBucketSize(keys []string) int {
	longest := 0
	for _, k := range keys {
		longest = max(longest, len(k))
	}
	const ptr = 8
	need := ptr + alignUp(longest+2, ptr) + ptr
	if need <= cacheLine {
		return 0
	}
	return alignUp(need, cacheLine)
}

func alignUp(n, unit int) int { return (n + unit - 1) / unit * unit }

// serverNames are the names of the http servers.
func (c *Config) serverNames() []string {
	var out []string
	for _, s := range c.Servers {
		if s.Name != "" {
			out = append(out, s.Name)
		}
	}
	return out
}

// hashedMapKeys are the map keys NGINX hashes: every key but regular
// expressions, unquoted.
func (c *Config) hashedMapKeys() []string {
	var out []string
	for _, m := range c.Maps {
		for _, e := range m.Entries {
			k := e.Key
			if u, err := strconv.Unquote(k); err == nil && strings.HasPrefix(k, `"`) {
				k = u
			}
			if !strings.HasPrefix(k, "~") {
				out = append(out, k)
			}
		}
	}
	return out
}

// hashSizeDirectives are the http-level bucket sizes the configuration needs.
func (c *Config) hashSizeDirectives() []Directive {
	var out []Directive
	if n := hashBucketSize(c.serverNames()); n > 0 {
		out = append(out, d("server_names_hash_bucket_size", strconv.Itoa(n)))
	}
	if n := hashBucketSize(c.hashedMapKeys()); n > 0 {
		out = append(out, d("map_hash_bucket_size", strconv.Itoa(n)))
	}
	return out
}
