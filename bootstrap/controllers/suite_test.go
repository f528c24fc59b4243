package controllers_test

// These tests run the bootstrap provider's controllers in-process, as the
// bootstrap-manager wires them (bootstrap.Controllers), against a real API
// server with the upstream CRDs (test/envtest) and the assisted-service
// simulator (test/assisted), which fills InfraEnvs, serves discovery
// ignitions over TLS, registers Agents when hosts boot and drives
// AgentClusterInstalls. The fake CAPI core (test/fakecapi) copies a
// config's data secret onto its Machine and then, playing the
// infrastructure provider, marks the infrastructure machine provisioned,
// which is when the simulator's host "boots". The control-plane provider's
// objects (ClusterDeployment, AgentClusterInstall) are created by the tests.

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	capiconditions "sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/ocp-capi/ocp-capi/api/bootstrap/v1alpha2"
	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/bootstrap"
	aiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/agentinstall/v1beta1"
	bmhv1alpha1 "github.com/ocp-capi/ocp-capi/internal/consumed/baremetalhost/v1alpha1"
	hivev1 "github.com/ocp-capi/ocp-capi/internal/consumed/hive/v1"
	hiveextv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/hiveext/v1beta1"
	"github.com/ocp-capi/ocp-capi/internal/manager"
	"github.com/ocp-capi/ocp-capi/test/assisted"
	"github.com/ocp-capi/ocp-capi/test/envtest"
	"github.com/ocp-capi/ocp-capi/test/fakecapi"
)

// watchValue is the shared manager's --watch-filter; every object of the
// tests carries it, except those of tests that run their own manager.
const watchValue = "bootstrap-envtest"

// wait bounds every Eventually; it is only reached on failure.
const (
	wait = 60 * time.Second
	tick = 50 * time.Millisecond
)

var (
	env *envtest.Environment
	sim *assisted.Simulator
	k8s client.Client
	// infraGV is the version of the Metal3 and OpenStack kinds the tests
	// write (the storage one of both).
	infraGV = fakecapi.InfraGroupVersion
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
	// test/scheme does not know this provider's API yet.
	if err := bootstrapv1.AddToScheme(env.Scheme); err != nil {
		fmt.Println("FAIL:", err)
		return 1
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
	// CAPI core, without its Machine deletion and Nodes: the tests play
	// each deletion order, and a Machine here never joins a cluster.
	stopSim, err := env.RunStandIns(ctx, sim.SetupWithManager, fakecapi.New(fakecapi.Options{}).SetupWithManager)
	if err != nil {
		fmt.Println("FAIL: simulator and fake CAPI:", err)
		return 1
	}

	stop, err := startBootstrap(ctx, env.Config, watchValue)
	if err != nil {
		fmt.Println("FAIL: bootstrap manager:", err)
		return 1
	}
	code := m.Run()
	stop()
	cancel()
	if err := stopSim(); err != nil {
		fmt.Println("FAIL: simulator manager:", err)
		return 1
	}
	// A reconcile loop anywhere in the run fails it (docs/testing.md).
	return env.Guard.Finish(code)
}

// newManager builds a manager whose writes pass the loop guard; its cache
// is the bootstrap-manager's (bootstrap.Cache).
func newManager(cfg *rest.Config) (ctrl.Manager, error) {
	opts := env.ManagerOptions()
	if err := manager.ApplyCache(&opts, bootstrap.Cache); err != nil {
		return nil, err
	}
	return ctrl.NewManager(env.Guard.WrapConfig(cfg), opts)
}

// startBootstrap runs the provider's controllers as the bootstrap-manager
// does, trusting the simulator's CA, and returns a function that stops the
// manager and waits for it.
func startBootstrap(ctx context.Context, cfg *rest.Config, filter string) (func(), error) {
	mgr, err := newManager(cfg)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	for _, c := range bootstrap.Controllers(&bootstrap.Options{CABundle: sim.CABundle()}) {
		if err := c.Setup(ctx, mgr, manager.ControllerOptions{MaxConcurrentReconciles: 10, WatchFilterValue: filter}); err != nil {
			cancel()
			return nil, fmt.Errorf("setting up %s: %w", c.Name, err)
		}
	}
	stopMgr := envtest.RunManager(ctx, mgr)
	return func() {
		cancel()
		if err := stopMgr(); err != nil {
			fmt.Println("bootstrap manager:", err)
		}
	}, nil
}

// reconcileErrors records the "Reconciler error" entries of every
// controller of the process (see newCluster's cleanup).
var reconcileErrors envtest.ReconcileErrors

// reconcileErrorsIn returns the reconcile errors of the bootstrap
// controllers in ns (the simulator's are its own business).
func reconcileErrorsIn(ns string) []string {
	return slices.DeleteFunc(reconcileErrors.In(ns), func(e string) bool {
		return strings.HasPrefix(e, "assisted-simulator") || strings.HasPrefix(e, "fake-capi") ||
			// A manager that a test stops cancels what it was doing.
			envtest.IsStopError(e)
	})
}

// ---- a test cluster ----

// testCluster is one CAPI cluster with the control-plane provider's
// ClusterDeployment and AgentClusterInstall, in its own namespace.
type testCluster struct {
	t      *testing.T
	g      *WithT
	ctx    context.Context
	ns     string
	name   string
	filter string
	macs   atomic.Int32
}

func (tc *testCluster) aciKey() types.NamespacedName {
	return types.NamespacedName{Namespace: tc.ns, Name: tc.name}
}

// newCluster makes a cluster whose installation waits for controlPlane
// masters and workers workers. The filter is the watch-filter label value.
func newCluster(t *testing.T, controlPlane, workers int, filter string) *testCluster {
	t.Helper()
	ctx := context.Background()
	ns, err := env.NewNamespace(ctx, "oac")
	if err != nil {
		t.Fatal(err)
	}
	tc := &testCluster{t: t, g: NewWithT(t), ctx: ctx, ns: ns.Name, name: "c1", filter: filter}
	t.Cleanup(func() {
		if errs := reconcileErrorsIn(tc.ns); len(errs) > 0 && !t.Failed() {
			t.Errorf("reconcile errors in %s:\n  %v", tc.ns, errs)
		}
	})
	tc.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "pull-secret", Namespace: tc.ns},
		Data: map[string][]byte{".dockerconfigjson": []byte(`{"auths":{}}`)}, Type: corev1.SecretTypeDockerConfigJson})
	cluster := &clusterv1.Cluster{ObjectMeta: tc.meta(tc.name, nil), Spec: clusterv1.ClusterSpec{Paused: ptr.To(false)}}
	tc.create(cluster)
	tc.g.Expect(fakecapi.ProvisionCluster(ctx, k8s, cluster)).To(Succeed())

	cd := &hivev1.ClusterDeployment{
		ObjectMeta: tc.meta(tc.name, map[string]string{clusterv1.ClusterNameLabel: tc.name}),
		Spec: hivev1.ClusterDeploymentSpec{
			ClusterName: tc.name, BaseDomain: "example.com",
			Platform:      hivev1.Platform{AgentBareMetal: &hivev1.AgentBareMetalPlatform{}},
			PullSecretRef: &corev1.LocalObjectReference{Name: "pull-secret"},
			ClusterInstallRef: &hivev1.ClusterInstallLocalReference{Group: hiveextv1beta1.GroupVersion.Group,
				Version: hiveextv1beta1.GroupVersion.Version, Kind: "AgentClusterInstall", Name: tc.name},
		},
	}
	tc.create(cd)
	tc.create(&hiveextv1beta1.AgentClusterInstall{
		ObjectMeta: tc.meta(tc.name, map[string]string{clusterv1.ClusterNameLabel: tc.name}),
		Spec: hiveextv1beta1.AgentClusterInstallSpec{
			ClusterDeploymentRef:  corev1.LocalObjectReference{Name: tc.name},
			ImageSetRef:           &hivev1.ClusterImageSetReference{Name: "openshift-4.19"},
			ProvisionRequirements: hiveextv1beta1.ProvisionRequirements{ControlPlaneAgents: controlPlane, WorkerAgents: workers},
		},
	})
	return tc
}

func (tc *testCluster) meta(name string, labels map[string]string) metav1.ObjectMeta {
	l := map[string]string{}
	for k, v := range labels {
		l[k] = v
	}
	if tc.filter != "" {
		l[clusterv1.WatchLabel] = tc.filter
	}
	return metav1.ObjectMeta{Name: name, Namespace: tc.ns, Labels: l}
}

func (tc *testCluster) create(obj client.Object) {
	tc.t.Helper()
	tc.g.Expect(k8s.Create(tc.ctx, obj)).To(Succeed(), "creating %T %s", obj, obj.GetName())
}

// nextMAC is a MAC unique in the cluster.
func (tc *testCluster) nextMAC() string {
	n := tc.macs.Add(1)
	return fmt.Sprintf("52:54:00:%02x:%02x:%02x", (n>>16)&0xff, (n>>8)&0xff, n&0xff)
}

// machineOpts describe one machine.
type machineOpts struct {
	controlPlane bool
	mode         bootstrapv1.BootMode
	spec         *bootstrapv1.OpenshiftAssistedConfigSpec
	// image replaces the Metal3Machine's image cloned from its template.
	image map[string]any
	// noMAC leaves an OpenStack server's ports without MACs for now (see
	// setServerMAC): its host cannot register.
	noMAC bool
}

// machine creates a Machine, its OpenshiftAssistedConfig (as a
// MachineSet or the control plane would) and, through infra, its
// infrastructure machine.
func (tc *testCluster) machine(name string, o machineOpts, infraKind string, infra func(owner metav1.OwnerReference)) *clusterv1.Machine {
	tc.t.Helper()
	labels := map[string]string{clusterv1.ClusterNameLabel: tc.name}
	if o.controlPlane {
		labels[clusterv1.MachineControlPlaneLabel] = ""
	}
	m := &clusterv1.Machine{
		ObjectMeta: tc.meta(name, labels),
		Spec: clusterv1.MachineSpec{
			ClusterName: tc.name,
			Bootstrap: clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: bootstrapv1.GroupVersion.Group, Kind: "OpenshiftAssistedConfig", Name: name}},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: infraGV.Group, Kind: infraKind, Name: name},
		},
	}
	tc.create(m)
	owner := fakecapi.MachineOwner(m)
	infra(owner)
	oac := &bootstrapv1.OpenshiftAssistedConfig{ObjectMeta: tc.meta(name, map[string]string{clusterv1.ClusterNameLabel: tc.name})}
	oac.OwnerReferences = []metav1.OwnerReference{owner}
	if o.spec != nil {
		oac.Spec = *o.spec
	}
	oac.Spec.BootMode = o.mode
	tc.create(oac)
	return m
}

// metal3Template creates a Metal3MachineTemplate; image may be nil.
func (tc *testCluster) metal3Template(name string, image map[string]any) {
	tc.t.Helper()
	spec := map[string]any{}
	if image != nil {
		spec["image"] = image
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{"template": map[string]any{"spec": spec}},
	}}
	u.SetGroupVersionKind(infraGV.WithKind("Metal3MachineTemplate"))
	u.SetName(name)
	u.SetNamespace(tc.ns)
	u.SetLabels(tc.meta(name, nil).Labels)
	tc.create(u)
}

// metal3Machine creates a Metal3Machine machine (cloned from template, if
// set, with the template's image as CAPI clones it) on a BareMetalHost of
// its own, as CAPM3 claims one.
func (tc *testCluster) metal3Machine(name, template string, o machineOpts) *clusterv1.Machine {
	return tc.machine(name, o, "Metal3Machine", func(owner metav1.OwnerReference) {
		mac := tc.nextMAC()
		bmh := &bmhv1alpha1.BareMetalHost{
			ObjectMeta: tc.meta("bmh-"+name, nil),
			Spec: bmhv1alpha1.BareMetalHostSpec{
				Online: true, BootMACAddress: mac,
				BMC:         bmhv1alpha1.BMCDetails{Address: "redfish-virtualmedia://192.0.2.1/redfish/v1/Systems/" + name, CredentialsName: "bmc"},
				ConsumerRef: &corev1.ObjectReference{APIVersion: infraGV.String(), Kind: "Metal3Machine", Name: name, Namespace: tc.ns},
			},
		}
		tc.create(bmh)
		spec := map[string]any{}
		annotations := map[string]string{"metal3.io/BareMetalHost": tc.ns + "/" + bmh.Name}
		if template != "" {
			t := &unstructured.Unstructured{}
			t.SetGroupVersionKind(infraGV.WithKind("Metal3MachineTemplate"))
			tc.g.Expect(k8s.Get(tc.ctx, types.NamespacedName{Namespace: tc.ns, Name: template}, t)).To(Succeed())
			if image, ok, _ := unstructured.NestedMap(t.Object, "spec", "template", "spec", "image"); ok {
				spec["image"] = image
			}
			annotations[clusterv1.TemplateClonedFromNameAnnotation] = template
			annotations[clusterv1.TemplateClonedFromGroupKindAnnotation] = "Metal3MachineTemplate.infrastructure.cluster.x-k8s.io"
		}
		if o.image != nil {
			spec["image"] = o.image
		}
		u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
		u.SetGroupVersionKind(infraGV.WithKind("Metal3Machine"))
		u.SetName(name)
		u.SetNamespace(tc.ns)
		u.SetLabels(tc.meta(name, map[string]string{clusterv1.ClusterNameLabel: tc.name}).Labels)
		u.SetAnnotations(annotations)
		u.SetOwnerReferences([]metav1.OwnerReference{owner})
		tc.create(u)
	})
}

// openstackMachine creates an OpenStackMachine machine and the
// OpenStackServer the OpenStack provider would make for it, with ports and
// their MACs (known before the server boots).
func (tc *testCluster) openstackMachine(name string, o machineOpts) *clusterv1.Machine {
	return tc.machine(name, o, "OpenStackMachine", func(owner metav1.OwnerReference) {
		osm := &infrav1.OpenStackMachine{
			ObjectMeta: tc.meta(name, map[string]string{clusterv1.ClusterNameLabel: tc.name}),
			Spec: infrav1.OpenStackMachineSpec{
				Flavor: infrav1.FlavorParam{Filter: &infrav1.FlavorFilter{Name: ptr.To("m1.large")}},
				Image:  infrav1.ImageParam{Filter: &infrav1.ImageFilter{Name: ptr.To("rhcos")}},
			},
		}
		osm.OwnerReferences = []metav1.OwnerReference{owner}
		tc.create(osm)
		oss := &infrav1alpha1.OpenStackServer{
			ObjectMeta: tc.meta(name, map[string]string{clusterv1.ClusterNameLabel: tc.name}),
			Spec: infrav1alpha1.OpenStackServerSpec{
				Flavor:      ptr.To("m1.large"),
				IdentityRef: infrav1.OpenStackIdentityReference{Name: "cloud", CloudName: "openstack"},
				Image:       infrav1.ImageParam{Filter: &infrav1.ImageFilter{Name: ptr.To("rhcos")}},
				Ports:       []infrav1.PortOpts{{Network: &infrav1.NetworkParam{Filter: &infrav1.NetworkFilter{Name: "machines"}}}},
				SSHKeyName:  "key",
			},
		}
		oss.OwnerReferences = []metav1.OwnerReference{{APIVersion: infrav1.GroupVersion.String(), Kind: "OpenStackMachine",
			Name: osm.Name, UID: osm.UID, Controller: ptr.To(true)}}
		tc.create(oss)
		if !o.noMAC {
			tc.setServerMAC(name)
		}
	})
}

// setServerMAC gives the OpenStack server's port its MAC, as Neutron does.
func (tc *testCluster) setServerMAC(name string) {
	tc.t.Helper()
	oss := &infrav1alpha1.OpenStackServer{}
	tc.g.Expect(k8s.Get(tc.ctx, types.NamespacedName{Namespace: tc.ns, Name: name}, oss)).To(Succeed())
	base := oss.DeepCopy()
	oss.Status.Resources = &infrav1alpha1.ServerResources{Ports: []infrav1.PortStatus{{ID: "port-" + name, MACAddress: tc.nextMAC()}}}
	tc.g.Expect(k8s.Status().Patch(tc.ctx, oss, client.MergeFrom(base))).To(Succeed())
}

// ---- reading ----

func (tc *testCluster) config(name string) *bootstrapv1.OpenshiftAssistedConfig {
	oac := &bootstrapv1.OpenshiftAssistedConfig{}
	if err := k8s.Get(tc.ctx, types.NamespacedName{Namespace: tc.ns, Name: name}, oac); err != nil {
		return nil
	}
	return oac
}

// waitDataSecret waits for the config's data secret and returns it.
func (tc *testCluster) waitDataSecret(name string) *corev1.Secret {
	tc.t.Helper()
	tc.g.Eventually(func(g Gomega) {
		oac := tc.config(name)
		g.Expect(oac).NotTo(BeNil())
		g.Expect(oac.Status.Initialization.DataSecretCreated).To(HaveValue(BeTrue()), "conditions: %v", oac.Status.Conditions)
		g.Expect(oac.Status.DataSecretName).To(Equal(name))
	}, wait, tick).Should(Succeed())
	s := &corev1.Secret{}
	tc.g.Expect(k8s.Get(tc.ctx, types.NamespacedName{Namespace: tc.ns, Name: name}, s)).To(Succeed())
	return s
}

// waitCondition waits for a condition of the config.
func (tc *testCluster) waitCondition(name, condition string, status metav1.ConditionStatus, reason string) *bootstrapv1.OpenshiftAssistedConfig {
	tc.t.Helper()
	var out *bootstrapv1.OpenshiftAssistedConfig
	tc.g.Eventually(func(g Gomega) {
		oac := tc.config(name)
		g.Expect(oac).NotTo(BeNil())
		c := capiconditions.Get(oac, condition)
		g.Expect(c).NotTo(BeNil(), "conditions: %v", oac.Status.Conditions)
		g.Expect(c.Status).To(Equal(status), "%s: %s", c.Reason, c.Message)
		g.Expect(c.Reason).To(Equal(reason), c.Message)
		out = oac
	}, wait, tick).Should(Succeed())
	return out
}

func (tc *testCluster) agents() []aiv1beta1.Agent {
	list := &aiv1beta1.AgentList{}
	tc.g.Expect(k8s.List(tc.ctx, list, client.InNamespace(tc.ns))).To(Succeed())
	return list.Items
}

func (tc *testCluster) infraEnvs() []aiv1beta1.InfraEnv {
	list := &aiv1beta1.InfraEnvList{}
	tc.g.Expect(k8s.List(tc.ctx, list, client.InNamespace(tc.ns))).To(Succeed())
	return list.Items
}

// approvedAgentsOf returns the approved Agents bound to the config.
func (tc *testCluster) approvedAgentsOf(config string) []aiv1beta1.Agent {
	var out []aiv1beta1.Agent
	for _, a := range tc.agents() {
		if a.Labels[bootstrapv1.ConfigLabel] == config && a.Spec.Approved {
			out = append(out, a)
		}
	}
	return out
}

// waitInstallState waits for the AgentClusterInstall's state.
func (tc *testCluster) waitInstallState(state string) {
	tc.t.Helper()
	tc.g.Eventually(func(g Gomega) {
		aci := &hiveextv1beta1.AgentClusterInstall{}
		g.Expect(k8s.Get(tc.ctx, tc.aciKey(), aci)).To(Succeed())
		g.Expect(aci.Status.DebugInfo.State).To(Equal(state))
	}, wait, tick).Should(Succeed())
}

func (tc *testCluster) metal3(kind, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(infraGV.WithKind(kind))
	tc.g.Expect(k8s.Get(tc.ctx, types.NamespacedName{Namespace: tc.ns, Name: name}, u)).To(Succeed())
	return u
}

func isNotFound(err error) bool { return apierrors.IsNotFound(err) }
