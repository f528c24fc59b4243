package localnode

import (
	"fmt"
	"path/filepath"
	"strconv"
)

// Layout is where an instance keeps its files, all under one state
// directory. data/ survives `down --keep-data`; run/ and logs/ do not matter
// across restarts.
type Layout struct {
	Dir string
}

func (l Layout) path(p ...string) string { return filepath.Join(append([]string{l.Dir}, p...)...) }

// StateFile records the instance (index, port) so that `down` and a warm
// `up` know what they act on.
func (l Layout) StateFile() string { return l.path("node.json") }

// PKIDir holds the CA, the certificates and the service-account keys.
func (l Layout) PKIDir() string { return l.path("pki") }

// KubeconfigDir holds the components' kubeconfigs.
func (l Layout) KubeconfigDir() string { return l.path("kubeconfig.d") }

// ComponentKubeconfig is one component's kubeconfig.
func (l Layout) ComponentKubeconfig(name string) string {
	return filepath.Join(l.KubeconfigDir(), name+".conf")
}

// EtcDir holds the rendered configuration files.
func (l Layout) EtcDir() string { return l.path("etc") }

// ContainerdConfig is containerd's config.toml.
func (l Layout) ContainerdConfig() string { return l.path("etc", "containerd.toml") }

// KubeletConfig is the KubeletConfiguration file.
func (l Layout) KubeletConfig() string { return l.path("etc", "kubelet.yaml") }

// KubeProxyConfig is the KubeProxyConfiguration file.
func (l Layout) KubeProxyConfig() string { return l.path("etc", "kube-proxy.yaml") }

// ResolvConf is the kubelet's resolvConf (for dnsPolicy: Default pods).
func (l Layout) ResolvConf() string { return l.path("etc", "resolv.conf") }

// CNIConfDir is containerd's CNI conf_dir.
func (l Layout) CNIConfDir() string { return l.path("etc", "cni", "net.d") }

// DataDir survives a warm restart.
func (l Layout) DataDir() string { return l.path("data") }

// EtcdData is etcd's data directory.
func (l Layout) EtcdData() string { return l.path("data", "etcd") }

// ContainerdRoot is containerd's root (images, snapshots, metadata).
func (l Layout) ContainerdRoot() string { return l.path("data", "containerd") }

// ContainerdOpt is containerd's opt plugin path (default /opt/containerd).
func (l Layout) ContainerdOpt() string { return l.path("data", "containerd-opt") }

// KubeletRoot is the kubelet's --root-dir.
func (l Layout) KubeletRoot() string { return l.path("data", "kubelet") }

// PodLogs is the kubelet's podLogsDir (default /var/log/pods).
func (l Layout) PodLogs() string { return l.path("data", "pod-logs") }

// IPAMDir is host-local IPAM's dataDir (default /var/lib/cni/networks).
// Its allocations are dropped at every start: no sandbox survives a stop.
func (l Layout) IPAMDir() string { return l.path("run", "ipam") }

// RunDir holds sockets, pid files, namespaces and containerd's state.
func (l Layout) RunDir() string { return l.path("run") }

// NetNS is the node's network namespace, bind-mounted on a file.
func (l Layout) NetNS() string { return l.path("run", "netns") }

// ContainerdState is containerd's state directory (sockets, task bundles;
// with netns_mounts_under_state_dir also the pods' network namespaces).
func (l Layout) ContainerdState() string { return l.path("run", "containerd") }

// ContainerdSocket is containerd's gRPC socket.
func (l Layout) ContainerdSocket() string { return l.path("run", "containerd", "containerd.sock") }

// RuncRoot is runc's state root (default /run/containerd/runc).
func (l Layout) RuncRoot() string { return l.path("run", "runc") }

// PIDFile lists the components' pids for `status` and the cleanup.
func (l Layout) PIDFile() string { return l.path("run", "pids.json") }

// ForwardSocket is the unix socket of one forward: "api" or a host port.
func (l Layout) ForwardSocket(name string) string { return l.path("run", "fwd", name+".sock") }

// HostPortSocket is the unix socket of the forward of a host port.
func (l Layout) HostPortSocket(port int) string { return l.ForwardSocket("host-" + strconv.Itoa(port)) }

// LogDir holds one log file per component.
func (l Layout) LogDir() string { return l.path("logs") }

// Log is a component's log file.
func (l Layout) Log(name string) string { return l.path("logs", name+".log") }

// maxSocketPath is sun_path's size minus the terminating NUL.
const maxSocketPath = 107

// checkSocketPaths fails early when a socket would not fit in sun_path;
// the kubelet's own sockets under its root dir are the longest.
func (l Layout) checkSocketPaths() error {
	for _, p := range []string{
		l.ContainerdSocket() + ".ttrpc",
		l.HostPortSocket(65535),
		filepath.Join(l.KubeletRoot(), "plugins_registry", "kubernetes.io.csi-placeholder.sock"),
		filepath.Join(l.KubeletRoot(), "pod-resources", "kubelet.sock"),
	} {
		if len(p) > maxSocketPath {
			return fmt.Errorf("state directory %s is too deep: socket path %s is %d bytes, unix sockets allow %d; use a shorter --state-dir", l.Dir, p, len(p), maxSocketPath)
		}
	}
	return nil
}
