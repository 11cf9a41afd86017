package certgen

import (
	"crypto"
	"crypto/x509"
	"embed"
	"encoding/pem"
	"fmt"
	"path"
	"sync"
)

// KeyKind is a kind of fixed key.
type KeyKind string

// The kinds of keys; the RSA sizes are either side of what NGINX's OpenSSL
// accepts.
const (
	RSA1024 KeyKind = "rsa-1024"
	RSA1962 KeyKind = "rsa-1962"
	RSA1963 KeyKind = "rsa-1963"
	RSA2048 KeyKind = "rsa-2048"
	P224    KeyKind = "p224"
	P256    KeyKind = "p256"
	P384    KeyKind = "p384"
	P521    KeyKind = "p521"
	Ed25519 KeyKind = "ed25519"
)

// KeyKinds are all the kinds, in a fixed order.
var KeyKinds = []KeyKind{RSA1024, RSA1962, RSA1963, RSA2048, P224, P256, P384, P521, Ed25519}

//go:embed keys/*.pem
var keyFiles embed.FS

var (
	keysOnce sync.Once
	keys     map[KeyKind][]crypto.Signer
	keysErr  error
)

// Key returns the i-th fixed key of a kind (i modulo how many there are);
// it panics if the embedded keys do not parse, which no test could survive.
func Key(kind KeyKind, i int) crypto.Signer {
	keysOnce.Do(loadKeys)
	if keysErr != nil {
		panic(keysErr)
	}
	ks := keys[kind]
	if len(ks) == 0 {
		panic(fmt.Sprintf("certgen: no key of kind %s", kind))
	}
	return ks[i%len(ks)]
}

func loadKeys() {
	keys = map[KeyKind][]crypto.Signer{}
	for _, kind := range KeyKinds {
		for i := 0; ; i++ {
			name := path.Join("keys", fmt.Sprintf("%s-%d.pem", kind, i))
			data, err := keyFiles.ReadFile(name)
			if err != nil {
				break
			}
			b, _ := pem.Decode(data)
			if b == nil {
				keysErr = fmt.Errorf("certgen: %s is not PEM", name)
				return
			}
			k, err := x509.ParsePKCS8PrivateKey(b.Bytes)
			if err != nil {
				keysErr = fmt.Errorf("certgen: %s: %w", name, err)
				return
			}
			keys[kind] = append(keys[kind], k.(crypto.Signer))
		}
	}
}
