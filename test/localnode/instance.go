package localnode

import (
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"
)

// MaxIndex is the highest instance index: it is the third octet of the
// node and pod subnets.
const MaxIndex = 255

// Addresses that are the same in every instance: each instance has its own
// network namespace, so they never meet.
const (
	// APIServerPort is kube-apiserver's secure port inside the node.
	APIServerPort = 6443
	// ServiceCIDR is the ClusterIP range.
	ServiceCIDR = "10.96.0.0/16"
	// APIServiceIP is the `kubernetes` Service's ClusterIP (first of ServiceCIDR).
	APIServiceIP = "10.96.0.1"
	// DNSServiceIP is CoreDNS's ClusterIP, the kubelet's clusterDNS.
	DNSServiceIP = "10.96.0.10"
	// ClusterDomain is the kubelet's clusterDomain.
	ClusterDomain = "cluster.local"
	// DefaultAPIPortBase + index is the default forward port on 127.0.0.1.
	DefaultAPIPortBase = 6443
)

// nodePorts are the ports the node's own components listen on inside the
// network namespace; a host-port forward may not take them.
var nodePorts = map[int]string{
	2379:          "etcd",
	2380:          "etcd peer",
	2381:          "etcd metrics",
	APIServerPort: "kube-apiserver",
	10248:         "kubelet healthz",
	10249:         "kube-proxy metrics",
	10250:         "kubelet",
	10256:         "kube-proxy healthz",
	10257:         "kube-controller-manager",
	10259:         "kube-scheduler",
}

// Instance is one local node cluster. Everything that must differ between
// two clusters running at once is derived from Index, so two instances
// never share a subnet, port, cgroup, bridge or CNI network name.
type Instance struct {
	// Index picks the subnets and names (0..MaxIndex).
	Index int `json:"index"`
	// APIPort is the port on the root namespace's 127.0.0.1 that is forwarded
	// to kube-apiserver.
	APIPort int `json:"apiPort"`
}

// NewInstance validates index and port; port 0 means DefaultAPIPortBase+index.
func NewInstance(index, apiPort int) (Instance, error) {
	if index < 0 || index > MaxIndex {
		return Instance{}, fmt.Errorf("instance index %d out of range 0..%d", index, MaxIndex)
	}
	if apiPort == 0 {
		apiPort = DefaultAPIPortBase + index
	}
	if apiPort < 1 || apiPort > 65535 {
		return Instance{}, fmt.Errorf("API port %d out of range", apiPort)
	}
	return Instance{Index: index, APIPort: apiPort}, nil
}

// Name identifies the instance: the Node's name, the CNI network's name,
// the kubeconfig context and the cgroup root.
func (i Instance) Name() string { return fmt.Sprintf("ocp-capi-mgmt-%d", i.Index) }

// NodeName is the Kubernetes Node's name.
func (i Instance) NodeName() string { return i.Name() }

// NodeCIDR is the subnet of the node's bridge inside the namespace.
func (i Instance) NodeCIDR() string { return fmt.Sprintf("172.30.%d.0/24", i.Index) }

// NodeIP is the node's InternalIP, on the node bridge.
func (i Instance) NodeIP() string { return fmt.Sprintf("172.30.%d.2", i.Index) }

// PodCIDR is the node's pod subnet (bridge CNI, host-local IPAM).
func (i Instance) PodCIDR() string { return fmt.Sprintf("10.244.%d.0/24", i.Index) }

// PodGateway is the pod bridge's address, the pods' default gateway.
func (i Instance) PodGateway() string { return fmt.Sprintf("10.244.%d.1", i.Index) }

// NodeBridge holds the node IP. The kernel has no dummy driver, so an empty
// bridge stands in for one.
func (i Instance) NodeBridge() string { return fmt.Sprintf("mgmt%d", i.Index) }

// PodBridge is the bridge CNI's bridge.
func (i Instance) PodBridge() string { return fmt.Sprintf("mgmt%dpods", i.Index) }

// CNINetwork is the CNI network's name; libcni's cache entries in
// /var/lib/cni/results start with it.
func (i Instance) CNINetwork() string { return i.Name() }

// CgroupRoot is the kubelet's cgroupRoot. With the cgroupfs driver two
// kubelets on one root would share /kubepods and delete each other's pods.
func (i Instance) CgroupRoot() string { return "/" + i.Name() }

// ParsePorts parses a comma-separated port list ("5000,8774"). Empty gives
// no ports. Duplicates are removed and the result is sorted.
func ParsePorts(s string) ([]int, error) {
	seen := map[int]bool{}
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		p, err := strconv.Atoi(f)
		if err != nil || p < 1 || p > 65535 {
			return nil, fmt.Errorf("bad port %q in %q", f, s)
		}
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	sort.Ints(out)
	return out, nil
}

// CheckHostPorts refuses forwards that would collide with the node's own
// listeners inside the namespace.
func CheckHostPorts(ports []int) error {
	for _, p := range ports {
		if what, ok := nodePorts[p]; ok {
			return fmt.Errorf("port %d cannot be forwarded from the host: %s listens on it inside the node", p, what)
		}
	}
	return nil
}

// checkAddrs is a self-check of the derived addresses (used by tests).
func (i Instance) checkAddrs() error {
	for _, c := range []string{i.NodeCIDR(), i.PodCIDR(), ServiceCIDR} {
		if _, err := netip.ParsePrefix(c); err != nil {
			return err
		}
	}
	for _, a := range []string{i.NodeIP(), i.PodGateway(), APIServiceIP, DNSServiceIP} {
		if _, err := netip.ParseAddr(a); err != nil {
			return err
		}
	}
	if len(i.PodBridge()) > 15 || len(i.NodeBridge()) > 15 {
		return fmt.Errorf("bridge name too long")
	}
	return nil
}
