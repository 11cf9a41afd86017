package controller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/gatewall/gatewall/internal/plm"
)

// StorageSettings receives the PLM storage credentials and TLS settings.
type StorageSettings interface {
	SetCredentials(accessKeyID, secretAccessKey string)
	SetTLS(plm.TLSSettings) error
}

// PLMStorageConfig names the Secrets of the PLM storage flags.
type PLMStorageConfig struct {
	Credentials, CA, ClientSSL *types.NamespacedName
	SkipVerify                 bool
}

// PLMStorageReconciler watches the PLM storage Secrets and hands their
// contents to the fetcher, so rotated credentials and certificates take
// effect without a restart.
type PLMStorageReconciler struct {
	client.Client
	Config  PLMStorageConfig
	Storage StorageSettings
}

// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch

// Reconcile re-reads all the Secrets whenever one changes.
func (r *PLMStorageReconciler) Reconcile(ctx context.Context, _ ctrl.Request) (ctrl.Result, error) {
	logger := log.FromContext(ctx)
	get := func(k *types.NamespacedName) (*corev1.Secret, error) {
		if k == nil {
			return nil, nil
		}
		s := &corev1.Secret{}
		if err := r.Get(ctx, *k, s); err != nil {
			return nil, fmt.Errorf("reading PLM storage Secret %s: %w", k, err)
		}
		return s, nil
	}
	creds, err := get(r.Config.Credentials)
	if err != nil {
		return ctrl.Result{}, err
	}
	if creds != nil {
		id, secret, err := plm.CredentialsFromSecret(creds)
		if err != nil {
			logger.Error(err, "PLM storage credentials are unusable; keeping the previous ones", "secret", r.Config.Credentials)
		} else {
			r.Storage.SetCredentials(id, secret)
		}
	}
	ca, err := get(r.Config.CA)
	if err != nil {
		return ctrl.Result{}, err
	}
	cl, err := get(r.Config.ClientSSL)
	if err != nil {
		return ctrl.Result{}, err
	}
	settings, err := plm.TLSFromSecrets(ca, cl, r.Config.SkipVerify)
	if err == nil {
		err = r.Storage.SetTLS(settings)
	}
	if err != nil {
		logger.Error(err, "PLM storage TLS settings are unusable; keeping the previous ones")
	}
	return ctrl.Result{}, nil
}

// names are the configured Secrets.
func (r *PLMStorageReconciler) names() map[types.NamespacedName]bool {
	out := map[types.NamespacedName]bool{}
	for _, k := range []*types.NamespacedName{r.Config.Credentials, r.Config.CA, r.Config.ClientSSL} {
		if k != nil {
			out[*k] = true
		}
	}
	return out
}

// SetupWithManager registers the reconciler for the configured Secrets only.
func (r *PLMStorageReconciler) SetupWithManager(mgr ctrl.Manager) error {
	names := r.names()
	ours := predicate.NewPredicateFuncs(func(o client.Object) bool { return names[client.ObjectKeyFromObject(o)] })
	return ctrl.NewControllerManagedBy(mgr).
		For(&corev1.Secret{}, builder.WithPredicates(ours)).
		Named("plmstorage").
		Complete(r)
}
