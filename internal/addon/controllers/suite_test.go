package controllers_test

// These tests run the add-on's controllers in-process, as the
// addon-manager wires them (addon.Controllers), in one manager whose
// writes pass the loop guard, against a real kube-apiserver (test/envtest)
// with CAPI's CRDs, ours and the upstream MAPI, config, Metal3 and MCO
// CRDs. They look only at what the API server holds: objects, and the
// events the controllers record. No CAPI, MAPI or OpenStack controller
// runs: the controllers that acknowledge a pause are played by the
// stand-ins of standin_test.go, for the whole run; where a test needs
// anything else of them, it plays it (and says so). The BuildController
// tests (build_*_test.go) run a BuildController each, with their own
// flags and stand-ins.

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/ocp-capi/ocp-capi/internal/addon"
	"github.com/ocp-capi/ocp-capi/internal/addon/controllers/buildcontroller"
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

var (
	env *envtest.Environment
	// reconcileErrors records the "Reconciler error" entries of every
	// controller of the process (reconcileErrorsOf).
	reconcileErrors envtest.ReconcileErrors
	// suiteCtx is the run's context; addon is the suite's add-on manager,
	// which restartAddon replaces.
	suiteCtx  context.Context
	addonMu   sync.Mutex
	stopAddon func() error
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	ctrl.SetLogger(reconcileErrors.Logger())
	var err error
	opts := envtest.Options{}
	if audit, err = envtest.NewAudit("addon", &opts); err != nil {
		fmt.Println("FAIL:", err)
		return 1
	}
	defer func() { _ = audit.Close() }()
	if env, err = envtest.Start(opts); err != nil {
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
	suiteCtx = ctx
	stopStandIns, err := env.RunStandIns(ctx, standMAO.setup, (&capiPause{}).setup)
	if err != nil {
		fmt.Println("FAIL: stand-ins:", err)
		return 1
	}
	defer func() { _ = stopStandIns() }()
	if stopAddon, err = startAddon(ctx, addonConfig(env.ControllerConfig()), addon.NewOptions(), 4); err != nil {
		fmt.Println("FAIL: add-on manager:", err)
		return 1
	}
	code := m.Run()
	addonMu.Lock()
	err = stopAddon()
	addonMu.Unlock()
	if err != nil {
		fmt.Println("FAIL: add-on manager:", err)
		return 1
	}
	// A reconcile loop anywhere in the run fails it (docs/testing.md).
	return env.Guard.Finish(code)
}

// addonConfig is cfg with the addon-manager's default client rate limit
// (--kube-api-qps 20, --kube-api-burst 30).
func addonConfig(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 20, 30
	return cfg
}

// startAddon runs the add-on's controllers with opts, as the addon-manager
// does, with workers workers each, in a manager on cfg; stop stops it and
// waits for it.
func startAddon(ctx context.Context, cfg *rest.Config, opts *addon.Options, workers int) (stop func() error, err error) {
	mgrOpts := env.ManagerOptions()
	cfg = audit.Manager(cfg, addonAgent, &mgrOpts)
	mgr, err := ctrl.NewManager(cfg, mgrOpts)
	if err != nil {
		return nil, err
	}
	for _, c := range addon.Controllers(opts) {
		co := manager.ControllerOptions{MaxConcurrentReconciles: workers}
		if c.Name == buildcontroller.ControllerName {
			// Each BuildController test runs its own, with its own flags
			// (build_helpers_test.go); this one watches none of their pools.
			co.WatchFilterValue = "addon-suite"
		}
		if err := c.Setup(ctx, mgr, co); err != nil {
			return nil, fmt.Errorf("setting up %s: %w", c.Name, err)
		}
	}
	return envtest.RunManager(ctx, mgr), nil
}

// restartAddon stops the suite's add-on manager, runs between (with no
// add-on controller running), and starts it again: a restart of the
// addon-manager.
func restartAddon(t *testing.T, between func()) {
	t.Helper()
	restartAddonWith(t, addonConfig(env.ControllerConfig()), between)
}

// restartAddonWith is restartAddon with the new manager on cfg. The
// manager is started again even if between fails the test.
func restartAddonWith(t *testing.T, cfg *rest.Config, between func()) {
	t.Helper()
	addonMu.Lock()
	defer addonMu.Unlock()
	if err := stopAddon(); err != nil {
		t.Fatalf("stopping the add-on manager: %v", err)
	}
	defer func() {
		var err error
		if stopAddon, err = startAddon(suiteCtx, cfg, addon.NewOptions(), 4); err != nil {
			t.Fatalf("starting the add-on manager again: %v", err)
		}
	}()
	between()
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
