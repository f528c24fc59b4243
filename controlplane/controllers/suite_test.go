// Package controllers_test is the control-plane provider's controller
// suite (docs/architecture.md, Tests): it runs the provider's controller
// in-process, as the controlplane-manager wires it
// (controlplane.Controllers), against a real API server with the upstream
// CRDs (test/envtest). Beside it run the real bootstrap provider
// (bootstrap.Controllers: the control plane's flows need its data secrets
// and Agent approvals, so both providers are exercised together here,
// which is intended), the assisted-service simulator (test/assisted),
// which fills InfraEnvs, serves discovery ignitions, registers Agents when
// hosts boot, drives the AgentClusterInstalls, plays assisted-service's
// finalizers and, for the upgrade test, the cluster-version operator of a
// workload cluster that a second real API server plays, and the fake CAPI
// core (test/fakecapi, docs/testing.md).
//
// CAPI core and the infrastructure provider do not run here (envtest has no
// controller-manager either, so no garbage collector). The fake CAPI core,
// with its Machine deletion and Nodes, plays as little as the flows need:
// it makes a Machine the controller of its bootstrap config and
// infrastructure machine, copies the config's data secret name onto the
// Machine, provisions the Metal3Machine on a BareMetalHost of its own,
// records the Node (status.nodeRef and the Ready and Available conditions)
// once the host's Agent is installed, and on deletion deletes the
// Machine's config and infrastructure machine before dropping the
// Machine's finalizer. The tests play the rest explicitly: the Cluster (its
// infrastructure provisioned, failure domains, owner reference of the
// control plane) and the worker Machines that MachineDeployments and
// MachineSets would make.
package controllers_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ocp-capi/ocp-capi/bootstrap"
	"github.com/ocp-capi/ocp-capi/controlplane"
	"github.com/ocp-capi/ocp-capi/internal/manager"
	"github.com/ocp-capi/ocp-capi/test/assisted"
	"github.com/ocp-capi/ocp-capi/test/envtest"
	"github.com/ocp-capi/ocp-capi/test/fakecapi"
)

// watchValue is the shared control-plane manager's --watch-filter; tests
// that run their own manager use their own value.
const watchValue = "controlplane-envtest"

// wait bounds every Eventually; it is only reached on failure.
const (
	wait = 90 * time.Second
	tick = 50 * time.Millisecond
	// installStep is the least time between two steps of an installation
	// (the simulator's MinStepInterval; assisted-service's cluster monitor
	// runs every 10 s, 1 s in its own subsystem tests). Without it an
	// installation's every step, and every write of the control plane that
	// follows it, falls within a few seconds.
	installStep = 400 * time.Millisecond
)

// upgradePoll is the control-plane manager's --upgrade-poll-interval here:
// the simulated cluster-version operator finishes an update at once.
const upgradePoll = 200 * time.Millisecond

var (
	env *envtest.Environment
	sim *assisted.Simulator
	k8s client.Client
	// infraGV is the Metal3 version the tests write (the storage one).
	infraGV = fakecapi.InfraGroupVersion
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	ctrl.SetLogger(reconcileErrors.Logger())
	var err error
	opts := envtest.Options{}
	if audit, err = envtest.NewAudit("controlplane", &opts); err != nil {
		fmt.Println("FAIL:", err)
		return 1
	}
	defer func() { _ = audit.Close() }()
	if env, err = envtest.Start(opts); err != nil {
		fmt.Println("FAIL: starting the API server:", err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	for _, add := range append(controlplane.AddToScheme, bootstrap.AddToScheme...) {
		if err := add(env.Scheme); err != nil {
			fmt.Println("FAIL:", err)
			return 1
		}
	}
	k8s = env.Client
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := env.LabelMetal3CRDs(ctx); err != nil {
		fmt.Println("FAIL: labelling the Metal3 CRDs:", err)
		return 1
	}

	if sim, err = assisted.New(assisted.Options{MinStepInterval: installStep}); err != nil {
		fmt.Println("FAIL:", err)
		return 1
	}
	capi := fakecapi.New(fakecapi.Options{MachineDeletion: true, Nodes: true})
	stopSim, err := env.RunStandIns(ctx, sim.SetupWithManager, capi.SetupWithManager)
	if err != nil {
		fmt.Println("FAIL: simulator and fake CAPI:", err)
		return 1
	}

	// One bootstrap provider for every test, unfiltered: it is not what
	// these tests look at, and its objects carry the control plane's
	// watch-filter label anyway.
	stopBootstrap, err := startBootstrap(ctx, env.UnthrottledConfig())
	if err != nil {
		fmt.Println("FAIL: bootstrap manager:", err)
		return 1
	}
	stopCP, err := startControlPlane(ctx, env.Config, watchValue)
	if err != nil {
		fmt.Println("FAIL: control-plane manager:", err)
		return 1
	}
	code := m.Run()
	stopCP()
	stopBootstrap()
	cancel()
	err = stopSim()
	runSuiteCleanups()
	if err != nil {
		fmt.Println("FAIL: simulator manager:", err)
		return 1
	}
	// A reconcile loop anywhere in the run fails it (docs/testing.md).
	return env.Guard.Finish(code)
}

// newManager builds a manager of one of our providers, with the provider's
// cache (as its binary has it), an audited one with the user agent agent
// when auditing; its writes pass the loop guard.
func newManager(cfg *rest.Config, agent string, c manager.Cache) (ctrl.Manager, error) {
	opts := env.ManagerOptions()
	if err := manager.ApplyCache(&opts, c); err != nil {
		return nil, err
	}
	cfg = audit.Manager(cfg, agent, &opts)
	return ctrl.NewManager(env.Guard.WrapConfig(cfg), opts)
}

// startControlPlane runs the provider's controller as the
// controlplane-manager does (10 workers, the watch filter) and returns a
// function that stops the manager and waits for it.
func startControlPlane(ctx context.Context, cfg *rest.Config, filter string) (func(), error) {
	mgr, err := newManager(cfg, controlPlaneAgent, controlplane.Cache)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	for _, c := range controlplane.Controllers(&controlplane.Options{UpgradePollInterval: upgradePoll}) {
		if err := c.Setup(ctx, mgr, manager.ControllerOptions{MaxConcurrentReconciles: 10, WatchFilterValue: filter}); err != nil {
			cancel()
			return nil, fmt.Errorf("setting up %s: %w", c.Name, err)
		}
	}
	return startMgr(ctx, cancel, mgr, "control-plane manager"), nil
}

// startBootstrap runs the bootstrap provider, trusting the simulator's CA.
func startBootstrap(ctx context.Context, cfg *rest.Config) (func(), error) {
	mgr, err := newManager(cfg, bootstrapAgent, bootstrap.Cache)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	for _, c := range bootstrap.Controllers(&bootstrap.Options{CABundle: sim.CABundle()}) {
		if err := c.Setup(ctx, mgr, manager.ControllerOptions{MaxConcurrentReconciles: 10}); err != nil {
			cancel()
			return nil, fmt.Errorf("setting up %s: %w", c.Name, err)
		}
	}
	return startMgr(ctx, cancel, mgr, "bootstrap manager"), nil
}

// startMgr runs mgr; the function it returns cancels ctx (the one the
// controllers were set up with) and waits for the manager, once.
func startMgr(ctx context.Context, cancel context.CancelFunc, mgr ctrl.Manager, what string) func() {
	stop := envtest.RunManager(ctx, mgr)
	var once sync.Once
	return func() {
		once.Do(func() {
			cancel()
			if err := stop(); err != nil {
				fmt.Println(what+":", err)
			}
		})
	}
}

// ---- logging ----

// reconcileErrors records the "Reconciler error" entries of every
// controller of the process; tests fail on their namespace's.
var reconcileErrors envtest.ReconcileErrors

// reconcileErrorsIn returns the reconcile errors of the control-plane
// controller in ns. A manager that a test stops cancels what it was doing.
func reconcileErrorsIn(ns string) []string {
	return slices.DeleteFunc(reconcileErrors.In(ns), func(e string) bool {
		return !strings.HasPrefix(e, "openshiftassistedcontrolplane ") || envtest.IsStopError(e)
	})
}
