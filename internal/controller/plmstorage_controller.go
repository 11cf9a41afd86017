package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/gatewall/gatewall/internal/plm"
)

// StorageSettings receives the PLM storage credentials and TLS settings.
type StorageSettings interface {
	SetCredentials(accessKeyID, secretAccessKey string)
	SetTLS(plm.TLSSettings) error
	// Hold keeps fetches from starting until Release, saying why; it does
	// nothing once released.
	Hold(why string)
	Release()
}

// PLMStorageConfig names the Secrets of the PLM storage flags.
type PLMStorageConfig struct {
	Credentials, CA, ClientSSL *types.NamespacedName
	SkipVerify                 bool
}

// PLMStorageReconciler watches the PLM storage Secrets and hands their
// contents to the fetcher, so rotated credentials and certificates take
// effect without a restart. The fetcher starts fetching once every
// configured Secret has been read and applied (Release); until then its
// pending bundles say what is missing. Settings that cannot be used later
// leave the previous ones in force.
type PLMStorageReconciler struct {
	// APIReader reads the Secrets from the API server: the manager caches
	// only the metadata of Secrets.
	APIReader client.Reader
	Config    PLMStorageConfig
	Storage   StorageSettings
}

// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch

// Reconcile re-reads all the Secrets whenever one changes.
func (r *PLMStorageReconciler) Reconcile(ctx context.Context, _ ctrl.Request) (ctrl.Result, error) {
	problem, err := r.apply(ctx)
	if problem == "" {
		r.Storage.Release()
		return ctrl.Result{}, nil
	}
	r.Storage.Hold(notAppliedYet + problem)
	if err == nil {
		log.FromContext(ctx).Error(errors.New(problem), "PLM storage settings are unusable; keeping the previous ones")
	}
	return ctrl.Result{}, err
}

// apply hands the fetcher what it can of the Secrets, and says what it could
// not: a Secret that cannot be read (err too, to retry), or settings that
// cannot be used.
func (r *PLMStorageReconciler) apply(ctx context.Context) (string, error) {
	get := func(k *types.NamespacedName) (*corev1.Secret, error) {
		if k == nil {
			return nil, nil
		}
		s := &corev1.Secret{}
		if err := r.APIReader.Get(ctx, *k, s); err != nil {
			return nil, fmt.Errorf("reading Secret %s: %w", k, err)
		}
		return s, nil
	}
	creds, err := get(r.Config.Credentials)
	if err != nil {
		return err.Error(), err
	}
	var problems []string
	if creds != nil {
		id, secret, err := plm.CredentialsFromSecret(creds)
		if err != nil {
			problems = append(problems, fmt.Sprintf("credentials in Secret %s: %v", r.Config.Credentials, err))
		} else {
			r.Storage.SetCredentials(id, secret)
		}
	}
	ca, err := get(r.Config.CA)
	if err != nil {
		return err.Error(), err
	}
	cl, err := get(r.Config.ClientSSL)
	if err != nil {
		return err.Error(), err
	}
	settings, err := plm.TLSFromSecrets(ca, cl, r.Config.SkipVerify)
	if err == nil {
		err = r.Storage.SetTLS(settings)
	}
	if err != nil {
		problems = append(problems, fmt.Sprintf("TLS: %v", err))
	}
	return strings.Join(problems, "; "), nil
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

// notAppliedYet starts what pending bundles say while the fetcher is held.
const notAppliedYet = "PLM storage settings not applied yet: "

// secretNames lists the configured Secrets, sorted, for messages.
func (r *PLMStorageReconciler) secretNames() string {
	var names []string
	for k := range r.names() {
		names = append(names, k.String())
	}
	slices.Sort(names)
	if len(names) == 1 {
		return "Secret " + names[0]
	}
	return "Secrets " + strings.Join(names, ", ")
}

// SetupWithManager registers the reconciler for the configured Secrets only,
// and holds the fetcher until its first reconcile has applied them all: a
// fetch before would go out without them, fail, and show that failure in
// statuses until the retry. It runs on every replica, as the fetcher does
// (BundleWarmer).
func (r *PLMStorageReconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.Storage.Hold(notAppliedYet + "waiting to read " + r.secretNames())
	names := r.names()
	ours := predicate.NewPredicateFuncs(func(o client.Object) bool { return names[client.ObjectKeyFromObject(o)] })
	return ctrl.NewControllerManagedBy(mgr).
		For(&corev1.Secret{}, builder.OnlyMetadata, builder.WithPredicates(ours)).
		Named("plmstorage").
		WithOptions(controller.Options{NeedLeaderElection: ptr.To(false)}).
		Complete(r)
}
