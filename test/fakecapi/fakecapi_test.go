package fakecapi_test

// These tests hold the fake to its table in docs/testing.md ("The fake
// CAPI core"): every row has a test here, run against a real API server,
// and every test here is a row.

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	capiconditions "sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	bootstrapv1 "github.com/ocp-capi/ocp-capi/api/bootstrap/v1alpha2"
	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	aiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/agentinstall/v1beta1"
	bmhv1alpha1 "github.com/ocp-capi/ocp-capi/internal/consumed/baremetalhost/v1alpha1"
	"github.com/ocp-capi/ocp-capi/test/envtest"
	"github.com/ocp-capi/ocp-capi/test/fakecapi"
)

const (
	wait = 30 * time.Second
	tick = 50 * time.Millisecond
	// quiet is how long a test watches for something that must not happen.
	quiet = 2 * time.Second
)

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
	if err := env.LabelMetal3CRDs(context.Background()); err != nil {
		fmt.Println("FAIL: labelling the Metal3 CRDs:", err)
		return 1
	}
	return m.Run()
}

// rows are the tests of the table's rows, by the row's first cell.
var rows = map[string]func(t *testing.T){
	"ownership":                   testOwnership,
	"bootstrap data":              testBootstrapData,
	"infrastructure provisioned":  testInfrastructureProvisioned,
	"Node":                        testNode,
	"deletion":                    testDeletion,
	"Cluster provisioned":         testClusterProvisioned,
	"host boot: Metal3Machine":    testMetal3Boot,
	"host boot: OpenStackMachine": testOpenStackBoot,
	"hold boot":                   testHoldBoot,
}

// TestTable runs the test of each row of the table, and fails on a row
// without a test or a test without a row.
func TestTable(t *testing.T) {
	doc := tableRows(t)
	for name := range rows {
		if !slices.Contains(doc, name) {
			t.Errorf("docs/testing.md has no row %q", name)
		}
	}
	for _, name := range doc {
		test, ok := rows[name]
		if !ok {
			t.Errorf("row %q of docs/testing.md has no test", name)
			continue
		}
		t.Run(name, test)
	}
}

// tableRows are the first cells of the rows of the table under the
// heading "## The fake CAPI core" of docs/testing.md, backticks removed.
func tableRows(t *testing.T) []string {
	t.Helper()
	f, err := os.Open("../../docs/testing.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	in, cell := false, regexp.MustCompile("^\\|\\s*`([^`]+)`\\s*\\|")
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "## ") {
			in = line == "## The fake CAPI core"
			continue
		}
		if m := cell.FindStringSubmatch(line); in && m != nil {
			out = append(out, m[1])
		}
	}
	if len(out) == 0 {
		t.Fatal("no rows under \"## The fake CAPI core\" in docs/testing.md")
	}
	return out
}

// ---- fixtures ----

// fixture is one namespace with a fake of the given options running.
type fixture struct {
	t   *testing.T
	g   *WithT
	ctx context.Context
	ns  string
	c   client.Client
	// stop stops the fake (also done when the test ends).
	stop func() error
}

func start(t *testing.T, opts fakecapi.Options) *fixture {
	t.Helper()
	ctx := context.Background()
	ns, err := env.NewNamespace(ctx, "fakecapi")
	if err != nil {
		t.Fatal(err)
	}
	// One fake at a time: each test stops its own.
	stop, err := env.RunStandIns(ctx, fakecapi.New(opts).SetupWithManager)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stop() })
	return &fixture{t: t, g: NewWithT(t), ctx: ctx, ns: ns.Name, c: env.Client, stop: stop}
}

func (f *fixture) create(obj client.Object) {
	f.t.Helper()
	obj.SetNamespace(f.ns)
	f.g.Expect(f.c.Create(f.ctx, obj)).To(Succeed(), "creating %T %s", obj, obj.GetName())
}

func (f *fixture) get(obj client.Object) client.Object {
	f.t.Helper()
	f.g.Expect(f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: obj.GetName()}, obj)).To(Succeed())
	return obj
}

// machine creates a Machine of cluster c1 with an OpenshiftAssistedConfig
// and an infrastructure machine of kind, both named after it, neither
// owned yet. controlPlane labels it a control-plane Machine.
func (f *fixture) machine(name, kind string, controlPlane bool) *clusterv1.Machine {
	f.t.Helper()
	m := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{clusterv1.ClusterNameLabel: "c1"}},
		Spec: clusterv1.MachineSpec{
			ClusterName: "c1",
			Bootstrap: clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: bootstrapv1.GroupVersion.Group, Kind: "OpenshiftAssistedConfig", Name: name}},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: fakecapi.InfraGroupVersion.Group, Kind: kind, Name: name},
		},
	}
	if controlPlane {
		m.Labels[clusterv1.MachineControlPlaneLabel] = ""
	}
	f.create(m)
	return m
}

func (f *fixture) config(name string, owners ...metav1.OwnerReference) *bootstrapv1.OpenshiftAssistedConfig {
	f.t.Helper()
	oac := &bootstrapv1.OpenshiftAssistedConfig{ObjectMeta: metav1.ObjectMeta{Name: name, OwnerReferences: owners}}
	f.create(oac)
	return oac
}

// dataSecret reports the config's data secret, as the bootstrap provider
// does.
func (f *fixture) dataSecret(name string) {
	f.t.Helper()
	oac := f.get(&bootstrapv1.OpenshiftAssistedConfig{ObjectMeta: metav1.ObjectMeta{Name: name}}).(*bootstrapv1.OpenshiftAssistedConfig)
	base := oac.DeepCopy()
	oac.Status.Initialization.DataSecretCreated = ptr.To(true)
	oac.Status.DataSecretName = name
	f.g.Expect(f.c.Status().Patch(f.ctx, oac, client.MergeFrom(base))).To(Succeed())
}

func (f *fixture) infra(kind, name string, annotations map[string]string, owners ...metav1.OwnerReference) *unstructured.Unstructured {
	f.t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{}}}
	if kind == "OpenStackMachine" {
		u.Object["spec"] = map[string]any{"flavor": map[string]any{"filter": map[string]any{"name": "m1"}},
			"image": map[string]any{"filter": map[string]any{"name": "rhcos"}}}
	}
	u.SetGroupVersionKind(fakecapi.InfraGroupVersion.WithKind(kind))
	u.SetName(name)
	u.SetAnnotations(annotations)
	u.SetOwnerReferences(owners)
	f.create(u)
	return u
}

func (f *fixture) readInfra(kind, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(fakecapi.InfraGroupVersion.WithKind(kind))
	u.SetName(name)
	f.get(u)
	return u
}

func (f *fixture) readMachine(name string) *clusterv1.Machine {
	return f.get(&clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: name}}).(*clusterv1.Machine)
}

// ---- the rows ----

// ownership: the Machine becomes the controller of its config and
// infrastructure machine; the owners a MachineSet or the control plane
// set on creation go; the cluster-name label is set.
func testOwnership(t *testing.T) {
	f := start(t, fakecapi.Options{})
	f.create(&clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "c1"}, Spec: clusterv1.ClusterSpec{
		ControlPlaneRef: clusterv1.ContractVersionedObjectReference{APIGroup: "controlplane.cluster.x-k8s.io",
			Kind: "OpenshiftAssistedControlPlane", Name: "cp"}}})
	cpOwner := metav1.OwnerReference{APIVersion: "controlplane.cluster.x-k8s.io/v1alpha3", Kind: "OpenshiftAssistedControlPlane",
		Name: "cp", UID: "cp-uid"}
	other := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "keep", UID: "keep-uid"}
	// Made before their Machine, as the control plane or a MachineSet makes
	// them.
	f.config("cp-0", cpOwner, other)
	f.infra("Metal3Machine", "cp-0", map[string]string{"metal3.io/BareMetalHost": f.ns + "/held"},
		metav1.OwnerReference{APIVersion: clusterv1.GroupVersion.String(), Kind: "MachineSet", Name: "ms", UID: "ms-uid"})
	m := f.machine("cp-0", "Metal3Machine", true)
	want := fakecapi.MachineOwner(m)
	f.g.Eventually(func(g Gomega) {
		oac := f.get(&bootstrapv1.OpenshiftAssistedConfig{ObjectMeta: metav1.ObjectMeta{Name: "cp-0"}})
		g.Expect(oac.GetOwnerReferences()).To(ConsistOf(want, other), "the control plane's owner goes, others stay")
		g.Expect(oac.GetLabels()).To(HaveKeyWithValue(clusterv1.ClusterNameLabel, "c1"))
		u := f.readInfra("Metal3Machine", "cp-0")
		g.Expect(u.GetOwnerReferences()).To(ConsistOf(want), "the MachineSet's owner goes")
		g.Expect(u.GetLabels()).To(HaveKeyWithValue(clusterv1.ClusterNameLabel, "c1"))
	}, wait, tick).Should(Succeed())

	// Already owned and labelled as CAPI would: nothing is written.
	m2 := f.machine("w-0", "Metal3Machine", false)
	oac := &bootstrapv1.OpenshiftAssistedConfig{ObjectMeta: metav1.ObjectMeta{Name: "w-0",
		Labels: map[string]string{clusterv1.ClusterNameLabel: "c1"}, OwnerReferences: []metav1.OwnerReference{fakecapi.MachineOwner(m2)}}}
	f.create(oac)
	rv := oac.ResourceVersion
	f.g.Consistently(func() string { return f.get(oac).GetResourceVersion() }, quiet, tick).Should(Equal(rv))
}

// bootstrap data: spec.bootstrap.dataSecretName once the config reports
// its data secret; status.initialization.bootstrapDataSecretCreated.
func testBootstrapData(t *testing.T) {
	f := start(t, fakecapi.Options{})
	m := f.machine("m", "Metal3Machine", false)
	f.config("m", fakecapi.MachineOwner(m))
	f.g.Consistently(func() *string { return f.readMachine("m").Spec.Bootstrap.DataSecretName }, quiet, tick).Should(BeNil())
	f.dataSecret("m")
	f.g.Eventually(func(g Gomega) {
		got := f.readMachine("m")
		g.Expect(got.Spec.Bootstrap.DataSecretName).To(HaveValue(Equal("m")))
		g.Expect(got.Status.Initialization.BootstrapDataSecretCreated).To(HaveValue(BeTrue()))
	}, wait, tick).Should(Succeed())
}

// infrastructure provisioned: status.initialization.infrastructureProvisioned
// once the infrastructure machine is provisioned; no Node without Nodes.
func testInfrastructureProvisioned(t *testing.T) {
	f := start(t, fakecapi.Options{})
	m := f.machine("m", "Metal3Machine", false)
	f.config("m", fakecapi.MachineOwner(m))
	f.infra("Metal3Machine", "m", map[string]string{"metal3.io/BareMetalHost": f.ns + "/h"}, fakecapi.MachineOwner(m))
	f.g.Consistently(func() *bool { return f.readMachine("m").Status.Initialization.InfrastructureProvisioned }, quiet, tick).Should(BeNil())
	f.dataSecret("m")
	f.g.Eventually(func() *bool { return f.readMachine("m").Status.Initialization.InfrastructureProvisioned }, wait, tick).
		Should(HaveValue(BeTrue()))
	f.agent("m", "installed")
	f.g.Consistently(func() string { return f.readMachine("m").Status.NodeRef.Name }, quiet, tick).Should(BeEmpty())
}

// agent registers an approved Agent bound to config, in state.
func (f *fixture) agent(config, state string) {
	f.t.Helper()
	a := &aiv1beta1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "agent-" + config, Labels: map[string]string{bootstrapv1.ConfigLabel: config}},
		Spec: aiv1beta1.AgentSpec{Approved: true}}
	f.create(a)
	base := a.DeepCopy()
	a.Status.DebugInfo.State = state
	f.g.Expect(f.c.Status().Patch(f.ctx, a, client.MergeFrom(base))).To(Succeed())
}

// Node (Nodes): status.nodeRef, Ready and Available once the Machine's
// Agent is installed.
func testNode(t *testing.T) {
	f := start(t, fakecapi.Options{Nodes: true})
	m := f.machine("m", "Metal3Machine", false)
	f.config("m", fakecapi.MachineOwner(m))
	f.infra("Metal3Machine", "m", map[string]string{"metal3.io/BareMetalHost": f.ns + "/h"}, fakecapi.MachineOwner(m))
	f.dataSecret("m")
	f.agent("m", "installing")
	f.g.Eventually(func() *bool { return f.readMachine("m").Status.Initialization.InfrastructureProvisioned }, wait, tick).
		Should(HaveValue(BeTrue()))
	f.g.Consistently(func() string { return f.readMachine("m").Status.NodeRef.Name }, quiet, tick).Should(BeEmpty())
	a := f.get(&aiv1beta1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "agent-m"}}).(*aiv1beta1.Agent)
	base := a.DeepCopy()
	a.Status.DebugInfo.State = "installed"
	f.g.Expect(f.c.Status().Patch(f.ctx, a, client.MergeFrom(base))).To(Succeed())
	f.g.Eventually(func(g Gomega) {
		got := f.readMachine("m")
		g.Expect(got.Status.NodeRef.Name).To(Equal("m"))
		g.Expect(capiconditions.IsTrue(got, clusterv1.MachineReadyCondition)).To(BeTrue())
		g.Expect(capiconditions.IsTrue(got, clusterv1.MachineAvailableCondition)).To(BeTrue())
	}, wait, tick).Should(Succeed())
}

// deletion (MachineDeletion): the finalizer; on deletion the
// infrastructure machine and config go first, then the Machine. Without
// the option, the Machine goes at once and leaves them.
func testDeletion(t *testing.T) {
	const hold = "test.ocp-capi.io/hold"
	f := start(t, fakecapi.Options{MachineDeletion: true})
	g := f.g
	m := f.machine("m", "Metal3Machine", false)
	oac := &bootstrapv1.OpenshiftAssistedConfig{ObjectMeta: metav1.ObjectMeta{Name: "m", Finalizers: []string{hold},
		OwnerReferences: []metav1.OwnerReference{fakecapi.MachineOwner(m)}}}
	f.create(oac)
	f.infra("Metal3Machine", "m", nil, fakecapi.MachineOwner(m))
	f.g.Eventually(func() []string { return f.readMachine("m").Finalizers }, wait, tick).Should(ContainElement(clusterv1.MachineFinalizer))
	f.g.Expect(f.c.Delete(f.ctx, m)).To(Succeed())
	f.g.Eventually(func() bool {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(fakecapi.InfraGroupVersion.WithKind("Metal3Machine"))
		return apierrors.IsNotFound(f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: "m"}, u))
	}, wait, tick).Should(BeTrue(), "the infrastructure machine is deleted")
	f.g.Eventually(func() bool { return !f.get(oac).GetDeletionTimestamp().IsZero() }, wait, tick).Should(BeTrue(), "the config is deleted")
	f.g.Consistently(func() error { return f.c.Get(f.ctx, client.ObjectKeyFromObject(m), &clusterv1.Machine{}) }, quiet, tick).
		Should(Succeed(), "the Machine waits for its config")
	base := oac.DeepCopy()
	controllerutil.RemoveFinalizer(oac, hold)
	f.g.Expect(f.c.Patch(f.ctx, oac, client.MergeFrom(base))).To(Succeed())
	f.g.Eventually(func() error { return f.c.Get(f.ctx, client.ObjectKeyFromObject(m), &clusterv1.Machine{}) }, wait, tick).
		ShouldNot(Succeed(), "the Machine is gone")

	g.Expect(f.stop()).To(Succeed())

	t.Run("off", func(t *testing.T) {
		f := start(t, fakecapi.Options{})
		m := f.machine("m", "Metal3Machine", false)
		f.config("m", fakecapi.MachineOwner(m))
		f.g.Consistently(func() []string { return f.readMachine("m").Finalizers }, quiet, tick).Should(BeEmpty())
		f.g.Expect(f.c.Delete(f.ctx, m)).To(Succeed())
		f.g.Eventually(func() error { return f.c.Get(f.ctx, client.ObjectKeyFromObject(m), &clusterv1.Machine{}) }, wait, tick).
			ShouldNot(Succeed())
		f.g.Consistently(func() bool {
			return f.get(&bootstrapv1.OpenshiftAssistedConfig{ObjectMeta: metav1.ObjectMeta{Name: "m"}}).GetDeletionTimestamp().IsZero()
		}, quiet, tick).Should(BeTrue(), "the config is left to the test")
	})
}

// Cluster provisioned: ProvisionCluster.
func testClusterProvisioned(t *testing.T) {
	f := start(t, fakecapi.Options{})
	c := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "c1"}, Spec: clusterv1.ClusterSpec{Paused: ptr.To(false)}}
	f.create(c)
	f.g.Expect(fakecapi.ProvisionCluster(f.ctx, f.c, c, "fd-a", "fd-b")).To(Succeed())
	got := f.get(&clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "c1"}}).(*clusterv1.Cluster)
	f.g.Expect(got.Status.Initialization.InfrastructureProvisioned).To(HaveValue(BeTrue()))
	f.g.Expect(got.Status.FailureDomains).To(Equal([]clusterv1.FailureDomain{{Name: "fd-a", ControlPlane: ptr.To(true)},
		{Name: "fd-b", ControlPlane: ptr.To(true)}}))
	f.g.Expect(fakecapi.ProvisionCluster(f.ctx, f.c, got, "fd-b")).To(Succeed())
	got = f.get(&clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "c1"}}).(*clusterv1.Cluster)
	f.g.Expect(got.Status.FailureDomains).To(Equal([]clusterv1.FailureDomain{{Name: "fd-b", ControlPlane: ptr.To(true)}}))
}

// host boot: Metal3Machine: a host of its own when none is claimed, then
// provisioned; a claimed host is kept.
func testMetal3Boot(t *testing.T) {
	f := start(t, fakecapi.Options{})
	for _, name := range []string{"own", "claimed"} {
		m := f.machine(name, "Metal3Machine", false)
		f.config(name, fakecapi.MachineOwner(m))
		var anns map[string]string
		if name == "claimed" {
			anns = map[string]string{"metal3.io/BareMetalHost": f.ns + "/theirs"}
		}
		f.infra("Metal3Machine", name, anns, fakecapi.MachineOwner(m))
		f.dataSecret(name)
	}
	f.g.Eventually(func(g Gomega) {
		for name, host := range map[string]string{"own": "bmh-own", "claimed": "theirs"} {
			u := f.readInfra("Metal3Machine", name)
			p, _, _ := unstructured.NestedBool(u.Object, "status", "initialization", "provisioned")
			g.Expect(p).To(BeTrue(), name)
			g.Expect(u.GetAnnotations()).To(HaveKeyWithValue("metal3.io/BareMetalHost", f.ns+"/"+host))
		}
	}, wait, tick).Should(Succeed())
	bmh := f.get(&bmhv1alpha1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Name: "bmh-own"}}).(*bmhv1alpha1.BareMetalHost)
	f.g.Expect(bmh.Spec.BootMACAddress).To(Equal(fakecapi.MAC(f.ns + "/own")))
	f.g.Expect(bmh.Spec.ConsumerRef).To(HaveField("Name", "own"))
	f.g.Expect(f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: "bmh-claimed"}, &bmhv1alpha1.BareMetalHost{})).NotTo(Succeed())
}

// host boot: OpenStackMachine: the server's and the machine's instance
// ID, then provisioned.
func testOpenStackBoot(t *testing.T) {
	f := start(t, fakecapi.Options{})
	m := f.machine("m", "OpenStackMachine", false)
	f.config("m", fakecapi.MachineOwner(m))
	osm := f.infra("OpenStackMachine", "m", nil, fakecapi.MachineOwner(m))
	f.create(&infrav1alpha1.OpenStackServer{ObjectMeta: metav1.ObjectMeta{Name: "m", OwnerReferences: []metav1.OwnerReference{{
		APIVersion: infrav1.GroupVersion.String(), Kind: "OpenStackMachine", Name: "m", UID: osm.GetUID(), Controller: ptr.To(true)}}},
		Spec: infrav1alpha1.OpenStackServerSpec{Flavor: ptr.To("m1"), IdentityRef: infrav1.OpenStackIdentityReference{Name: "cloud", CloudName: "openstack"},
			Image:      infrav1.ImageParam{Filter: &infrav1.ImageFilter{Name: ptr.To("rhcos")}},
			Ports:      []infrav1.PortOpts{{Network: &infrav1.NetworkParam{Filter: &infrav1.NetworkFilter{Name: "machines"}}}},
			SSHKeyName: "key"}})
	f.dataSecret("m")
	f.g.Eventually(func(g Gomega) {
		u := f.readInfra("OpenStackMachine", "m")
		p, _, _ := unstructured.NestedBool(u.Object, "status", "initialization", "provisioned")
		g.Expect(p).To(BeTrue())
		id, _, _ := unstructured.NestedString(u.Object, "status", "instanceID")
		g.Expect(id).To(Equal("srv-m"))
		oss := f.get(&infrav1alpha1.OpenStackServer{ObjectMeta: metav1.ObjectMeta{Name: "m"}}).(*infrav1alpha1.OpenStackServer)
		g.Expect(oss.Status.InstanceID).To(HaveValue(Equal("srv-m")))
	}, wait, tick).Should(Succeed())
}

// hold boot: HoldBootAnnotation keeps the host from booting until it goes.
func testHoldBoot(t *testing.T) {
	f := start(t, fakecapi.Options{})
	m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "m", Annotations: map[string]string{fakecapi.HoldBootAnnotation: ""}},
		Spec: clusterv1.MachineSpec{ClusterName: "c1",
			Bootstrap: clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: bootstrapv1.GroupVersion.Group, Kind: "OpenshiftAssistedConfig", Name: "m"}},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: fakecapi.InfraGroupVersion.Group, Kind: "Metal3Machine", Name: "m"}}}
	f.create(m)
	f.config("m", fakecapi.MachineOwner(m))
	f.infra("Metal3Machine", "m", nil, fakecapi.MachineOwner(m))
	f.dataSecret("m")
	f.g.Eventually(func() *string { return f.readMachine("m").Spec.Bootstrap.DataSecretName }, wait, tick).Should(HaveValue(Equal("m")))
	provisioned := func() bool {
		p, _, _ := unstructured.NestedBool(f.readInfra("Metal3Machine", "m").Object, "status", "initialization", "provisioned")
		return p
	}
	f.g.Consistently(provisioned, quiet, tick).Should(BeFalse())
	got := f.readMachine("m")
	base := got.DeepCopy()
	delete(got.Annotations, fakecapi.HoldBootAnnotation)
	f.g.Expect(f.c.Patch(f.ctx, got, client.MergeFrom(base))).To(Succeed())
	f.g.Eventually(provisioned, wait, tick).Should(BeTrue())
}
