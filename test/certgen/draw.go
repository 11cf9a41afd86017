package certgen

import (
	"bytes"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"strings"
)

// Source supplies Draw's choices (snapgen's sources are ones).
type Source interface {
	// Intn returns a choice in [0, n); n must be positive.
	Intn(n int) int
}

// Material is what a user may put in a TLS Secret and a CA ConfigMap.
type Material struct {
	// Shapes say what was drawn, in order, for reports.
	Shapes []string
	// Cert and Key are a Secret's tls.crt and tls.key.
	Cert, Key []byte
	// CA is a ConfigMap's ca.crt.
	CA []byte
}

// drawer draws one material.
type drawer struct {
	src    Source
	shapes []string
	n      int // certificates made, for unique names
}

func (d *drawer) intn(n int) int { return d.src.Intn(n) }

// one is true once in n.
func (d *drawer) one(n int) bool { return d.intn(n) == 0 }

func (d *drawer) shape(format string, args ...any) {
	d.shapes = append(d.shapes, fmt.Sprintf(format, args...))
}

// Key kinds by how often they are drawn: mostly ones OpenSSL accepts.
var drawnKinds = []KeyKind{RSA2048, RSA2048, P256, P256, P384, Ed25519, P224, P521, RSA1963, RSA1962, RSA1024}

// Digests by how often they are drawn.
var drawnDigests = []Digest{SHA256, SHA256, SHA256, SHA256, SHA384, PSS, SHA224, SHA1, MD5}

// Draw draws a material: a chain of one to four certificates (a
// self-signed leaf, or a leaf issued through up to two intermediates by a
// root, which the chain may hold), its key in one of its formats, a CA
// bundle of certificates of the chain and others, and damage to the text.
// Choice 0 everywhere is a valid leaf signed by a root with SHA-256.
func Draw(src Source) (Material, error) {
	d := &drawer{src: src}
	m, err := d.draw()
	m.Shapes = d.shapes
	return m, err
}

func (d *drawer) draw() (Material, error) {
	root, err := d.issue("root", nil, true)
	if err != nil {
		return Material{}, err
	}
	issuers := []*Cert{root}
	for range d.intn(3) {
		c, err := d.issue("intermediate", issuers[len(issuers)-1], true)
		if err != nil {
			return Material{}, err
		}
		issuers = append(issuers, c)
	}
	issuer := issuers[len(issuers)-1]
	if d.one(8) {
		issuer, issuers = nil, nil
	}
	leaf, err := d.issue("leaf", issuer, false)
	if err != nil {
		return Material{}, err
	}
	// The chain as a server sends it: the leaf, then each issuer.
	chain := []*Cert{leaf}
	for i := len(issuers) - 1; i >= 1; i-- {
		chain = append(chain, issuers[i])
	}
	if len(issuers) > 0 && d.one(4) {
		d.shape("tls.crt holds the root")
		chain = append(chain, root)
	}
	other, err := d.issue("other root", nil, true)
	if err != nil {
		return Material{}, err
	}
	return Material{
		Cert: d.certText(chain, other),
		Key:  d.keyText(leaf, other),
		CA:   d.caText(append(append([]*Cert{}, issuers...), other)),
	}, nil
}

// issue makes a certificate of a drawn key kind, digest and validity.
func (d *drawer) issue(role string, issuer *Cert, ca bool) (*Cert, error) {
	kind := drawnKinds[0]
	if !d.one(2) {
		kind = drawnKinds[d.intn(len(drawnKinds))]
	}
	digest := drawnDigests[0]
	if !d.one(2) {
		digest = drawnDigests[d.intn(len(drawnDigests))]
	}
	validity := Valid
	if d.one(10) {
		validity = Validity(1 + d.intn(2))
	}
	d.n++
	s := Spec{Name: fmt.Sprintf("%s %d", role, d.n), Key: Key(kind, d.n), Issuer: issuer, Digest: digest, CA: ca, Validity: validity}
	if issuer == nil {
		s.Name = "self-signed " + s.Name
	}
	c, err := Issue(s)
	if err != nil {
		return nil, err
	}
	d.shape("%s: %s key, signed with %s%s", s.Name, kind, c.Digest, []string{"", ", expired", ", not yet valid"}[validity])
	return c, nil
}

// certText writes tls.crt: the chain, in order or not, damaged or not.
func (d *drawer) certText(chain []*Cert, other *Cert) []byte {
	if len(chain) > 2 && d.one(6) {
		d.shape("tls.crt: chain after the leaf reversed")
		for i, j := 1, len(chain)-1; i < j; i, j = i+1, j-1 {
			chain[i], chain[j] = chain[j], chain[i]
		}
	}
	blocks := make([][]byte, 0, len(chain)+2)
	for _, c := range chain {
		blocks = append(blocks, c.PEM())
	}
	if d.one(10) {
		i := d.intn(len(blocks))
		d.shape("tls.crt: certificate %d twice", i+1)
		blocks = append(blocks, blocks[i])
	}
	if d.one(10) {
		d.shape("tls.crt: holds an unrelated private key")
		blocks = append(blocks[:1:1], append([][]byte{KeyPEM(other.Key, PKCS8)}, blocks[1:]...)...)
	}
	if d.one(12) {
		d.shape("tls.crt: holds the leaf's private key")
		blocks = append(blocks, KeyPEM(chain[0].Key, PKCS8))
	}
	return d.damage("tls.crt", blocks, other)
}

// keyText writes tls.key: the leaf's key, or another.
func (d *drawer) keyText(leaf, other *Cert) []byte {
	key := leaf.Key
	if d.one(12) {
		d.shape("tls.key: the key of another certificate")
		key = other.Key
	}
	format := []KeyFormat{PKCS8, PKCS1, SEC1}[d.intn(3)]
	blocks := [][]byte{KeyPEM(key, format)}
	if d.one(12) && format == SEC1 {
		d.shape("tls.key: EC PARAMETERS block first")
		blocks = append([][]byte{[]byte("-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n-----END EC PARAMETERS-----\n")}, blocks...)
	}
	switch d.intn(24) {
	case 0:
		d.shape("tls.key: legacy encrypted (Proc-Type header)")
		blocks[len(blocks)-1] = encryptedLegacy(blocks[len(blocks)-1])
	case 1:
		d.shape("tls.key: ENCRYPTED PRIVATE KEY block")
		blocks[len(blocks)-1] = retype(blocks[len(blocks)-1], "ENCRYPTED PRIVATE KEY")
	}
	return d.damage("tls.key", blocks, other)
}

// caText writes ca.crt: some of the certificates, damaged or not.
func (d *drawer) caText(certs []*Cert) []byte {
	var blocks [][]byte
	for _, c := range certs {
		if d.one(2) || len(blocks) == 0 && c == certs[len(certs)-1] {
			blocks = append(blocks, c.PEM())
		}
	}
	if d.one(10) {
		d.shape("ca.crt: a certificate twice")
		blocks = append(blocks, blocks[d.intn(len(blocks))])
	}
	if d.one(16) {
		d.shape("ca.crt: holds a private key")
		blocks = append(blocks, KeyPEM(certs[0].Key, PKCS8))
	}
	return d.damage("ca.crt", blocks, certs[len(certs)-1])
}

// damage joins blocks into a file's text, maybe damaged the ways users'
// files are.
func (d *drawer) damage(file string, blocks [][]byte, other *Cert) []byte {
	if d.one(14) {
		d.shape("%s: a junk CERTIFICATE block", file)
		blocks = insert(blocks, d.intn(len(blocks)+1), []byte("-----BEGIN CERTIFICATE-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n-----END CERTIFICATE-----\n"))
	}
	if d.one(14) {
		d.shape("%s: a TRUSTED CERTIFICATE block", file)
		blocks = insert(blocks, d.intn(len(blocks)+1), trusted(other))
	}
	if d.one(16) {
		d.shape("%s: a block whose base64 is broken", file)
		blocks = insert(blocks, d.intn(len(blocks)+1), []byte("-----BEGIN CERTIFICATE-----\nMIIB#not base64#\n-----END CERTIFICATE-----\n"))
	}
	if d.one(10) {
		i := d.intn(len(blocks))
		d.shape("%s: a header in block %d", file, i+1)
		blocks[i] = withHeader(blocks[i], "Comment: made by certgen")
	}
	var sep, lead, trail string
	if d.one(10) {
		d.shape("%s: text between blocks", file)
		sep = "subject=CN = something\n"
	}
	if d.one(12) {
		d.shape("%s: text before the first block", file)
		lead = "Bag Attributes\n    friendlyName: test\n"
	}
	if d.one(16) {
		d.shape("%s: text after the last block", file)
		trail = "trailing words\n"
	}
	text := []byte(lead + string(bytes.Join(blocks, []byte(sep))) + trail)
	if d.one(12) {
		d.shape("%s: CRLF line ends", file)
		text = bytes.ReplaceAll(text, []byte("\n"), []byte("\r\n"))
	}
	return text
}

func insert(blocks [][]byte, i int, b []byte) [][]byte {
	return append(blocks[:i:i], append([][]byte{b}, blocks[i:]...)...)
}

// withHeader adds a header line to a PEM block.
func withHeader(block []byte, header string) []byte {
	first, rest, _ := strings.Cut(string(block), "\n")
	return []byte(first + "\n" + header + "\n\n" + rest)
}

// retype changes a PEM block's type.
func retype(block []byte, typ string) []byte {
	s := string(block)
	first, rest, _ := strings.Cut(s, "\n")
	oldType := strings.TrimSuffix(strings.TrimPrefix(first, "-----BEGIN "), "-----")
	rest = strings.Replace(rest, "-----END "+oldType+"-----", "-----END "+typ+"-----", 1)
	return []byte("-----BEGIN " + typ + "-----\n" + rest)
}

// trusted is a certificate as OpenSSL's TRUSTED CERTIFICATE: the
// certificate followed by its trust settings (none here).
func trusted(c *Cert) []byte {
	return retypeDER("TRUSTED CERTIFICATE", append(append([]byte{}, c.DER...), 0x30, 0x00))
}

// retypeDER writes DER bytes as a PEM block of a type.
func retypeDER(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

// encryptedLegacy encrypts a key block the way `openssl rsa -aes128` did
// (RFC 1423: Proc-Type and DEK-Info headers), with a fixed passphrase:
// deprecated in Go, still found in users' Secrets.
func encryptedLegacy(block []byte) []byte {
	b, _ := pem.Decode(block)
	enc, err := x509.EncryptPEMBlock(rand.Reader, b.Type, b.Bytes, []byte("passphrase"), x509.PEMCipherAES128)
	if err != nil {
		panic(err) // AES-128 and a key block always encrypt
	}
	return pem.EncodeToMemory(enc)
}
