package kubenode

import "testing"

func TestPlanNetwork(t *testing.T) {
	n, err := PlanNetwork("10.246.0.0/16")
	if err != nil {
		t.Fatal(err)
	}
	got := []string{n.CIDR.String(), n.Pods.String(), n.Gateway.String(), n.HostIP.String(), n.NodeIP.String()}
	want := []string{"10.246.0.0/16", "10.246.0.0/24", "10.246.0.1", "10.246.255.253", "10.246.255.254"}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("field %d: got %s, want %s", i, got[i], want[i])
		}
	}
	n, err = PlanNetwork("10.248.1.7/23")
	if err != nil {
		t.Fatal(err)
	}
	if n.Pods.String() != "10.248.0.0/24" || n.NodeIP.String() != "10.248.1.254" {
		t.Errorf("a /23: pods %s node %s", n.Pods, n.NodeIP)
	}
	for _, bad := range []string{"10.0.0.0/24", "8.8.0.0/16", "fd00::/64", "nonsense"} {
		if _, err := PlanNetwork(bad); err == nil {
			t.Errorf("%s: want an error", bad)
		}
	}
}
