package testenv

import "testing"

// TestRefused: a manager log line counts as a refusal when RBAC forbade the
// manager's ServiceAccount a request or an admission policy denied one.
func TestRefused(t *testing.T) {
	for _, c := range []struct {
		line string
		want bool
	}{
		{`E1127 reflector.go:200] "Failed to watch" err="secrets is forbidden: User \"system:serviceaccount:gatewall-system:gatewall-controller-manager\" cannot list resource \"secrets\""`, true},
		{`{"level":"error","msg":"Reconciler error","error":"applying Deployment apps/gw-nginx: deployments.apps \"gw-nginx\" is forbidden: ValidatingAdmissionPolicy 'gatewall-manager-pods' with binding 'gatewall-manager-pods' denied request: a data-plane pod uses no host namespace"}`, true},
		{`secrets is forbidden: User "system:serviceaccount:tenant:app" cannot list resource "secrets"`, false},
		{`{"level":"info","msg":"Gateway reconciled","took":"3ms"}`, false},
	} {
		if got := refused(c.line); got != c.want {
			t.Errorf("refused(%s) = %v, want %v", c.line, got, c.want)
		}
	}
}
