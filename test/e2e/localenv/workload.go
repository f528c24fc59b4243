package localenv

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ocp-capi/ocp-capi/test/envtest"
	"github.com/ocp-capi/ocp-capi/test/localnode"
)

// The Service through which the management cluster's pods reach the
// workload API server. FitProviders creates it, with an EndpointSlice at
// the node's forward of the host port, in every management cluster, so the
// same kubeconfig works wherever the cluster's objects live: after
// `clusterctl move`, the moved kubeconfig Secret names the target's
// Service, not the source node's address (which the target cannot reach).
const (
	WorkloadServiceName      = "workload-api"
	WorkloadServiceNamespace = "default"
)

// podServer is the API server URL of PodKubeconfig: service (in
// WorkloadServiceNamespace) by its DNS name in the mgmt tool's cluster domain
// (the kubelet's clusterDomain and CoreDNS's zone), and the host port, which
// the Service keeps.
func podServer(service string, port int) string {
	return "https://" + service + "." + WorkloadServiceNamespace + ".svc." + localnode.ClusterDomain + ":" + strconv.Itoa(port)
}

// WorkloadServiceFor names the Service of a workload API server on port
// when several run at once (the scale suite): one Service per port, beside
// the shared WorkloadServiceName that the other suites use.
func WorkloadServiceFor(port int) string {
	return WorkloadServiceName + "-" + strconv.Itoa(port)
}

// WorkloadCluster is a real kube-apiserver (and etcd) on the host that
// plays an installed OpenShift cluster: the simulator writes its kubeconfig
// as the admin kubeconfig when the installation completes, creates its
// ClusterVersion there, and the kubelet stand-in registers the hosts'
// Nodes. It has every CRD the project knows (config.openshift.io included).
type WorkloadCluster struct {
	env *envtest.Environment
	// HostKubeconfig works on the host (127.0.0.1:<port>).
	HostKubeconfig []byte
	// PodKubeconfig works in the pods of any management cluster that
	// FitProviders prepared: the server is the Service podServer
	// names, whose endpoint is the node's forward of the port, and the
	// certificate (issued for localhost) is checked against "localhost".
	PodKubeconfig []byte
	Client        client.Client
}

// StartWorkloadCluster starts the API server on 127.0.0.1:port; dataDir
// keeps etcd's data across restarts ("" for a throw-away one). The
// management clusters' nodes must forward port (mgmt up
// --forward-host-ports).
func StartWorkloadCluster(port int, dataDir string) (*WorkloadCluster, error) {
	return StartWorkloadClusterBehind(port, WorkloadServiceName, dataDir)
}

// StartWorkloadClusterBehind is StartWorkloadCluster for a server that pods
// reach through the Service service in WorkloadServiceNamespace, which
// ApplyWorkloadService makes.
func StartWorkloadClusterBehind(port int, service, dataDir string) (*WorkloadCluster, error) {
	env, err := envtest.Start(envtest.Options{APIServerPort: port, DataDir: dataDir})
	if err != nil {
		return nil, fmt.Errorf("starting the workload API server on 127.0.0.1:%d (is the port free?): %w", port, err)
	}
	host, err := env.KubeConfig()
	if err != nil {
		_ = env.Stop()
		return nil, err
	}
	pod, err := podKubeconfig(host, service, port)
	if err != nil {
		_ = env.Stop()
		return nil, err
	}
	return &WorkloadCluster{env: env, HostKubeconfig: host, PodKubeconfig: pod, Client: env.Client}, nil
}

// podKubeconfig is the host kubeconfig with the server that pods use
// (service on port) and the certificate's name to check it against.
func podKubeconfig(host []byte, service string, port int) ([]byte, error) {
	cfg, err := clientcmd.Load(host)
	if err != nil {
		return nil, err
	}
	for _, c := range cfg.Clusters {
		c.Server = podServer(service, port)
		c.TLSServerName = "localhost"
	}
	return clientcmd.Write(*cfg)
}

// Stop stops the API server and etcd. An API server that does not stop
// within envtest's 30 s (clients of the management cluster's pods keep
// watches open on it) is killed: that is not an error for a throw-away
// server.
func (w *WorkloadCluster) Stop() error {
	if w == nil {
		return nil
	}
	err := w.env.Stop()
	if err != nil && strings.HasPrefix(err.Error(), "timeout waiting for process") {
		return nil
	}
	return err
}

// NodesByProviderID maps the workload cluster's Nodes' provider IDs to
// their names.
func (w *WorkloadCluster) NodesByProviderID(ctx context.Context) (map[string]string, error) {
	list := &corev1.NodeList{}
	if err := w.Client.List(ctx, list); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, n := range list.Items {
		out[n.Spec.ProviderID] = n.Name
	}
	return out, nil
}
