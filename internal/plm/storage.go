package plm

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// objectSource opens objects in bundle storage. The S3 client implements it;
// unit tests substitute their own to exercise scheduling without a server.
type objectSource interface {
	// Open returns the object's body and its size (-1 when unknown).
	Open(ctx context.Context, bucket, key string) (io.ReadCloser, int64, error)
}

// region is required by SigV4 but meaningless to PLM's single-site storage.
const region = "us-east-1"

// s3Storage is an S3 client whose credentials and TLS settings can be
// replaced while fetches run: each change builds a new client, and a request
// uses the client current when it starts.
type s3Storage struct {
	endpoint string

	mu        sync.Mutex
	accessKey string
	secretKey string
	tls       TLSSettings
	transport *http.Transport
	client    *s3.Client
}

func validateEndpoint(endpoint string) error {
	u, err := url.Parse(endpoint)
	if err != nil {
		return fmt.Errorf("storage endpoint %q: %w", endpoint, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("storage endpoint %q: must be an http:// or https:// URL with a host", endpoint)
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return fmt.Errorf("storage endpoint %q: must have no path, query, fragment or user info", endpoint)
	}
	return nil
}

func newS3Storage(endpoint string) (*s3Storage, error) {
	if err := validateEndpoint(endpoint); err != nil {
		return nil, err
	}
	s := &s3Storage{endpoint: endpoint}
	if err := s.rebuild(TLSSettings{}); err != nil {
		return nil, err
	}
	return s, nil
}

// setCredentials reports whether the credentials changed.
func (s *s3Storage) setCredentials(accessKeyID, secretAccessKey string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.accessKey == accessKeyID && s.secretKey == secretAccessKey {
		return false
	}
	s.accessKey, s.secretKey = accessKeyID, secretAccessKey
	s.client = s.newClientLocked()
	return true
}

// setTLS reports whether the settings changed; invalid settings leave the
// current ones in place.
func (s *s3Storage) setTLS(t TLSSettings) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.transport != nil && s.tls.equal(t) {
		return false, nil
	}
	if err := s.rebuildLocked(t); err != nil {
		return false, err
	}
	return true, nil
}

func (s *s3Storage) rebuild(t TLSSettings) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rebuildLocked(t)
}

// rebuildLocked replaces the transport, so that no kept-alive connection
// made with the old CA or client certificate serves later requests.
func (s *s3Storage) rebuildLocked(t TLSSettings) error {
	cfg, err := t.config()
	if err != nil {
		return err
	}
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:       cfg,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 30 * time.Second,
		IdleConnTimeout:       90 * time.Second,
		MaxIdleConnsPerHost:   8,
		ForceAttemptHTTP2:     true,
	}
	old := s.transport
	s.tls, s.transport = t, tr
	s.client = s.newClientLocked()
	if old != nil {
		// Requests in flight finish on their connections; idle ones go now.
		old.CloseIdleConnections()
	}
	return nil
}

func (s *s3Storage) newClientLocked() *s3.Client {
	var creds aws.CredentialsProvider = aws.AnonymousCredentials{}
	if s.accessKey != "" || s.secretKey != "" {
		creds = credentials.NewStaticCredentialsProvider(s.accessKey, s.secretKey, "")
	}
	cfg := aws.Config{
		Region:      region,
		Credentials: creds,
		HTTPClient:  &http.Client{Transport: s.transport},
		// The Fetcher retries with its own backoff and counts attempts; SDK
		// retries would hide both.
		Retryer: func() aws.Retryer { return aws.NopRetryer{} },
	}
	endpoint := s.endpoint
	return s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.BaseEndpoint = aws.String(endpoint)
		o.UsePathStyle = true
		// Bundles are verified against PLM's sha256; the SDK's own checksum
		// handling adds nothing and S3-compatible servers vary in support.
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
		o.DisableLogOutputChecksumValidationSkipped = true
	})
}

func (s *s3Storage) Open(ctx context.Context, bucket, key string) (io.ReadCloser, int64, error) {
	s.mu.Lock()
	client := s.client
	s.mu.Unlock()
	out, err := client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		return nil, 0, err
	}
	size := int64(-1)
	if out.ContentLength != nil {
		size = *out.ContentLength
	}
	return out.Body, size, nil
}
