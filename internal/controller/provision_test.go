package controller

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestDeploymentStalled: pods the Deployment cannot create and a rollout
// past its deadline are news; a Deployment still progressing is not.
func TestDeploymentStalled(t *testing.T) {
	dep := func(conds ...appsv1.DeploymentCondition) *appsv1.Deployment {
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "gw-nginx"}, Status: appsv1.DeploymentStatus{Conditions: conds}}
	}
	progressing := appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "ReplicaSetUpdated"}
	for _, c := range []struct {
		name string
		d    *appsv1.Deployment
		want string
	}{
		{"progressing", dep(progressing), ""},
		{"no conditions yet", dep(), ""},
		{"quota", dep(progressing, appsv1.DeploymentCondition{Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue,
			Reason: "FailedCreate", Message: `pods "gw-nginx-1" is forbidden: exceeded quota`}),
			`Deployment gw-nginx cannot create pods: pods "gw-nginx-1" is forbidden: exceeded quota (FailedCreate)`},
		{"deadline", dep(appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse,
			Reason: "ProgressDeadlineExceeded", Message: `ReplicaSet "gw-nginx-1" has timed out progressing.`}),
			"Deployment gw-nginx is not progressing: ReplicaSet \"gw-nginx-1\" has timed out progressing. (ProgressDeadlineExceeded)"},
	} {
		got := deploymentStalled(c.d)
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
