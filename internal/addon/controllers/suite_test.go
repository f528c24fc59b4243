package controllers_test

// These tests run the add-on's controllers in-process, as the
// addon-manager wires them (addon.Controllers), in one manager whose
// writes pass the loop guard, against a real kube-apiserver (test/envtest)
// with CAPI's CRDs, ours and the upstream MAPI, config, Metal3 and MCO
// CRDs. They look only at what the API server holds: objects, and the
// events the controllers record. No CAPI, MAPI or OpenStack controller
// runs: where a test needs one, it plays it (and says so).

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/ocp-capi/ocp-capi/internal/addon"
	configv1 "github.com/ocp-capi/ocp-capi/internal/consumed/config/v1"
	"github.com/ocp-capi/ocp-capi/internal/manager"
	"github.com/ocp-capi/ocp-capi/test/envtest"
)

// The namespaces of the suite's manager (the flags' defaults) and the
// cluster's name (the Infrastructure's infrastructureName).
const (
	mapiNS      = addon.DefaultMAPINamespace
	capiNS      = addon.DefaultCAPINamespace
	clusterName = "ocp-x7k2p"
)

// timeout bounds every wait; it is only reached on failure.
const timeout = 60 * time.Second

var env *envtest.Environment

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
	stop, err := startAddon(ctx, env.ControllerConfig(), addon.NewOptions())
	if err != nil {
		fmt.Println("FAIL: add-on manager:", err)
		return 1
	}
	code := m.Run()
	cancel()
	if err := stop(); err != nil {
		fmt.Println("FAIL: add-on manager:", err)
		return 1
	}
	// A reconcile loop anywhere in the run fails it (docs/testing.md).
	return env.Guard.Finish(code)
}

// startAddon runs the add-on's controllers with opts, as the addon-manager
// does, in a manager on cfg; stop stops it and waits for it.
func startAddon(ctx context.Context, cfg *rest.Config, opts *addon.Options) (stop func() error, err error) {
	cfg = rest.CopyConfig(cfg)
	// No client-side rate limit: what is measured is the controllers'
	// requests, not client-go's queue.
	cfg.QPS = -1
	mgr, err := ctrl.NewManager(cfg, env.ManagerOptions())
	if err != nil {
		return nil, err
	}
	for _, c := range addon.Controllers(opts) {
		if err := c.Setup(ctx, mgr, manager.ControllerOptions{MaxConcurrentReconciles: 4}); err != nil {
			return nil, fmt.Errorf("setting up %s: %w", c.Name, err)
		}
	}
	return envtest.RunManager(ctx, mgr), nil
}

// setupCluster makes the namespaces and the Infrastructure singleton.
func setupCluster(ctx context.Context) error {
	for _, ns := range []string{mapiNS, capiNS} {
		if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return err
		}
	}
	infra := &configv1.Infrastructure{
		ObjectMeta: metav1.ObjectMeta{Name: "cluster"},
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
