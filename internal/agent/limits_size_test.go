package agent

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	mpi "github.com/nginx/agent/v3/api/grpc/mpi/v1"
	"github.com/nginx/agent/v3/pkg/files"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
)

// bigGatewayOverview is the UpdateOverview an agent sends for a Gateway
// with certs certificates, plus nginx.conf, the 64 server shards and 100 CA
// bundles. Each file is described by the agent's own pkg/files (which its
// UpdateOverview uses) once, then repeated under the names Gatewall gives
// such files (a certificate of long namespace and Secret names, with four
// DNS names): protobuf sizes add up, so the size is exact.
func bigGatewayOverview(t *testing.T, certs int) *mpi.UpdateOverviewRequest {
	t.Helper()
	dir := t.TempDir()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	host := "service-0000.team-namespace-0000.apps.example.com"
	tmpl := &x509.Certificate{
		SerialNumber: new(big.Int).Lsh(big.NewInt(1), 120),
		Subject:      pkix.Name{CommonName: host, Organization: []string{"Example Organization"}},
		Issuer:       pkix.Name{CommonName: "Example Issuing Certificate Authority R3", Organization: []string{"Example Organization"}, Country: []string{"US"}},
		DNSNames:     []string{host, "www." + host, "api." + host, "admin." + host},
		NotBefore:    time.Now(), NotAfter: time.Now().Add(90 * 24 * time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	describe := func(data []byte, withCert bool) *mpi.FileMeta {
		path := filepath.Join(dir, "file")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		meta, err := files.FileMeta(path)
		if withCert {
			meta, err = files.FileMetaWithCertificate(path)
		}
		if err != nil {
			t.Fatal(err)
		}
		return meta
	}
	var fs []*mpi.File
	repeat := func(meta *mpi.FileMeta, n int, name func(i int) string) {
		for i := range n {
			m := proto.Clone(meta).(*mpi.FileMeta)
			m.Name, m.Hash = name(i), files.GenerateHash([]byte(name(i)))
			fs = append(fs, &mpi.File{FileMeta: m})
		}
	}
	repeat(describe(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), true), certs, func(i int) string {
		return fmt.Sprintf("/etc/nginx/secrets/team-namespace-%04d_wildcard-certificate-of-the-team-%04d.pem", i, i)
	})
	repeat(describe([]byte("ca"), false), 100, func(i int) string { return fmt.Sprintf("/etc/nginx/secrets/client_ca_%012x.pem", i) })
	conf := describe([]byte("server {}"), false)
	repeat(conf, 64, func(i int) string { return fmt.Sprintf("/etc/nginx/server-shards/%02d.conf", i) })
	repeat(conf, 1, func(int) string { return "/etc/nginx/nginx.conf" })
	return &mpi.UpdateOverviewRequest{
		MessageMeta: &mpi.MessageMeta{MessageId: strings.Repeat("m", 36), CorrelationId: strings.Repeat("c", 36)},
		Overview: &mpi.FileOverview{Files: fs, ConfigPath: "/etc/nginx/nginx.conf",
			ConfigVersion: &mpi.ConfigVersion{InstanceId: strings.Repeat("i", 36), Version: files.GenerateConfigVersion(fs)}},
	}
}

// TestAgentMessagesFitTheReceiveLimit measures the largest messages an
// agent sends and checks they fit maxRecvMsgSize with a quarter of it to
// spare. (The limit is nginx-agent's own send limit: an agent could not
// send a bigger message to any server.)
func TestAgentMessagesFitTheReceiveLimit(t *testing.T) {
	// NGINX ends an error line at 2 KiB (NGX_MAX_ERROR_STR); a failed apply
	// reports nginx -t's lines, one per failing file at most.
	emerg := strings.Repeat(`nginx: [emerg] unknown directive "bogus" in /etc/nginx/server-shards/00.conf:1 `, 2048/80)
	var failure bytes.Buffer
	for range 64 {
		failure.WriteString(emerg + "\n")
	}
	overview := bigGatewayOverview(t, 5000)
	fs := overview.GetOverview().GetFiles()
	t.Logf("per file: a certificate %d bytes, nginx.conf %d", proto.Size(fs[0]), proto.Size(fs[len(fs)-1]))
	for name, msg := range map[string]proto.Message{
		"UpdateOverview of a Gateway with 5,000 certificates": overview,
		"DataPlaneResponse failing on each of 64 shards": &mpi.DataPlaneResponse{
			MessageMeta:     &mpi.MessageMeta{MessageId: strings.Repeat("m", 36), CorrelationId: strings.Repeat("c", 36)},
			CommandResponse: &mpi.CommandResponse{Status: mpi.CommandResponse_COMMAND_STATUS_FAILURE, Message: "Config apply failed, rollback successful", Error: failure.String()},
			InstanceId:      strings.Repeat("i", 36),
		},
	} {
		size := proto.Size(msg)
		t.Logf("%s: %d bytes (%.1f%% of the receive limit)", name, size, 100*float64(size)/maxRecvMsgSize)
		if size > maxRecvMsgSize*3/4 {
			t.Errorf("%s: %d bytes, more than three quarters of the receive limit %d", name, size, maxRecvMsgSize)
		}
	}
}

// TestReceiveLimit: an authenticated agent's message over the limit is
// refused without being read.
func TestReceiveLimit(t *testing.T) {
	h := startGate(t, newCountingAuth("good"), generousLimits())
	big := bytes.Repeat([]byte("x"), maxRecvMsgSize)
	_, err := mpi.NewFileServiceClient(h.dial("")).UpdateFile(withToken(t, "good"), &mpi.UpdateFileRequest{Contents: &mpi.FileContents{Contents: big}})
	wantStatus(t, "a message over the limit", err, codes.ResourceExhausted, fmt.Sprintf("larger than max (%d vs. %d)", maxRecvMsgSize+10, maxRecvMsgSize))
}
