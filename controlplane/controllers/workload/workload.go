// Package workload gives the control-plane controller clients of workload
// clusters, made from the kubeconfig it keeps in <cluster>-kubeconfig. A
// client is kept per cluster and made anew when the kubeconfig changes (a
// rotated admin kubeconfig), so a refresh needs no restart. The clients are
// uncached: the controller reads one object (the ClusterVersion) and only
// while an upgrade is wanted or running.
package workload

import (
	"crypto/sha256"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1 "github.com/ocp-capi/ocp-capi/internal/consumed/config/v1"
)

// Timeout bounds each request to a workload cluster.
const Timeout = 10 * time.Second

// Clients are workload cluster clients, one per cluster.
type Clients struct {
	scheme *runtime.Scheme
	mu     sync.Mutex
	byKey  map[types.NamespacedName]entry
	// UserAgent is sent to the workload clusters.
	UserAgent string
}

type entry struct {
	sum    [sha256.Size]byte
	client client.Client
}

// New returns an empty set of clients.
func New() (*Clients, error) {
	s := runtime.NewScheme()
	if err := configv1.AddToScheme(s); err != nil {
		return nil, err
	}
	return &Clients{scheme: s, byKey: map[types.NamespacedName]entry{}, UserAgent: "controlplane-manager"}, nil
}

// Get returns the client of the cluster key for kubeconfig, making it when
// there is none or the kubeconfig changed.
func (c *Clients) Get(key types.NamespacedName, kubeconfig []byte) (client.Client, error) {
	sum := sha256.Sum256(kubeconfig)
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[key]; ok && e.sum == sum {
		return e.client, nil
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("parsing the kubeconfig of cluster %s: %w", key, err)
	}
	if cfg.ExecProvider != nil || cfg.AuthProvider != nil {
		return nil, fmt.Errorf("the kubeconfig of cluster %s uses an exec or auth provider plugin, which the controller does not run", key)
	}
	cfg.Timeout = Timeout
	cfg.UserAgent = c.UserAgent
	cfg.QPS, cfg.Burst = 5, 10
	cl, err := client.New(cfg, client.Options{Scheme: c.scheme})
	if err != nil {
		return nil, fmt.Errorf("making a client of cluster %s: %w", key, err)
	}
	c.byKey[key] = entry{sum: sum, client: cl}
	return cl, nil
}

// Forget drops the client of a deleted cluster.
func (c *Clients) Forget(key types.NamespacedName) {
	c.mu.Lock()
	delete(c.byKey, key)
	c.mu.Unlock()
}
