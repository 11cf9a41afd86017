package kubenode

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// kubeletConfig is the KubeletConfiguration. This host has cgroup v1 only
// (failCgroupV1: false, the cgroupfs driver), swap may be on, and its disk is
// shared with other machines' work, free space going from tens of gigabytes
// to a few hundred megabytes: eviction is off ("0%" is the kubelet's way to
// set no threshold for a signal), so a disk or memory another process fills
// never taints the node and evicts the cluster's pods mid-test (seen in CI:
// every pod Failed, new ones unschedulable for "untolerated taint(s)"), and
// images are never garbage collected. The
// kubelet's cgroups are under the node's tree (cgroupRoot). The API server
// authenticates with a client certificate from the kubelet CA; nothing else
// reaches the kubelet's port.
const kubeletConfig = `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: /%s
failSwapOn: false
containerRuntimeEndpoint: unix://%s
address: %s
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
tlsCertFile: %s
tlsPrivateKeyFile: %s
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: false
  x509:
    clientCAFile: %s
authorization:
  mode: AlwaysAllow
clusterDNS: [%s]
clusterDomain: %s
resolvConf: /etc/resolv.conf
maxPods: 250
serializeImagePulls: false
evictionHard:
  memory.available: 0%%
  nodefs.available: 0%%
  nodefs.inodesFree: 0%%
  imagefs.available: 0%%
  imagefs.inodesFree: 0%%
  pid.available: 0%%
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
protectKernelDefaults: false
shutdownGracePeriod: 0s
`

// startKubelet writes the kubelet's certificates, kubeconfig and
// configuration, and starts it.
func startKubelet(s *sandbox, o Options) (*daemon, error) {
	dir := filepath.Join(o.StateDir, "kubelet-config")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	serving, err := o.KubeletCA.IssueServing(o.Name, []net.IP{net.ParseIP(o.network.NodeIP.String())}, []string{o.Name})
	if err != nil {
		return nil, err
	}
	cert, key, err := serving.WriteFiles(dir, "kubelet")
	if err != nil {
		return nil, err
	}
	ca := filepath.Join(dir, "client-ca.crt")
	if err := os.WriteFile(ca, o.KubeletCA.CertPEM(), 0o600); err != nil {
		return nil, err
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := writeKubeconfig(kubeconfig, o.Kubelet, o.apiServerURL()); err != nil {
		return nil, err
	}
	config := filepath.Join(dir, "config.yaml")
	content := fmt.Sprintf(kubeletConfig, o.cgroupName(), containerdSocket, o.network.NodeIP, cert, key, ca,
		o.ClusterDNS, o.ClusterDomain)
	if err := os.WriteFile(config, []byte(content), 0o600); err != nil {
		return nil, err
	}
	return startDaemon(s, o.LogDir, filepath.Join(o.BinDir, "kubelet"),
		"--config="+config, "--kubeconfig="+kubeconfig,
		"--node-ip="+o.network.NodeIP.String(), "--hostname-override="+o.Name)
}

// kubeProxyConfig is kube-proxy's configuration: iptables mode, conntrack
// left alone (its limits are global to the machine).
const kubeProxyConfig = `apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clientConnection:
  kubeconfig: %s
hostnameOverride: %s
clusterCIDR: %s
bindAddress: 0.0.0.0
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
`

// startKubeProxy writes kube-proxy's kubeconfig and configuration and starts it.
func startKubeProxy(s *sandbox, o Options) (*daemon, error) {
	dir := filepath.Join(o.StateDir, "kube-proxy-config")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := writeKubeconfig(kubeconfig, o.KubeProxy, o.apiServerURL()); err != nil {
		return nil, err
	}
	config := filepath.Join(dir, "config.yaml")
	content := fmt.Sprintf(kubeProxyConfig, kubeconfig, o.Name, o.network.CIDR)
	if err := os.WriteFile(config, []byte(content), 0o600); err != nil {
		return nil, err
	}
	return startDaemon(s, o.LogDir, filepath.Join(o.BinDir, "kube-proxy"), "--config="+config)
}

// writeKubeconfig writes cfg's credentials with server as the API server.
func writeKubeconfig(path string, cfg *rest.Config, server string) error {
	c := clientcmdapi.NewConfig()
	c.Clusters["local"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: cfg.CAData}
	c.AuthInfos["user"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData}
	c.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: "user"}
	c.CurrentContext = "local"
	return clientcmd.WriteToFile(*c, path)
}

// apiServerURL is the API server as the node reaches it: the forward on the
// node's address, on the API server's port.
func (o Options) apiServerURL() string {
	_, port, _ := net.SplitHostPort(o.apiServerTarget())
	return "https://" + net.JoinHostPort(o.network.NodeIP.String(), port)
}

// apiServerTarget is the API server's address on the host ("127.0.0.1:PORT").
func (o Options) apiServerTarget() string {
	u, err := url.Parse(o.Kubelet.Host)
	if err != nil || u.Host == "" {
		return o.Kubelet.Host
	}
	return u.Host
}

// cgroupName is the node's cgroup tree.
func (o Options) cgroupName() string { return "gatewall-" + o.Name }
