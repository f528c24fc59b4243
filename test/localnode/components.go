package localnode

import (
	"path/filepath"
	"strconv"
)

// Component is one process of the node.
type Component struct {
	// Name is the log file's and pid entry's name.
	Name string
	// Path is the binary.
	Path string
	Args []string
	// InNode runs it inside the node's network namespace.
	InNode bool
}

// Components are the node's daemons in start order; they stop in reverse.
// binDir holds the Kubernetes binaries and etcd.
func Components(i Instance, l Layout, binDir string) []Component {
	pki := func(f string) string { return filepath.Join(l.PKIDir(), f) }
	kc := l.ComponentKubeconfig
	bin := func(n string) string { return filepath.Join(binDir, n) }
	svc := "--service-cluster-ip-range=" + ServiceCIDR
	return []Component{
		{Name: "containerd", Path: "containerd", InNode: true, Args: []string{"--config", l.ContainerdConfig()}},
		{Name: "etcd", Path: bin("etcd"), InNode: true, Args: []string{
			"--name=default", "--data-dir=" + l.EtcdData(),
			"--listen-client-urls=http://127.0.0.1:2379", "--advertise-client-urls=http://127.0.0.1:2379",
			"--listen-peer-urls=http://127.0.0.1:2380", "--initial-advertise-peer-urls=http://127.0.0.1:2380",
			"--initial-cluster=default=http://127.0.0.1:2380", "--listen-metrics-urls=http://127.0.0.1:2381",
			// A throwaway cluster: speed over durability.
			"--unsafe-no-fsync", "--snapshot-count=10000", "--log-level=warn",
		}},
		{Name: "kube-apiserver", Path: bin("kube-apiserver"), InNode: true, Args: []string{
			// The `kubernetes` Service's endpoint may not be loopback:
			// advertise the node IP, listen on every address of the
			// namespace (lo, node bridge, pod gateway).
			"--advertise-address=" + i.NodeIP(), "--bind-address=0.0.0.0", "--secure-port=" + strconv.Itoa(APIServerPort),
			"--etcd-servers=http://127.0.0.1:2379",
			svc, "--service-node-port-range=30000-32767",
			"--client-ca-file=" + pki("ca.crt"), "--tls-cert-file=" + pki("apiserver.crt"), "--tls-private-key-file=" + pki("apiserver.key"),
			"--kubelet-client-certificate=" + pki("apiserver-kubelet-client.crt"), "--kubelet-client-key=" + pki("apiserver-kubelet-client.key"),
			"--kubelet-certificate-authority=" + pki("ca.crt"), "--kubelet-preferred-address-types=InternalIP",
			"--service-account-issuer=https://kubernetes.default.svc." + ClusterDomain,
			"--service-account-key-file=" + pki(saPubFile), "--service-account-signing-key-file=" + pki(saKeyFile),
			"--authorization-mode=Node,RBAC", "--enable-admission-plugins=NodeRestriction", "--allow-privileged=true",
			// Webhooks and aggregated APIs are called at the endpoint's IP,
			// as on a kind cluster's control-plane node.
			"--enable-aggregator-routing=true",
			"--requestheader-client-ca-file=" + pki("front-proxy-ca.crt"), "--requestheader-allowed-names=front-proxy-client",
			"--requestheader-extra-headers-prefix=X-Remote-Extra-", "--requestheader-group-headers=X-Remote-Group",
			"--requestheader-username-headers=X-Remote-User",
			"--proxy-client-cert-file=" + pki("front-proxy-client.crt"), "--proxy-client-key-file=" + pki("front-proxy-client.key"),
			"--profiling=false",
		}},
		{Name: "kube-controller-manager", Path: bin("kube-controller-manager"), InNode: true, Args: []string{
			"--kubeconfig=" + kc("controller-manager"), "--authentication-kubeconfig=" + kc("controller-manager"),
			"--authorization-kubeconfig=" + kc("controller-manager"), "--bind-address=127.0.0.1",
			"--client-ca-file=" + pki("ca.crt"), "--requestheader-client-ca-file=" + pki("front-proxy-ca.crt"),
			"--cluster-signing-cert-file=" + pki("ca.crt"), "--cluster-signing-key-file=" + pki("ca.key"),
			"--root-ca-file=" + pki("ca.crt"), "--service-account-private-key-file=" + pki(saKeyFile),
			"--use-service-account-credentials=true", "--controllers=*,bootstrapsigner,tokencleaner",
			svc, "--leader-elect=false", "--profiling=false",
			// Its FlexVolume prober creates this directory; the default
			// is /usr/libexec/kubernetes/..., outside the state dir.
			"--flex-volume-plugin-dir=" + l.KubeletRoot() + "/volume-plugins",
		}},
		{Name: "kube-scheduler", Path: bin("kube-scheduler"), InNode: true, Args: []string{
			"--kubeconfig=" + kc("scheduler"), "--authentication-kubeconfig=" + kc("scheduler"),
			"--authorization-kubeconfig=" + kc("scheduler"), "--bind-address=127.0.0.1",
			"--leader-elect=false", "--profiling=false",
		}},
		{Name: "kubelet", Path: bin("kubelet"), InNode: true, Args: []string{
			"--config=" + l.KubeletConfig(), "--kubeconfig=" + kc("kubelet"),
			"--root-dir=" + l.KubeletRoot(), "--cert-dir=" + filepath.Join(l.KubeletRoot(), "pki"),
			"--node-ip=" + i.NodeIP(), "--hostname-override=" + i.NodeName(),
		}},
		{Name: "kube-proxy", Path: bin("kube-proxy"), InNode: true, Args: []string{"--config=" + l.KubeProxyConfig()}},
	}
}

// Forward is one socat process of a forward. Each forward is two socats
// joined by a unix socket, one on each side of the namespace boundary, so
// that no address outside loopback is ever created in the root namespace.
type Forward struct {
	Name   string
	InNode bool
	Args   []string
}

// APIForward makes kube-apiserver reachable on the root namespace's
// 127.0.0.1:<APIPort>.
func APIForward(i Instance, l Layout) []Forward {
	sock := l.ForwardSocket("api")
	return []Forward{
		{Name: "forward-api-node", InNode: true, Args: []string{
			"UNIX-LISTEN:" + sock + ",fork,unlink-early,mode=600", "TCP:127.0.0.1:" + strconv.Itoa(APIServerPort)}},
		{Name: "forward-api", Args: []string{
			"TCP-LISTEN:" + strconv.Itoa(i.APIPort) + ",bind=127.0.0.1,reuseaddr,fork", "UNIX-CONNECT:" + sock}},
	}
}

// HostPortForwards make the root namespace's 127.0.0.1:<port> reachable
// from inside the node at the same port on every address of the node's
// namespace: 127.0.0.1 (hostNetwork pods keep loopback URLs unchanged), the
// node IP and the pod gateway (pods on the pod network).
func HostPortForwards(l Layout, ports []int) []Forward {
	var out []Forward
	for _, p := range ports {
		ps, sock := strconv.Itoa(p), l.HostPortSocket(p)
		out = append(out,
			Forward{Name: "forward-host-" + ps, Args: []string{
				"UNIX-LISTEN:" + sock + ",fork,unlink-early,mode=600", "TCP:127.0.0.1:" + ps}},
			Forward{Name: "forward-host-" + ps + "-node", InNode: true, Args: []string{
				"TCP-LISTEN:" + ps + ",bind=0.0.0.0,reuseaddr,fork", "UNIX-CONNECT:" + sock}},
		)
	}
	return out
}
