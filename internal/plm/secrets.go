package plm

import (
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Keys and values of the Secrets named by the manager's --plm-storage-* flags.
const (
	// CredentialsSecretKey holds the S3 secret access key.
	CredentialsSecretKey = "seaweedfs_admin_secret"
	// AccessKeyID is the access key id that goes with it: PLM's storage has a
	// single admin account.
	AccessKeyID = "admin"
	// CASecretKey holds the CA that signs the storage server's certificate.
	CASecretKey = "ca.crt"
	// ClientCertSecretKey and ClientKeySecretKey hold the client certificate
	// and key for mutual TLS.
	ClientCertSecretKey = corev1.TLSCertKey
	ClientKeySecretKey  = corev1.TLSPrivateKeyKey
)

// CredentialsFromSecret reads the storage credentials from the Secret named
// by --plm-storage-credentials-secret. Trailing whitespace is dropped: a
// Secret made with `kubectl create secret --from-file` often ends in a
// newline, and S3 secret keys never contain whitespace.
func CredentialsFromSecret(s *corev1.Secret) (accessKeyID, secretAccessKey string, err error) {
	if s == nil {
		return "", "", errors.New("credentials Secret: nil")
	}
	v, ok := secretValue(s, CredentialsSecretKey)
	if !ok {
		return "", "", fmt.Errorf("Secret %s/%s: key %q missing", s.Namespace, s.Name, CredentialsSecretKey)
	}
	secret := strings.TrimRight(string(v), " \t\r\n")
	if secret == "" {
		return "", "", fmt.Errorf("Secret %s/%s: key %q is empty", s.Namespace, s.Name, CredentialsSecretKey)
	}
	return AccessKeyID, secret, nil
}

// TLSFromSecrets builds TLSSettings from the Secrets named by
// --plm-storage-ca-secret (ca) and --plm-storage-client-ssl-secret (client);
// either may be nil when its flag is not set. The result is validated.
func TLSFromSecrets(ca, client *corev1.Secret, skipVerify bool) (TLSSettings, error) {
	t := TLSSettings{SkipVerify: skipVerify}
	var errs []error
	if ca != nil {
		v, ok := secretValue(ca, CASecretKey)
		if ok && len(v) > 0 {
			t.CAPEM = v
			if err := (TLSSettings{CAPEM: v}).Validate(); err != nil {
				errs = append(errs, fmt.Errorf("Secret %s/%s: %w", ca.Namespace, ca.Name, err))
			}
		} else {
			errs = append(errs, fmt.Errorf("Secret %s/%s: key %q missing or empty", ca.Namespace, ca.Name, CASecretKey))
		}
	}
	if client != nil {
		crt, okCrt := secretValue(client, ClientCertSecretKey)
		key, okKey := secretValue(client, ClientKeySecretKey)
		switch {
		case !okCrt || len(crt) == 0:
			errs = append(errs, fmt.Errorf("Secret %s/%s: key %q missing or empty", client.Namespace, client.Name, ClientCertSecretKey))
		case !okKey || len(key) == 0:
			errs = append(errs, fmt.Errorf("Secret %s/%s: key %q missing or empty", client.Namespace, client.Name, ClientKeySecretKey))
		default:
			t.ClientCertPEM, t.ClientKeyPEM = crt, key
			if err := (TLSSettings{ClientCertPEM: crt, ClientKeyPEM: key}).Validate(); err != nil {
				errs = append(errs, fmt.Errorf("Secret %s/%s: %w", client.Namespace, client.Name, err))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return TLSSettings{}, err
	}
	return t, nil
}

// secretValue reads Data, and StringData for Secrets that never went through
// the API server (which folds StringData into Data).
func secretValue(s *corev1.Secret, key string) ([]byte, bool) {
	if v, ok := s.Data[key]; ok {
		return v, true
	}
	if v, ok := s.StringData[key]; ok {
		return []byte(v), true
	}
	return nil, false
}
