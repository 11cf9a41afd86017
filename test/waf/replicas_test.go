package waf_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	appprotectv1 "github.com/gatewall/gatewall/api/plm/appprotect/v1"
	"github.com/gatewall/gatewall/internal/dataplane"
	"github.com/gatewall/gatewall/internal/manager"
	plmfetch "github.com/gatewall/gatewall/internal/plm"
	"github.com/gatewall/gatewall/test/s3test"
)

// TestFollowerWarmsItsCacheAndLeadsWarm: with two replicas, the follower
// fetches the bundles too, into its own cache; when the leader goes while
// PLM storage is down, the new leader publishes the WAF Gateway with its
// bundle at once, holding nothing back.
func TestFollowerWarmsItsCacheAndLeadsWarm(t *testing.T) {
	srv := s3test.Start(t, plmfetch.AccessKeyID, adminSecret, nil)
	createCredentials(t, "plm-storage-credentials")
	replica := func(cacheDir string) (*dataplane.HeldFiles, func()) {
		held := dataplane.NewHeldFiles()
		opts := managerOptions(held, manager.PLMOptions{StorageURL: srv.URL(), Bucket: bucket, CacheDir: cacheDir, CredentialsSecret: "plm-storage-credentials"})
		opts.LeaderElection, opts.LeaderElectionID = true, "waf-replicas-test"
		return held, start(t, opts)
	}
	leaderCache, followerCache := t.TempDir(), t.TempDir()
	leaderFiles, stopLeader := replica(leaderCache)
	ns := "waf-replicas"
	world(t, ns)
	gw := types.NamespacedName{Namespace: ns, Name: "gw"}
	v1 := []byte("compiled bundle both replicas hold\n")
	srv.Put(nil, bucket, "replicas-v1.tgz", v1)
	compiled(t, ns, "replicas-v1.tgz", sum(v1))
	eventually(t, 30*time.Second, func() error {
		if _, ok := heldBundle(leaderFiles, gw, sum(v1)); !ok {
			return fmt.Errorf("the leader did not deliver the bundle")
		}
		return nil
	})
	followerFiles, _ := replica(followerCache)
	eventually(t, 30*time.Second, func() error {
		if _, err := os.Stat(filepath.Join(followerCache, sum(v1))); err != nil {
			return fmt.Errorf("the follower's cache has no bundle: %v", err)
		}
		return nil
	})
	if files := followerFiles.Files(gw); files != nil {
		t.Fatalf("the follower published a configuration")
	}

	srv.Stop()
	stopLeader()
	eventually(t, 60*time.Second, func() error {
		if data, ok := heldBundle(followerFiles, gw, sum(v1)); !ok || string(data) != string(v1) {
			return fmt.Errorf("the new leader did not publish the Gateway with its bundle")
		}
		return nil
	})
}

// TestOnlyServedPoliciesAreFetched: the bundles of a policy whose target is
// another controller's Gateway, or no Gateway at all, are never fetched;
// the policy on Gatewall's Gateway gets its bundle.
func TestOnlyServedPoliciesAreFetched(t *testing.T) {
	srv := s3test.Start(t, plmfetch.AccessKeyID, adminSecret, nil)
	held := startManager(t, srv.URL())
	ns := "waf-served"
	world(t, ns)
	gw := types.NamespacedName{Namespace: ns, Name: "gw"}
	create(t,
		&gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "someone-else"}, Spec: gatewayv1.GatewayClassSpec{ControllerName: "example.com/another-controller"}},
		&gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "theirs"}, Spec: gatewayv1.GatewaySpec{
			GatewayClassName: "someone-else",
			Listeners:        []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}},
		}},
		httpRoute(ns, "their-route", "theirs", "theirs.example.com"),
		&appprotectv1.APPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "theirs"}},
	)
	for name, target := range map[string]gatewayv1.LocalPolicyTargetReference{
		"on-their-gateway": {Group: gatewayv1.GroupName, Kind: "Gateway", Name: "theirs"},
		"on-their-route":   {Group: gatewayv1.GroupName, Kind: "HTTPRoute", Name: "their-route"},
		"on-nothing":       {Group: gatewayv1.GroupName, Kind: "Gateway", Name: "does-not-exist"},
	} {
		create(t, &v1alpha1.WAFGatewayBindingPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1alpha1.WAFGatewayBindingPolicySpec{
			TargetRefs:     []gatewayv1.LocalPolicyTargetReference{target},
			APPolicySource: v1alpha1.PLMObjectReference{Name: "theirs"},
		}})
	}
	ours, theirs := []byte("bundle of the served policy\n"), []byte("bundle of policies Gatewall does not serve\n")
	srv.Put(nil, bucket, "served.tgz", ours)
	srv.Put(nil, bucket, "not-served.tgz", theirs)
	compiledAs(t, types.NamespacedName{Namespace: ns, Name: "theirs"}, "not-served.tgz", sum(theirs))
	compiled(t, ns, "served.tgz", sum(ours))
	eventually(t, 30*time.Second, func() error {
		if _, ok := heldBundle(held, gw, sum(ours)); !ok {
			return fmt.Errorf("the served policy's bundle was not delivered")
		}
		return nil
	})
	// The warmer has seen every object by now; give a fetch time to show.
	time.Sleep(2 * time.Second)
	if n := srv.GetObjectRequests("not-served.tgz"); n != 0 {
		t.Errorf("the bundle of policies on no Gateway of Gatewall's was fetched %d times; want 0", n)
	}
}
