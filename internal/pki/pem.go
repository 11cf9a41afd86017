package pki

import (
	"bytes"
	"encoding/pem"
	"fmt"
	"strings"
)

// blockCertificate is the only kind of PEM block Gatewall writes for
// certificates. OpenSSL also reads TRUSTED CERTIFICATE blocks in some
// places and not in others (they carry trust settings after the
// certificate); they are never passed on.
const blockCertificate = "CERTIFICATE"

// decodeBlocks returns every PEM block of data, in order, and what follows
// the last one. A block that begins but does not decode is an error: Go's
// decoder skips it silently and goes on with the next one, so a chain or
// bundle would lose a certificate without anyone noticing, while OpenSSL
// fails on it.
func decodeBlocks(data []byte) (blocks []*pem.Block, rest []byte, err error) {
	rest = data
	for {
		b, after := pem.Decode(rest)
		if b == nil {
			if beginLines(rest) > 0 {
				return nil, nil, fmt.Errorf("PEM block %d does not decode (a broken BEGIN/END line or base64 text)", len(blocks)+1)
			}
			return blocks, rest, nil
		}
		if beginLines(rest[:len(rest)-len(after)]) != 1 {
			return nil, nil, fmt.Errorf("PEM block %d does not decode (a broken BEGIN/END line or base64 text)", len(blocks)+1)
		}
		blocks = append(blocks, b)
		rest = after
	}
}

// beginLines counts the lines of data that begin a PEM block.
func beginLines(data []byte) int {
	n := 0
	for _, line := range bytes.Split(data, []byte("\n")) {
		if bytes.HasPrefix(line, []byte("-----BEGIN ")) {
			n++
		}
	}
	return n
}

// encrypted says whether a block holds an encrypted private key: PKCS #8
// (ENCRYPTED PRIVATE KEY) or OpenSSL's legacy encryption (a Proc-Type
// header).
func encrypted(b *pem.Block) bool {
	return b.Type == "ENCRYPTED PRIVATE KEY" || strings.Contains(b.Headers["Proc-Type"], "ENCRYPTED")
}

// encode writes DER blocks as canonical PEM: no headers, 64 columns.
func encode(w *bytes.Buffer, typ string, ders ...[]byte) {
	for _, der := range ders {
		// Writing to a bytes.Buffer does not fail.
		_ = pem.Encode(w, &pem.Block{Type: typ, Bytes: der})
	}
}
