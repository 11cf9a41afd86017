package plm

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"syscall"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
)

// FetchError is a failed attempt to get a bundle from storage or to store it
// in the cache. It is retried.
type FetchError struct {
	Location string
	Err      error
}

func (e *FetchError) Error() string {
	return fmt.Sprintf("fetching %s: %s", e.Location, describe(e.Err))
}

func (e *FetchError) Unwrap() error { return e.Err }

// IntegrityError is a bundle whose content does not match the sha256 PLM
// reported. It is not retried for the same (location, sha256).
type IntegrityError struct {
	Location string
	Want     string
	Got      string
	Size     int64
}

func (e *IntegrityError) Error() string {
	return fmt.Sprintf("fetching %s: sha256 mismatch: PLM reported %s, the %d-byte object has %s",
		e.Location, e.Want, e.Size, e.Got)
}

// describe turns the SDK's long error chains into the part an operator needs,
// with a hint at the flag to check where the cause is clear.
func describe(err error) string {
	var respErr *awshttp.ResponseError
	if errors.As(err, &respErr) && respErr.HTTPStatusCode() != 0 {
		code := respErr.HTTPStatusCode()
		msg := fmt.Sprintf("%d %s", code, http.StatusText(code))
		var apiErr smithy.APIError
		if errors.As(err, &apiErr) && apiErr.ErrorCode() != "" {
			msg += ": " + apiErr.ErrorCode()
			if m := apiErr.ErrorMessage(); m != "" {
				msg += ": " + m
			}
		}
		switch code {
		case http.StatusUnauthorized, http.StatusForbidden:
			msg += " (check the credentials in --plm-storage-credentials-secret)"
		case http.StatusBadRequest:
			if respErr.Response != nil && respErr.Response.TLS != nil {
				msg += " (a TLS terminator answers 400 when it requires a client certificate: check --plm-storage-client-ssl-secret)"
			}
		}
		return msg
	}

	var certErr *tls.CertificateVerificationError
	var unknownCA x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var invalidCert x509.CertificateInvalidError
	var alert tls.AlertError
	var recordErr tls.RecordHeaderError
	switch {
	case errors.As(err, &hostErr):
		return fmt.Sprintf("server certificate does not match the storage host: %v (check --plm-storage-url)", hostErr)
	case errors.As(err, &unknownCA):
		return fmt.Sprintf("server certificate not trusted: %v (check --plm-storage-ca-secret)", unknownCA)
	case errors.As(err, &invalidCert):
		return fmt.Sprintf("server certificate invalid: %v (check --plm-storage-ca-secret)", invalidCert)
	case errors.As(err, &certErr):
		return fmt.Sprintf("server certificate not accepted: %v (check --plm-storage-ca-secret)", certErr.Err)
	case errors.As(err, &alert):
		return fmt.Sprintf("TLS handshake rejected by the server: %v (check --plm-storage-client-ssl-secret)", alert)
	case errors.As(err, &recordErr):
		return "storage did not answer with TLS; is --plm-storage-url https:// on a plain-HTTP server?"
	case closedBeforeAnswer(err):
		return fmt.Sprintf("%v: the server closed the connection without answering (does --plm-storage-url have the right scheme, http:// or https://?)", innermostURLError(err))
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Sprintf("connection refused by %s", dialAddr(err))
	}
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		return fmt.Sprintf("timed out: %v", innermostURLError(err))
	}
	return innermostURLError(err).Error()
}

// closedBeforeAnswer is a request that got no response at all; a body cut
// short later is reported as is.
func closedBeforeAnswer(err error) bool {
	var urlErr *url.Error
	if !errors.As(err, &urlErr) {
		return false
	}
	return errors.Is(urlErr.Err, io.EOF) || errors.Is(urlErr.Err, io.ErrUnexpectedEOF) || errors.Is(urlErr.Err, syscall.ECONNRESET)
}

func dialAddr(err error) string {
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Addr != nil {
		return opErr.Addr.String()
	}
	return "storage"
}

// innermostURLError drops the SDK's "operation error S3: GetObject, https
// response error StatusCode: 0, RequestID: , HostID: , request send failed,"
// prefix by reporting the transport's own error when there is one.
func innermostURLError(err error) error {
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		return fmt.Errorf("%s %s: %w", urlErr.Op, urlErr.URL, urlErr.Err)
	}
	return err
}
