// Package controlplane_test runs the control-plane provider's controller
// in-process, as the controlplane-manager wires it (controlplane.Controllers),
// against a real API server with the upstream CRDs (test/envtest), together
// with the real bootstrap provider (bootstrap.Controllers) and the
// assisted-service simulator (test/assisted), which fills InfraEnvs, serves
// discovery ignitions, registers Agents when hosts boot, drives the
// AgentClusterInstalls, plays assisted-service's finalizers and, for the
// upgrade test, the cluster-version operator of a workload cluster that a
// second real API server plays.
//
// CAPI core and the infrastructure provider do not run here (envtest has no
// controller-manager either, so no garbage collector). fakeCAPI plays, as
// little as the flows need, what they would do: it makes a Machine the
// controller of its bootstrap config and infrastructure machine, copies the
// config's data secret name onto the Machine, provisions the Metal3Machine
// on a BareMetalHost of its own, records the Node (status.nodeRef and the
// Ready and Available conditions) once the host's Agent is installed, and
// on deletion deletes the Machine's config and infrastructure machine before
// dropping the Machine's finalizer. The tests play the rest explicitly: the
// Cluster (its infrastructure provisioned, failure domains, owner reference
// of the control plane) and the worker Machines that MachineDeployments and
// MachineSets would make.
package controlplane_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	capiconditions "sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	bootstrapv1 "github.com/ocp-capi/ocp-capi/api/bootstrap/v1alpha2"
	"github.com/ocp-capi/ocp-capi/bootstrap"
	"github.com/ocp-capi/ocp-capi/controlplane"
	aiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/agentinstall/v1beta1"
	bmhv1alpha1 "github.com/ocp-capi/ocp-capi/internal/consumed/baremetalhost/v1alpha1"
	"github.com/ocp-capi/ocp-capi/internal/manager"
	"github.com/ocp-capi/ocp-capi/test/assisted"
	"github.com/ocp-capi/ocp-capi/test/envtest"
)

// watchValue is the shared control-plane manager's --watch-filter; tests
// that run their own manager use their own value.
const watchValue = "controlplane-envtest"

// wait bounds every Eventually; it is only reached on failure.
const (
	wait = 90 * time.Second
	tick = 50 * time.Millisecond
)

// upgradePoll is the control-plane manager's --upgrade-poll-interval here:
// the simulated cluster-version operator finishes an update at once.
const upgradePoll = 200 * time.Millisecond

var (
	env *envtest.Environment
	sim *assisted.Simulator
	k8s client.Client
	// infraGV is the Metal3 version the tests write (the storage one).
	infraGV = schema.GroupVersion{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta2"}
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	ctrl.SetLogger(reconcileErrors.Logger())
	var err error
	if env, err = envtest.Start(envtest.Options{}); err != nil {
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

	if sim, err = assisted.New(assisted.Options{}); err != nil {
		fmt.Println("FAIL:", err)
		return 1
	}
	stopSim, err := env.RunStandIns(ctx, sim.SetupWithManager, setupFakeCAPI)
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

// newManager builds a manager of our providers; its writes pass the loop
// guard.
func newManager(cfg *rest.Config) (ctrl.Manager, error) {
	return ctrl.NewManager(env.Guard.WrapConfig(cfg), env.ManagerOptions())
}

// startControlPlane runs the provider's controller as the
// controlplane-manager does (10 workers, the watch filter) and returns a
// function that stops the manager and waits for it.
func startControlPlane(ctx context.Context, cfg *rest.Config, filter string) (func(), error) {
	mgr, err := newManager(cfg)
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
	mgr, err := newManager(cfg)
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

// ---- the CAPI core and CAPM3 stand-in ----

// setupFakeCAPI registers fakeCAPI (see the package comment).
func setupFakeCAPI(_ context.Context, mgr ctrl.Manager) error {
	r := &fakeCAPI{c: mgr.GetClient()}
	toMachine := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		for _, ref := range o.GetOwnerReferences() {
			if ref.Kind == "Machine" {
				return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: ref.Name}}}
			}
		}
		return nil
	})
	m3 := &unstructured.Unstructured{}
	m3.SetGroupVersionKind(infraGV.WithKind("Metal3Machine"))
	return ctrl.NewControllerManagedBy(mgr).
		Named("fake-capi").
		WithOptions(controller.Options{MaxConcurrentReconciles: 10}).
		For(&clusterv1.Machine{}).
		Watches(&bootstrapv1.OpenshiftAssistedConfig{}, toMachine).
		Watches(m3, toMachine).
		// The config, its Machine and its Agent share a name here.
		Watches(&aiv1beta1.Agent{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			if name := o.GetLabels()[bootstrapv1.ConfigLabel]; name != "" {
				return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}}}
			}
			return nil
		})).
		Complete(r)
}

type fakeCAPI struct{ c client.Client }

// holdBootAnnotation on a Machine keeps fakeCAPI from provisioning its host
// (so it does not boot and register) until the test removes it.
const holdBootAnnotation = "test.ocp-capi.io/hold-boot"

func (r *fakeCAPI) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	m := &clusterv1.Machine{}
	if err := r.c.Get(ctx, req.NamespacedName, m); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	config := &bootstrapv1.OpenshiftAssistedConfig{}
	configKey := types.NamespacedName{Namespace: m.Namespace, Name: m.Spec.Bootstrap.ConfigRef.Name}
	if err := r.c.Get(ctx, configKey, config); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		config = nil
	}
	infra := &unstructured.Unstructured{}
	infra.SetGroupVersionKind(infraGV.WithKind(m.Spec.InfrastructureRef.Kind))
	if err := r.c.Get(ctx, types.NamespacedName{Namespace: m.Namespace, Name: m.Spec.InfrastructureRef.Name}, infra); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		infra = nil
	}

	// CAPI core's deletion: the infrastructure machine and the bootstrap
	// config go first (their own finalizers run), then the Machine's.
	if !m.DeletionTimestamp.IsZero() {
		gone := true
		for _, o := range []client.Object{config, infra} {
			if o == nil || isNil(o) {
				continue
			}
			gone = false
			if o.GetDeletionTimestamp().IsZero() {
				if err := r.c.Delete(ctx, o); client.IgnoreNotFound(err) != nil {
					return ctrl.Result{}, err
				}
			}
		}
		if !gone {
			return ctrl.Result{}, nil
		}
		base := m.DeepCopy()
		controllerutil.RemoveFinalizer(m, clusterv1.MachineFinalizer)
		return ctrl.Result{}, client.IgnoreNotFound(r.c.Patch(ctx, m, client.MergeFrom(base)))
	}
	if !controllerutil.ContainsFinalizer(m, clusterv1.MachineFinalizer) {
		base := m.DeepCopy()
		controllerutil.AddFinalizer(m, clusterv1.MachineFinalizer)
		return ctrl.Result{}, r.c.Patch(ctx, m, client.MergeFrom(base))
	}
	if config == nil || infra == nil {
		return ctrl.Result{}, nil
	}
	// CAPI core makes the Machine the controller of both.
	for _, o := range []client.Object{config, infra} {
		if metav1.IsControlledBy(o, m) {
			continue
		}
		base, _ := o.DeepCopyObject().(client.Object)
		o.SetOwnerReferences(append(o.GetOwnerReferences(), metav1.OwnerReference{APIVersion: clusterv1.GroupVersion.String(),
			Kind: "Machine", Name: m.Name, UID: m.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}))
		if err := r.c.Patch(ctx, o, client.MergeFrom(base)); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
	}
	// CAPI core: the bootstrap data.
	if m.Spec.Bootstrap.DataSecretName == nil {
		if !ptr.Deref(config.Status.Initialization.DataSecretCreated, false) || config.Status.DataSecretName == "" {
			return ctrl.Result{}, nil
		}
		base := m.DeepCopy()
		m.Spec.Bootstrap.DataSecretName = ptr.To(config.Status.DataSecretName)
		return ctrl.Result{}, client.IgnoreNotFound(r.c.Patch(ctx, m, client.MergeFrom(base)))
	}
	// CAPM3: claim a BareMetalHost and provision it with the bootstrap data
	// (unless the test holds the host's boot: holdBootAnnotation).
	if p, _, _ := unstructured.NestedBool(infra.Object, "status", "initialization", "provisioned"); !p {
		if _, held := m.Annotations[holdBootAnnotation]; held {
			return ctrl.Result{}, nil
		}
		bmh := &bmhv1alpha1.BareMetalHost{
			ObjectMeta: metav1.ObjectMeta{Name: "bmh-" + m.Name, Namespace: m.Namespace},
			Spec: bmhv1alpha1.BareMetalHostSpec{
				Online: true, BootMACAddress: macOf(m.Namespace + "/" + m.Name),
				BMC: bmhv1alpha1.BMCDetails{Address: "redfish-virtualmedia://192.0.2.1/redfish/v1/Systems/" + m.Name, CredentialsName: "bmc"},
				ConsumerRef: &corev1.ObjectReference{APIVersion: infraGV.String(), Kind: "Metal3Machine", Name: infra.GetName(),
					Namespace: m.Namespace},
			},
		}
		if err := r.c.Create(ctx, bmh); err != nil && !apierrors.IsAlreadyExists(err) {
			return ctrl.Result{}, err
		}
		base := infra.DeepCopy()
		anns := infra.GetAnnotations()
		if anns == nil {
			anns = map[string]string{}
		}
		anns["metal3.io/BareMetalHost"] = m.Namespace + "/" + bmh.Name
		infra.SetAnnotations(anns)
		if err := r.c.Patch(ctx, infra, client.MergeFrom(base)); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
		base = infra.DeepCopy()
		_ = unstructured.SetNestedField(infra.Object, true, "status", "initialization", "provisioned")
		return ctrl.Result{}, client.IgnoreNotFound(r.c.Status().Patch(ctx, infra, client.MergeFrom(base)))
	}
	// CAPI core: the Node shows up once the host is installed.
	base := m.DeepCopy()
	m.Status.Initialization.BootstrapDataSecretCreated = ptr.To(true)
	m.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
	agents := &aiv1beta1.AgentList{}
	if err := r.c.List(ctx, agents, client.InNamespace(m.Namespace), client.MatchingLabels{bootstrapv1.ConfigLabel: config.Name}); err != nil {
		return ctrl.Result{}, err
	}
	for _, a := range agents.Items {
		if st := a.Status.DebugInfo.State; a.Spec.Approved && (st == "installed" || st == "added-to-existing-cluster") {
			m.Status.NodeRef = clusterv1.MachineNodeReference{Name: m.Name}
			for _, t := range []string{clusterv1.MachineReadyCondition, clusterv1.MachineAvailableCondition} {
				capiconditions.Set(m, metav1.Condition{Type: t, Status: metav1.ConditionTrue, Reason: "Simulated"})
			}
		}
	}
	if equality.Semantic.DeepEqual(base.Status, m.Status) {
		return ctrl.Result{}, nil
	}
	// Locked, as CAPI core's patch helper merges conditions: a merge patch
	// from a stale copy would drop the control plane's UpToDate condition.
	return ctrl.Result{}, client.IgnoreNotFound(r.c.Status().Patch(ctx, m, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})))
}

func isNil(o client.Object) bool {
	switch v := o.(type) {
	case *bootstrapv1.OpenshiftAssistedConfig:
		return v == nil
	case *unstructured.Unstructured:
		return v == nil
	}
	return false
}

// macOf is a MAC address derived from a host's name.
func macOf(name string) string {
	s := sha256.Sum256([]byte(name))
	return fmt.Sprintf("52:54:%02x:%02x:%02x:%02x", s[0], s[1], s[2], s[3])
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
