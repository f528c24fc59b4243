package machinesetsync

// The tests run the controller in a manager against a real kube-apiserver
// (test/envtest) with CAPI's CRDs, ours and the upstream MAPI, config and
// Metal3 CRDs. Run them with KUBEBUILDER_ASSETS=<repo>/bin.

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	configv1 "github.com/ocp-capi/ocp-capi/internal/consumed/config/v1"
	"github.com/ocp-capi/ocp-capi/test/envtest"
)

const (
	mapiNS      = "openshift-machine-api"
	capiNS      = "openshift-cluster-api"
	clusterName = "ocp-x7k2p"
)

var (
	env *envtest.Environment
	// writes counts the running controller's writes.
	writes = &countingClient{}
	rec    = &recorder{}
	// mgrClient reads through the manager's cache.
	mgrClient client.Client
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	ctrl.SetLogger(envtest.NewLogger())
	var err error
	if env, err = envtest.Start(envtest.Options{}); err != nil {
		fmt.Println("FAIL: starting the API server:", err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := setupCluster(ctx); err != nil {
		fmt.Println("FAIL: setting up the cluster objects:", err)
		return 1
	}

	cfg := *env.Config
	// No client-side rate limit, as ctrl.GetConfig gives a manager in a
	// cluster.
	cfg.QPS = -1
	// Its writes pass the loop guard.
	mgr, err := ctrl.NewManager(env.Guard.WrapConfig(&cfg), env.ManagerOptions())
	if err != nil {
		fmt.Println("FAIL:", err)
		return 1
	}
	writes.Client = mgr.GetClient()
	mgrClient = mgr.GetClient()
	r := &Reconciler{Client: writes, Recorder: rec, MAPINamespace: mapiNS, CAPINamespace: capiNS}
	if err := r.SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: 10}); err != nil {
		fmt.Println("FAIL: setting up the controller:", err)
		return 1
	}
	stop := envtest.RunManager(ctx, mgr)

	code := m.Run()
	cancel()
	if err := stop(); err != nil {
		fmt.Println("FAIL: manager:", err)
		return 1
	}
	// A reconcile loop anywhere in the run fails it (docs/testing.md).
	return env.Guard.Finish(code)
}

// setupCluster makes the namespaces and the Infrastructure singleton.
func setupCluster(ctx context.Context) error {
	for _, ns := range []string{mapiNS, capiNS} {
		if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return err
		}
	}
	infra := &configv1.Infrastructure{
		ObjectMeta: metav1.ObjectMeta{Name: InfrastructureName},
		Spec:       configv1.InfrastructureSpec{PlatformSpec: configv1.PlatformSpec{Type: configv1.OpenStackPlatformType}},
	}
	if err := env.Client.Create(ctx, infra); err != nil {
		return err
	}
	infra.Status = configv1.InfrastructureStatus{
		InfrastructureName: clusterName, Platform: configv1.OpenStackPlatformType,
		PlatformStatus: &configv1.PlatformStatus{Type: configv1.OpenStackPlatformType, OpenStack: &configv1.OpenStackPlatformStatus{
			APIServerInternalIPs: []string{"10.0.0.5"}, IngressIPs: []string{"10.0.0.7"},
		}},
		APIServerURL: "https://api.ocp.example.com:6443", APIServerInternalURL: "https://api-int.ocp.example.com:6443",
		ControlPlaneTopology: configv1.HighlyAvailableTopologyMode, InfrastructureTopology: configv1.HighlyAvailableTopologyMode,
	}
	return env.Client.Status().Update(ctx, infra)
}

// countingClient counts the writes made through it.
type countingClient struct {
	client.Client
	n atomic.Int64
}

func (c *countingClient) Writes() int64 { return c.n.Load() }

func (c *countingClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	c.n.Add(1)
	return c.Client.Create(ctx, obj, opts...)
}

func (c *countingClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	c.n.Add(1)
	return c.Client.Update(ctx, obj, opts...)
}

func (c *countingClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	c.n.Add(1)
	return c.Client.Patch(ctx, obj, patch, opts...)
}

func (c *countingClient) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	c.n.Add(1)
	return c.Client.Apply(ctx, obj, opts...)
}

func (c *countingClient) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	c.n.Add(1)
	return c.Client.Delete(ctx, obj, opts...)
}

func (c *countingClient) DeleteAllOf(ctx context.Context, obj client.Object, opts ...client.DeleteAllOfOption) error {
	c.n.Add(1)
	return c.Client.DeleteAllOf(ctx, obj, opts...)
}

func (c *countingClient) Status() client.SubResourceWriter { return c.SubResource("status") }

func (c *countingClient) SubResource(name string) client.SubResourceClient {
	return &countingSubResource{SubResourceClient: c.Client.SubResource(name), n: &c.n}
}

type countingSubResource struct {
	client.SubResourceClient
	n *atomic.Int64
}

func (c *countingSubResource) Create(ctx context.Context, obj, sub client.Object, opts ...client.SubResourceCreateOption) error {
	c.n.Add(1)
	return c.SubResourceClient.Create(ctx, obj, sub, opts...)
}

func (c *countingSubResource) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	c.n.Add(1)
	return c.SubResourceClient.Update(ctx, obj, opts...)
}

func (c *countingSubResource) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	c.n.Add(1)
	return c.SubResourceClient.Patch(ctx, obj, patch, opts...)
}

func (c *countingSubResource) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
	c.n.Add(1)
	return c.SubResourceClient.Apply(ctx, obj, opts...)
}

// recorder keeps the events the controller records.
type recorder struct {
	mu     sync.Mutex
	events []event
}

type event struct {
	// Object is <namespace>/<name> of the regarding object.
	Object, Type, Reason, Note string
}

func (r *recorder) Eventf(regarding, _ runtime.Object, eventtype, reason, _, note string, args ...any) {
	m, err := meta.Accessor(regarding)
	if err != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, event{Object: m.GetNamespace() + "/" + m.GetName(), Type: eventtype, Reason: reason, Note: fmt.Sprintf(note, args...)})
}

// eventsFor returns the events regarding namespace/name.
func (r *recorder) eventsFor(namespace, name string) []event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []event
	for _, e := range r.events {
		if e.Object == namespace+"/"+name {
			out = append(out, e)
		}
	}
	return out
}
