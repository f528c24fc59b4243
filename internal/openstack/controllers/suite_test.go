package controllers_test

// These tests run the provider's controllers in-process, as the
// infrastructure-manager wires them (openstack.Controllers), against a
// real API server (test/envtest) and an in-memory OpenStack per test
// (test/fakeopenstack). They check the glue: pause, --watch-filter,
// conditions, error classes, deletion without status, the template's
// capacity and the machine's providerID. The real-cloud suite is
// test/integration/openstack.

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	capiconditions "sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/manager"
	"github.com/ocp-capi/ocp-capi/internal/openstack"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/clients"
	"github.com/ocp-capi/ocp-capi/test/envtest"
	"github.com/ocp-capi/ocp-capi/test/fakecapi"
	"github.com/ocp-capi/ocp-capi/test/fakeopenstack"
)

// watchValue is the manager's --watch-filter. Every object of the tests
// carries it, except those of the test that checks the filter.
const watchValue = "infra-envtest"

// wait bounds every Eventually; the fake answers at once, so this is only
// reached on failure (and by the ERROR retry, which follows the
// controller's one-minute poll of a failed server).
const (
	wait      = 30 * time.Second
	errorWait = 100 * time.Second
	tick      = 100 * time.Millisecond
)

// The conditions each kind owns (api/infrastructure/v1beta2/conditions.go).
var (
	serverConditions = []string{
		infrav1.ReadyCondition, infrav1.ReferencesResolvedCondition, infrav1.PortsReadyCondition,
		infrav1.VolumesReadyCondition, infrav1.InstanceReadyCondition, clusterv1.DeletingCondition, clusterv1.PausedCondition,
		infrav1.FloatingAddressFromPoolReadyCondition,
	}
	machineConditions  = []string{infrav1.ReadyCondition, infrav1.InstanceReadyCondition, infrav1.APIServerIngressReadyCondition, clusterv1.PausedCondition}
	templateConditions = []string{infrav1.ReadyCondition, infrav1.CapacityResolvedCondition}
	clusterConditions  = []string{
		infrav1.ReadyCondition, infrav1.NetworkReadyCondition, infrav1.RouterReadyCondition, infrav1.SecurityGroupsReadyCondition,
		infrav1.APIEndpointReadyCondition, infrav1.BastionReadyCondition, clusterv1.DeletingCondition, clusterv1.PausedCondition,
	}
)

var env *envtest.Environment

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctrl.SetLogger(reconcileErrors.Logger())
	var err error
	if env, err = envtest.Start(envtest.Options{}); err != nil {
		fmt.Println("FAIL: starting the API server:", err)
		return 1
	}
	defer func() { _ = env.Stop() }()

	// The controllers' writes pass the loop guard.
	mgr, err := ctrl.NewManager(env.ControllerConfig(), env.ManagerOptions())
	if err != nil {
		fmt.Println("FAIL:", err)
		return 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	for _, c := range openstack.Controllers(openstack.Options{}) {
		if err := c.Setup(ctx, mgr, manager.ControllerOptions{MaxConcurrentReconciles: 10, WatchFilterValue: watchValue}); err != nil {
			cancel()
			fmt.Println("FAIL: setting up", c.Name, err)
			return 1
		}
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

// reconcileErrors are the "Reconciler error" entries controller-runtime
// logged, by namespace, so a test can tell whether its objects caused any.
var reconcileErrors envtest.ReconcileErrors

// cloudEnv is one fake OpenStack with a flavor, an image and a network,
// and a namespace whose Secret "cloud" authenticates to it.
type cloudEnv struct {
	t                 *testing.T
	cloud             *fakeopenstack.Cloud
	ns                string
	flavorID, imageID string
	netID, subnetID   string
}

func newCloudEnv(t *testing.T) *cloudEnv {
	t.Helper()
	e := &cloudEnv{t: t, cloud: fakeopenstack.New(t)}
	e.flavorID = e.cloud.AddFlavor("m1.medium", 2, 4096, 20)
	e.imageID = e.cloud.AddImage("rhcos")
	e.netID = e.cloud.AddNetwork("machines")
	e.subnetID = e.cloud.AddSubnet(e.netID, "machines-v4", "10.0.0.0/24")

	ns, err := env.NewNamespace(context.Background(), "infra")
	if err != nil {
		t.Fatal(err)
	}
	e.ns = ns.Name
	e.create(&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "cloud", Namespace: e.ns},
		Data:       map[string][]byte{clients.CloudsYAMLKey: e.cloud.Clouds("openstack")},
	})
	e.cloud.ResetRequests()
	return e
}

func identity() infrav1.OpenStackIdentityReference {
	return infrav1.OpenStackIdentityReference{Type: infrav1.IdentityRefTypeSecret, Name: "cloud", CloudName: "openstack"}
}

// requests is how many requests the fake got (any service, Keystone
// included).
func (e *cloudEnv) requests() int { return len(e.cloud.Requests()) }

// labelled puts the manager's watch label on obj.
func labelled[T client.Object](obj T) T {
	l := obj.GetLabels()
	if l == nil {
		l = map[string]string{}
	}
	l[clusterv1.WatchLabel] = watchValue
	obj.SetLabels(l)
	return obj
}

func (e *cloudEnv) create(obj client.Object) {
	e.t.Helper()
	if err := env.Client.Create(context.Background(), obj); err != nil {
		e.t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
}

// createDeletedOnCleanup creates obj and, when the test ends (before the
// fake cloud stops), deletes it and waits until it is gone, so no
// finalizer outlives the test's cloud.
func (e *cloudEnv) createDeletedOnCleanup(obj client.Object) {
	e.t.Helper()
	e.create(obj)
	e.t.Cleanup(func() { e.deleteAndWait(obj) })
}

func (e *cloudEnv) deleteAndWait(obj client.Object) {
	e.t.Helper()
	ctx := context.Background()
	if err := env.Client.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
		e.t.Errorf("deleting %s: %v", obj.GetName(), err)
		return
	}
	NewWithT(e.t).Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj))
	}, wait, tick).Should(BeTrue(), "%s was not deleted", obj.GetName())
}

// server is an OpenStackServer with one port on the fake's network.
func (e *cloudEnv) server(name string) *infrav1alpha1.OpenStackServer {
	return labelled(&infrav1alpha1.OpenStackServer{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns},
		Spec: infrav1alpha1.OpenStackServerSpec{
			IdentityRef: identity(),
			FlavorID:    ptr.To(e.flavorID),
			Image:       infrav1.ImageParam{Filter: &infrav1.ImageFilter{Name: ptr.To("rhcos")}},
			Ports:       []infrav1.PortOpts{{Network: &infrav1.NetworkParam{ID: ptr.To(e.netID)}}},
		},
	})
}

func (e *cloudEnv) machineSpec() infrav1.OpenStackMachineSpec {
	return infrav1.OpenStackMachineSpec{
		Flavor:      infrav1.FlavorParam{Filter: &infrav1.FlavorFilter{Name: ptr.To("m1.medium")}},
		Image:       infrav1.ImageParam{ID: ptr.To(e.imageID)},
		IdentityRef: ptr.To(identity()),
		Ports:       []infrav1.PortOpts{{Network: &infrav1.NetworkParam{ID: ptr.To(e.netID)}}},
	}
}

// machineOpts vary machineObjects.
type machineOpts struct {
	// unlabelled leaves the watch label off every object.
	unlabelled bool
	// paused creates the Cluster with spec.paused.
	paused bool
}

// machineObjects makes what CAPI core would have made for one machine: a
// Cluster whose infrastructure is provisioned, a bootstrap Secret, a
// Machine, and its OpenStackMachine. CAPI core's controllers do not run
// here; the test plays their part, with the fake CAPI core's helpers
// (test/fakecapi; its controller is not needed: the Machine's bootstrap data
// is given, and the real OpenStack provider provisions the machine).
func (e *cloudEnv) machineObjects(name string, spec infrav1.OpenStackMachineSpec, o machineOpts) (*clusterv1.Cluster, *infrav1.OpenStackMachine) {
	e.t.Helper()
	ctx := context.Background()
	label := func(obj client.Object) client.Object {
		if o.unlabelled {
			return obj
		}
		return labelled(obj)
	}
	cluster := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns},
		Spec: clusterv1.ClusterSpec{
			Paused: ptr.To(o.paused),
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: infrav1.GroupVersion.Group, Kind: "OpenStackCluster", Name: name},
		},
	}
	e.create(label(cluster))
	if err := fakecapi.ProvisionCluster(ctx, env.Client, cluster); err != nil {
		e.t.Fatal(err)
	}
	e.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name + "-bootstrap", Namespace: e.ns},
		Data: map[string][]byte{"value": []byte("#cloud-config\n"), "format": []byte("cloud-config")}, Type: clusterv1.ClusterSecretType})
	machine := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns, Labels: map[string]string{clusterv1.ClusterNameLabel: name}},
		Spec: clusterv1.MachineSpec{
			ClusterName: name,
			Bootstrap:   clusterv1.Bootstrap{DataSecretName: ptr.To(name + "-bootstrap")},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: infrav1.GroupVersion.Group, Kind: "OpenStackMachine", Name: name},
		},
	}
	e.create(label(machine))
	osm := &infrav1.OpenStackMachine{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns, Labels: map[string]string{clusterv1.ClusterNameLabel: name},
			OwnerReferences: []metav1.OwnerReference{fakecapi.MachineOwner(machine)}},
		Spec: spec,
	}
	e.createDeletedOnCleanup(label(osm))
	return cluster, osm
}

func get(g Gomega, obj client.Object) {
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)).To(Succeed())
}

// cond renders a condition for assertions and failure messages.
func cond(obj capiconditions.Getter, t string) string {
	c := capiconditions.Get(obj, t)
	if c == nil {
		return "<none>"
	}
	return fmt.Sprintf("%s/%s: %s", c.Status, c.Reason, c.Message)
}

// update applies f to the latest version of obj until the write succeeds.
func update(g Gomega, obj client.Object, f func()) {
	g.Eventually(func() error {
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		f()
		return env.Client.Update(context.Background(), obj)
	}, wait, tick).Should(Succeed())
}

func waitServerReady(g Gomega, oss *infrav1alpha1.OpenStackServer) {
	g.Eventually(func(g Gomega) {
		get(g, oss)
		g.Expect(capiconditions.IsTrue(oss, infrav1.ReadyCondition)).To(BeTrue(), "Ready: %s", cond(oss, infrav1.ReadyCondition))
	}, wait, tick).Should(Succeed())
}

func waitMachineReady(g Gomega, osm *infrav1.OpenStackMachine) {
	g.Eventually(func(g Gomega) {
		get(g, osm)
		g.Expect(capiconditions.IsTrue(osm, infrav1.ReadyCondition)).To(BeTrue(), "Ready: %s", cond(osm, infrav1.ReadyCondition))
		g.Expect(osm.Status.Initialization).NotTo(BeNil())
		g.Expect(ptr.Deref(osm.Status.Initialization.Provisioned, false)).To(BeTrue())
	}, wait, tick).Should(Succeed())
}

// history records the conditions of every version of the objects of one
// kind in a namespace that the API server stored, so a test can look at
// what a user could have seen, not only at the end state.
type history struct {
	mu       sync.Mutex
	versions map[string][][]metav1.Condition // by object name, oldest first
}

func watchHistory(t *testing.T, ns string, list client.ObjectList) *history {
	t.Helper()
	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	w, err := wc.Watch(context.Background(), list, client.InNamespace(ns))
	if err != nil {
		t.Fatal(err)
	}
	h := &history{versions: map[string][][]metav1.Condition{}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			if ev.Type != watch.Added && ev.Type != watch.Modified {
				continue
			}
			obj, ok := ev.Object.(interface {
				client.Object
				capiconditions.Getter
			})
			if !ok {
				continue
			}
			h.mu.Lock()
			h.versions[obj.GetName()] = append(h.versions[obj.GetName()], slices.Clone(obj.GetConditions()))
			h.mu.Unlock()
		}
	}()
	t.Cleanup(func() { w.Stop(); <-done })
	return h
}

func (h *history) of(name string) [][]metav1.Condition {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.versions[name])
}

// sawCondition reports whether some stored version had condition t with
// this status and reason.
func (h *history) sawCondition(name, t string, status metav1.ConditionStatus, reason string) bool {
	for _, v := range h.of(name) {
		for _, c := range v {
			if c.Type == t && c.Status == status && c.Reason == reason {
				return true
			}
		}
	}
	return false
}

func conditionTypes(cs []metav1.Condition) []string {
	out := make([]string, 0, len(cs))
	for _, c := range cs {
		out = append(out, c.Type)
	}
	return out
}

// TestPausedCluster: while the Cluster is paused, its OpenStackMachine and
// OpenStackServer say Paused=True and no OpenStack call is made; once it
// is unpaused they proceed to Ready.
func TestPausedCluster(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	e := newCloudEnv(t)
	cluster, osm := e.machineObjects("paused", e.machineSpec(), machineOpts{paused: true})
	// A server of the same cluster that is not a machine's.
	oss := e.server("paused-standalone")
	oss.Labels[clusterv1.ClusterNameLabel] = cluster.Name
	e.createDeletedOnCleanup(oss)

	g.Eventually(func(g Gomega) {
		get(g, osm)
		get(g, oss)
		for _, o := range []capiconditions.Getter{osm, oss} {
			c := capiconditions.Get(o, clusterv1.PausedCondition)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(c.Reason).To(Equal(clusterv1.PausedReason))
			g.Expect(c.Message).To(ContainSubstring("Cluster spec.paused"))
		}
	}, wait, tick).Should(Succeed())
	g.Expect(e.requests()).To(BeZero(), "OpenStack was called while paused: %v", e.cloud.Calls())
	g.Expect(osm.Finalizers).To(BeEmpty(), "a paused machine must not be acted on")
	g.Expect(oss.Finalizers).To(BeEmpty(), "a paused server must not be acted on")
	// The machine made no server while paused.
	g.Expect(apierrors.IsNotFound(env.Client.Get(context.Background(), client.ObjectKeyFromObject(osm), &infrav1alpha1.OpenStackServer{}))).To(BeTrue())

	// A change to a paused object is still not acted on.
	update(g, oss, func() { oss.Annotations = map[string]string{"test.ocp-capi.io/poke": "1"} })
	g.Consistently(e.requests, 2*time.Second, tick).Should(BeZero(), "OpenStack was called while paused: %v", e.cloud.Calls())

	update(g, cluster, func() { cluster.Spec.Paused = ptr.To(false) })
	waitServerReady(g, oss)
	waitMachineReady(g, osm)
	for _, o := range []capiconditions.Getter{osm, oss} {
		g.Expect(cond(o, clusterv1.PausedCondition)).To(HavePrefix("False/" + clusterv1.NotPausedReason))
	}
	g.Expect(e.requests()).To(BeNumerically(">", 0))
}

// TestPausedAnnotation: the cluster.x-k8s.io/paused annotation pauses a
// single object, even one that belongs to no cluster.
func TestPausedAnnotation(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	e := newCloudEnv(t)
	oss := e.server("annotated")
	oss.Annotations = map[string]string{clusterv1.PausedAnnotation: ""}
	e.createDeletedOnCleanup(oss)

	g.Eventually(func(g Gomega) {
		get(g, oss)
		g.Expect(cond(oss, clusterv1.PausedCondition)).To(HavePrefix("True/" + clusterv1.PausedReason))
		g.Expect(cond(oss, clusterv1.PausedCondition)).To(ContainSubstring("cluster.x-k8s.io/paused annotation"))
	}, wait, tick).Should(Succeed())
	g.Expect(e.requests()).To(BeZero(), "OpenStack was called while paused: %v", e.cloud.Calls())
	g.Expect(oss.Finalizers).To(BeEmpty())

	update(g, oss, func() { delete(oss.Annotations, clusterv1.PausedAnnotation) })
	waitServerReady(g, oss)
	g.Expect(cond(oss, clusterv1.PausedCondition)).To(HavePrefix("False/" + clusterv1.NotPausedReason))
}

// TestWatchFilter: objects without cluster.x-k8s.io/watch-filter=<value>
// (no label, or another value) are left to another manager: no condition,
// no finalizer, no OpenStack call. The objects created after them with
// the label are reconciled, which shows the manager was working.
func TestWatchFilter(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	e := newCloudEnv(t)
	foreign := e.server("foreign")
	delete(foreign.Labels, clusterv1.WatchLabel)
	other := e.server("other-value")
	other.Labels[clusterv1.WatchLabel] = "someone-else"
	e.createDeletedOnCleanup(foreign)
	e.createDeletedOnCleanup(other)
	_, foreignMachine := e.machineObjects("foreign-machine", e.machineSpec(), machineOpts{unlabelled: true})

	ours := e.server("ours")
	e.createDeletedOnCleanup(ours)
	waitServerReady(g, ours)
	_, ourMachine := e.machineObjects("our-machine", e.machineSpec(), machineOpts{})
	waitMachineReady(g, ourMachine)

	for _, o := range []client.Object{foreign, other, foreignMachine} {
		get(g, o)
		g.Expect(o.(capiconditions.Getter).GetConditions()).To(BeEmpty(), "%s was reconciled", o.GetName())
		g.Expect(o.GetFinalizers()).To(BeEmpty(), "%s was reconciled", o.GetName())
	}
	g.Expect(apierrors.IsNotFound(env.Client.Get(context.Background(), client.ObjectKeyFromObject(foreignMachine), &infrav1alpha1.OpenStackServer{}))).To(BeTrue(),
		"a server was made for a machine without the watch label")
	for _, n := range e.cloud.Names(fakeopenstack.Servers) {
		g.Expect(n).To(BeElementOf("ours", "our-machine"))
	}

	// With the label, the same object is reconciled.
	update(g, foreign, func() { labelled(foreign) })
	waitServerReady(g, foreign)
}

// TestConditionsOnFirstVisit: the first version of each object that the
// API server stores with any condition already has every condition its
// kind owns, each with a reason (the CAPI v1beta2 contract: all owned
// conditions from the first visit, Paused included, in one write), and no
// later version lacks one of them or a reason. Checked for every kind with
// owned conditions: OpenStackServer, OpenStackMachine, OpenStackCluster
// and OpenStackMachineTemplate, paused or not.
func TestConditionsOnFirstVisit(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	e := newCloudEnv(t)
	servers := watchHistory(t, e.ns, &infrav1alpha1.OpenStackServerList{})
	machines := watchHistory(t, e.ns, &infrav1.OpenStackMachineList{})
	clusters := watchHistory(t, e.ns, &infrav1.OpenStackClusterList{})
	templates := watchHistory(t, e.ns, &infrav1.OpenStackMachineTemplateList{})

	_, osm := e.machineObjects("first", e.machineSpec(), machineOpts{})
	// A server paused from its creation: its only pass is the paused one.
	pausedServer := e.server("first-paused")
	pausedServer.Annotations = map[string]string{clusterv1.PausedAnnotation: ""}
	e.createDeletedOnCleanup(pausedServer)
	// Clusters whose CAPI Cluster does not exist (yet): their first pass
	// needs no cloud, and one of them is paused.
	osc := labelled(&infrav1.OpenStackCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "first-cluster", Namespace: e.ns},
		Spec:       infrav1.OpenStackClusterSpec{IdentityRef: identity()},
	})
	e.createDeletedOnCleanup(osc)
	pausedCluster := labelled(&infrav1.OpenStackCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "first-cluster-paused", Namespace: e.ns,
			Annotations: map[string]string{clusterv1.PausedAnnotation: ""}},
		Spec: infrav1.OpenStackClusterSpec{IdentityRef: identity()},
	})
	e.createDeletedOnCleanup(pausedCluster)
	tpl := labelled(&infrav1.OpenStackMachineTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: "first-template", Namespace: e.ns},
		Spec:       infrav1.OpenStackMachineTemplateSpec{Template: infrav1.OpenStackMachineTemplateResource{Spec: e.machineSpec()}},
	})
	e.createDeletedOnCleanup(tpl)

	waitMachineReady(g, osm)
	oss := &infrav1alpha1.OpenStackServer{ObjectMeta: metav1.ObjectMeta{Name: osm.Name, Namespace: e.ns}}
	waitServerReady(g, oss)
	g.Eventually(func(g Gomega) {
		for _, o := range []client.Object{pausedServer, pausedCluster} {
			get(g, o)
			g.Expect(cond(o.(capiconditions.Getter), clusterv1.PausedCondition)).To(HavePrefix("True/"), o.GetName())
		}
		get(g, osc)
		g.Expect(cond(osc, infrav1.NetworkReadyCondition)).To(HavePrefix("Unknown/"+infrav1.WaitingForDependenciesReason), "OpenStackCluster")
		get(g, tpl)
		g.Expect(cond(tpl, infrav1.CapacityResolvedCondition)).To(HavePrefix("True/"), "OpenStackMachineTemplate")
	}, wait, tick).Should(Succeed())

	check := func(kind, name string, versions [][]metav1.Condition, owned []string) {
		t.Helper()
		first := slices.IndexFunc(versions, func(v []metav1.Condition) bool { return len(v) > 0 })
		g.Expect(first).To(BeNumerically(">=", 0), "%s %s: no stored version has conditions", kind, name)
		g.Expect(conditionTypes(versions[first])).To(ContainElements(owned),
			"%s %s: the first stored version with conditions (version %d) has only %v", kind, name, first, conditionTypes(versions[first]))
		for i, v := range versions[first:] {
			g.Expect(conditionTypes(v)).To(ContainElements(owned), "%s %s version %d lost a condition", kind, name, first+i)
			for _, c := range v {
				g.Expect(c.Reason).NotTo(BeEmpty(), "%s %s version %d: condition %s has no reason", kind, name, first+i, c.Type)
			}
		}
	}
	check("OpenStackServer", oss.Name, servers.of(oss.Name), serverConditions)
	check("OpenStackServer", pausedServer.Name, servers.of(pausedServer.Name), serverConditions)
	check("OpenStackMachine", osm.Name, machines.of(osm.Name), machineConditions)
	check("OpenStackCluster", osc.Name, clusters.of(osc.Name), clusterConditions)
	check("OpenStackCluster", pausedCluster.Name, clusters.of(pausedCluster.Name), clusterConditions)
	check("OpenStackMachineTemplate", tpl.Name, templates.of(tpl.Name), templateConditions)

	// The end state: every step True, Deleting False, Paused False.
	get(g, oss)
	for _, c := range []string{infrav1.ReferencesResolvedCondition, infrav1.PortsReadyCondition, infrav1.VolumesReadyCondition, infrav1.InstanceReadyCondition} {
		g.Expect(cond(oss, c)).To(HavePrefix("True/"), c)
	}
	g.Expect(cond(oss, clusterv1.DeletingCondition)).To(HavePrefix("False/" + clusterv1.NotDeletingReason))
	g.Expect(cond(osm, infrav1.InstanceReadyCondition)).To(HavePrefix("True/"))
	// Nothing was done for the paused objects.
	g.Expect(pausedServer.Finalizers).To(BeEmpty())
	g.Expect(pausedCluster.Finalizers).To(BeEmpty())
}

// TestServerErrorSurfacesNovaFault: a server that Nova puts in ERROR shows
// Nova's fault message in InstanceReady and Ready. It is not terminal: the
// controller keeps looking, and once the server is repaired (as an
// operator might, with `nova reset-state --active`) it becomes Ready
// without any change to the object.
func TestServerErrorSurfacesNovaFault(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	e := newCloudEnv(t)
	const fault = "No valid host was found. There are not enough hosts available."
	e.cloud.FailServer("failing", 500, fault)
	oss := e.server("failing")
	e.createDeletedOnCleanup(oss)

	g.Eventually(func(g Gomega) {
		get(g, oss)
		c := capiconditions.Get(oss, infrav1.InstanceReadyCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(Equal(infrav1.InstanceErrorReason))
		g.Expect(c.Message).To(ContainSubstring(fault))
		// The patch helper writes conditions before the rest of the
		// status; wait for both.
		g.Expect(string(ptr.Deref(oss.Status.InstanceState, ""))).To(Equal("ERROR"))
	}, wait, tick).Should(Succeed())
	g.Expect(cond(oss, infrav1.ReadyCondition)).To(HavePrefix("False/"))
	g.Expect(cond(oss, infrav1.ReadyCondition)).To(ContainSubstring(fault))
	// Not marked failed for good: no provisioned flag, no failure fields,
	// and the server was neither deleted nor replaced.
	g.Expect(oss.Status.Initialization).To(Or(BeNil(), HaveField("Provisioned", Or(BeNil(), Equal(ptr.To(false))))))
	g.Expect(e.cloud.Len(fakeopenstack.Servers)).To(Equal(1))
	id := ptr.Deref(oss.Status.InstanceID, "")
	g.Expect(id).NotTo(BeEmpty())

	e.cloud.Set(fakeopenstack.Servers, id, "status", "ACTIVE")
	e.cloud.Set(fakeopenstack.Servers, id, "OS-EXT-STS:vm_state", "active")
	e.cloud.Set(fakeopenstack.Servers, id, "fault", nil)
	g.Eventually(func(g Gomega) {
		get(g, oss)
		g.Expect(capiconditions.IsTrue(oss, infrav1.ReadyCondition)).To(BeTrue(), "Ready: %s", cond(oss, infrav1.ReadyCondition))
	}, errorWait, time.Second).Should(Succeed())
	g.Expect(ptr.Deref(oss.Status.InstanceID, "")).To(Equal(id))
	g.Expect(e.cloud.Len(fakeopenstack.Servers)).To(Equal(1))
}

// TestMachineErrorSurfacesNovaFault: the machine mirrors the server's
// ERROR, fault message included, into InstanceReady and Ready.
func TestMachineErrorSurfacesNovaFault(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	e := newCloudEnv(t)
	const fault = "Exceeded maximum number of retries. Exhausted all hosts available for retrying build failures."
	e.cloud.FailServer("failing-machine", 500, fault)
	_, osm := e.machineObjects("failing-machine", e.machineSpec(), machineOpts{})
	g.Eventually(func(g Gomega) {
		get(g, osm)
		g.Expect(cond(osm, infrav1.InstanceReadyCondition)).To(HavePrefix("False/"))
		g.Expect(cond(osm, infrav1.InstanceReadyCondition)).To(ContainSubstring(fault))
		g.Expect(cond(osm, infrav1.ReadyCondition)).To(HavePrefix("False/"))
		g.Expect(cond(osm, infrav1.ReadyCondition)).To(ContainSubstring(fault))
	}, wait, tick).Should(Succeed())
	g.Expect(osm.Status.Initialization).To(Or(BeNil(), HaveField("Provisioned", Or(BeNil(), Equal(ptr.To(false))))))
}

// TestDeleteAfterStatusLost: deletion finds the server, its trunk, ports
// and volumes by name when the status is gone.
func TestDeleteAfterStatusLost(t *testing.T) {
	t.Parallel()
	full := func(e *cloudEnv, name string) *infrav1alpha1.OpenStackServer {
		oss := e.server(name)
		oss.Spec.Ports = []infrav1.PortOpts{
			{Network: &infrav1.NetworkParam{ID: ptr.To(e.netID)}},
			{Network: &infrav1.NetworkParam{ID: ptr.To(e.netID)}, NameSuffix: ptr.To("trunk"), Trunk: ptr.To(true)},
		}
		oss.Spec.RootVolume = &infrav1.RootVolume{SizeGiB: 1}
		oss.Spec.AdditionalBlockDevices = []infrav1.AdditionalBlockDevice{
			{Name: "data", SizeGiB: 1, Storage: infrav1.BlockDeviceStorage{Type: infrav1.VolumeBlockDevice}},
		}
		return oss
	}
	expectCreated := func(g Gomega, e *cloudEnv) {
		g.Expect(e.cloud.Len(fakeopenstack.Servers)).To(Equal(1))
		g.Expect(e.cloud.Len(fakeopenstack.Ports)).To(Equal(2))
		g.Expect(e.cloud.Len(fakeopenstack.Trunks)).To(Equal(1))
		g.Expect(e.cloud.Len(fakeopenstack.Volumes)).To(Equal(2))
	}
	expectNothingLeft := func(g Gomega, e *cloudEnv) {
		for _, k := range []fakeopenstack.Kind{fakeopenstack.Servers, fakeopenstack.Ports, fakeopenstack.Trunks, fakeopenstack.Volumes} {
			g.Expect(e.cloud.Names(k)).To(BeEmpty(), "%s left in OpenStack", k)
		}
	}

	t.Run("status cleared", func(t *testing.T) {
		t.Parallel()
		g := NewWithT(t)
		e := newCloudEnv(t)
		oss := full(e, "cleared")
		e.createDeletedOnCleanup(oss)
		waitServerReady(g, oss)
		expectCreated(g, e)

		g.Eventually(func() error {
			get(g, oss)
			oss.Status = infrav1alpha1.OpenStackServerStatus{}
			return env.Client.Status().Update(context.Background(), oss)
		}, wait, tick).Should(Succeed())
		e.deleteAndWait(oss)
		expectNothingLeft(g, e)
	})

	// clusterctl move: the object is re-created elsewhere without status
	// and with a new UID, so this process remembers nothing of it either.
	t.Run("moved", func(t *testing.T) {
		t.Parallel()
		g := NewWithT(t)
		e := newCloudEnv(t)
		oss := full(e, "moved")
		e.createDeletedOnCleanup(oss)
		waitServerReady(g, oss)
		expectCreated(g, e)

		// Take the source object away as move does: paused, finalizer
		// dropped, deleted. OpenStack keeps everything.
		update(g, oss, func() { oss.Annotations = map[string]string{clusterv1.PausedAnnotation: ""} })
		g.Eventually(func(g Gomega) {
			get(g, oss)
			g.Expect(cond(oss, clusterv1.PausedCondition)).To(HavePrefix("True/"))
		}, wait, tick).Should(Succeed())
		update(g, oss, func() { oss.Finalizers = nil })
		e.deleteAndWait(oss)
		expectCreated(g, e)

		// The target object: same name and spec, no status, paused until
		// the move is done; then deleted.
		moved := full(e, "moved")
		moved.Annotations = map[string]string{clusterv1.PausedAnnotation: ""}
		moved.Finalizers = []string{infrav1alpha1.OpenStackServerFinalizer}
		e.create(moved)
		g.Expect(env.Client.Delete(context.Background(), moved)).To(Succeed())
		update(g, moved, func() { delete(moved.Annotations, clusterv1.PausedAnnotation) })
		g.Eventually(func() bool {
			return apierrors.IsNotFound(env.Client.Get(context.Background(), client.ObjectKeyFromObject(moved), moved))
		}, wait, tick).Should(BeTrue(), "the moved server was not deleted: Deleting %s", cond(moved, clusterv1.DeletingCondition))
		expectNothingLeft(g, e)
	})
}

// TestTransientErrors: while OpenStack answers 503 or 429, the step says
// OpenStackUnavailable or RateLimited (Unknown: nothing has failed), and
// the server converges once the faults stop.
func TestTransientErrors(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	e := newCloudEnv(t)
	e.cloud.Inject(fakeopenstack.Fault{Method: "GET", PathPrefix: "/image/v2/images", Status: 429, RetryAfter: "1", Times: 1})
	e.cloud.Inject(fakeopenstack.Fault{Method: "POST", PathPrefix: "/network/v2.0/ports", Status: 503, Times: 3})
	servers := watchHistory(t, e.ns, &infrav1alpha1.OpenStackServerList{})
	oss := e.server("transient")
	e.createDeletedOnCleanup(oss)
	waitServerReady(g, oss)

	g.Expect(servers.sawCondition(oss.Name, infrav1.ReferencesResolvedCondition, metav1.ConditionUnknown, infrav1.RateLimitedReason)).To(BeTrue(),
		"the 429 was not reported: %v", servers.of(oss.Name))
	g.Expect(servers.sawCondition(oss.Name, infrav1.PortsReadyCondition, metav1.ConditionUnknown, infrav1.OpenStackUnavailableReason)).To(BeTrue(),
		"the 503 was not reported: %v", servers.of(oss.Name))
	// Nothing was marked failed on the way.
	for _, v := range servers.of(oss.Name) {
		for _, c := range v {
			if c.Type == infrav1.ReferencesResolvedCondition || c.Type == infrav1.PortsReadyCondition {
				g.Expect(c.Status).NotTo(Equal(metav1.ConditionFalse), "%s: %s/%s", c.Type, c.Reason, c.Message)
			}
		}
	}
	// One port: the refused creates made none.
	g.Expect(e.cloud.Len(fakeopenstack.Ports)).To(Equal(1))
	g.Expect(e.cloud.Hits("POST", "/network/v2.0/ports")).To(Equal(4))
}

// TestMachineTemplateCapacity: the template reports the flavor's capacity
// for scaling from zero, by flavor name or ID, and says why when the
// flavor does not exist.
func TestMachineTemplateCapacity(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	e := newCloudEnv(t)
	template := func(name string, flavor infrav1.FlavorParam) *infrav1.OpenStackMachineTemplate {
		spec := e.machineSpec()
		spec.Flavor = flavor
		return labelled(&infrav1.OpenStackMachineTemplate{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns},
			Spec:       infrav1.OpenStackMachineTemplateSpec{Template: infrav1.OpenStackMachineTemplateResource{Spec: spec}},
		})
	}
	history := watchHistory(t, e.ns, &infrav1.OpenStackMachineTemplateList{})
	byName := template("by-name", infrav1.FlavorParam{Filter: &infrav1.FlavorFilter{Name: ptr.To("m1.medium")}})
	byID := template("by-id", infrav1.FlavorParam{ID: ptr.To(e.flavorID)})
	missing := template("missing", infrav1.FlavorParam{Filter: &infrav1.FlavorFilter{Name: ptr.To("m1.nonexistent")}})
	for _, o := range []client.Object{byName, byID, missing} {
		e.createDeletedOnCleanup(o)
	}

	want := corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse("2"),
		corev1.ResourceMemory:           resource.MustParse("4Gi"),
		corev1.ResourceEphemeralStorage: resource.MustParse("20Gi"),
	}
	for _, tpl := range []*infrav1.OpenStackMachineTemplate{byName, byID} {
		g.Eventually(func(g Gomega) {
			get(g, tpl)
			g.Expect(cond(tpl, infrav1.CapacityResolvedCondition)).To(HavePrefix("True/"))
			// Conditions are written before the rest of the status.
			g.Expect(tpl.Status.Capacity).To(HaveLen(len(want)))
		}, wait, tick).Should(Succeed())
		g.Expect(cond(tpl, infrav1.ReadyCondition)).To(HavePrefix("True/"))
		g.Expect(tpl.Status.NodeInfo).To(Equal(&infrav1.NodeInfo{OperatingSystem: "linux"}))
		for k, v := range want {
			got := tpl.Status.Capacity[k]
			g.Expect(got.Cmp(v)).To(BeZero(), "%s: got %s, want %s", k, got.String(), v.String())
		}
	}
	g.Eventually(func(g Gomega) {
		get(g, missing)
		g.Expect(cond(missing, infrav1.CapacityResolvedCondition)).To(HavePrefix("False/" + infrav1.NotFoundReason))
	}, wait, tick).Should(Succeed())
	g.Expect(cond(missing, infrav1.CapacityResolvedCondition)).To(ContainSubstring("m1.nonexistent"))
	g.Expect(cond(missing, infrav1.ReadyCondition)).To(HavePrefix("False/"))
	g.Expect(missing.Status.Capacity).To(BeEmpty())

	// Both owned conditions from the first write on.
	for _, tpl := range []*infrav1.OpenStackMachineTemplate{byName, byID, missing} {
		for i, v := range history.of(tpl.Name) {
			if len(v) > 0 {
				g.Expect(conditionTypes(v)).To(ContainElements(templateConditions), "%s version %d", tpl.Name, i)
			}
		}
	}
}

// TestMachineProviderIDRegion: the providerID carries identityRef.region
// (openstack://RegionOne/<id>), as the OpenStack cloud provider writes it
// on the Node when it runs with a region.
func TestMachineProviderIDRegion(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	e := newCloudEnv(t)
	spec := e.machineSpec()
	spec.IdentityRef.Region = fakeopenstack.Region
	_, osm := e.machineObjects("region", spec, machineOpts{})
	waitMachineReady(g, osm)

	id := ptr.Deref(osm.Status.InstanceID, "")
	g.Expect(id).NotTo(BeEmpty())
	g.Expect(osm.Spec.ProviderID).To(Equal("openstack://" + fakeopenstack.Region + "/" + id))
	g.Expect(e.cloud.Object(fakeopenstack.Servers, id)).NotTo(BeNil())
	g.Expect(osm.Status.Addresses).NotTo(BeEmpty())
	g.Expect(string(ptr.Deref(osm.Status.InstanceState, ""))).To(Equal("ACTIVE"))
	g.Expect(strings.Count(osm.Spec.ProviderID, "/")).To(Equal(3))
}

// TestDeletionReportsNoError: deleting servers and machines raises no
// reconcile error. The pass that removes the finalizer is often followed
// by one more that still finds the object in the informer cache; its
// status patch then meets an object that is gone, which is the expected
// end of a deletion, not an error.
func TestDeletionReportsNoError(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	e := newCloudEnv(t)
	var objs []client.Object
	for i := range 4 {
		oss := e.server(fmt.Sprintf("del-%d", i))
		e.create(oss)
		objs = append(objs, oss)
	}
	for i := range 2 {
		_, osm := e.machineObjects(fmt.Sprintf("del-machine-%d", i), e.machineSpec(), machineOpts{})
		objs = append(objs, osm)
	}
	for _, o := range objs {
		switch o := o.(type) {
		case *infrav1alpha1.OpenStackServer:
			waitServerReady(g, o)
		case *infrav1.OpenStackMachine:
			waitMachineReady(g, o)
		}
	}
	g.Expect(reconcileErrors.In(e.ns)).To(BeEmpty())
	for _, o := range objs {
		e.deleteAndWait(o)
	}
	g.Expect(e.cloud.Names(fakeopenstack.Servers)).To(BeEmpty())
	// The last passes may still be running when the objects are gone.
	g.Consistently(func() []string { return reconcileErrors.In(e.ns) }, 2*time.Second, tick).Should(BeEmpty())
}

// TestDeletionProblemShowsInReady: Ready shows what blocks a deletion, not
// only that one is under way. Here the identity Secret is deleted before
// the machine (a common mistake): deletion cannot proceed, and both the
// machine's and the server's Ready must say why. Restoring the Secret lets
// the deletion finish with nothing left in OpenStack.
func TestDeletionProblemShowsInReady(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	e := newCloudEnv(t)
	_, osm := e.machineObjects("stuck", e.machineSpec(), machineOpts{})
	waitMachineReady(g, osm)
	oss := &infrav1alpha1.OpenStackServer{ObjectMeta: metav1.ObjectMeta{Name: osm.Name, Namespace: e.ns}}

	secret := &corev1.Secret{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: e.ns, Name: "cloud"}, secret)).To(Succeed())
	g.Expect(env.Client.Delete(context.Background(), secret)).To(Succeed())
	restore := func() {
		fresh := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "cloud", Namespace: e.ns}, Data: secret.Data}
		if err := env.Client.Create(context.Background(), fresh); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Errorf("restoring the identity Secret: %v", err)
		}
	}
	t.Cleanup(restore) // runs before the cleanup that deletes the machine
	g.Expect(env.Client.Delete(context.Background(), osm)).To(Succeed())

	const why = "identity Secret"
	g.Eventually(func(g Gomega) {
		get(g, oss)
		g.Expect(cond(oss, clusterv1.DeletingCondition)).To(ContainSubstring(why))
	}, wait, tick).Should(Succeed())
	g.Eventually(func(g Gomega) {
		get(g, osm)
		g.Expect(cond(osm, infrav1.ReadyCondition)).To(HavePrefix("False/"))
		g.Expect(cond(osm, infrav1.ReadyCondition)).To(ContainSubstring(why))
	}, wait, tick).Should(Succeed(), "the machine's Ready does not say why its deletion is stuck")
	g.Eventually(func(g Gomega) {
		get(g, oss)
		g.Expect(cond(oss, infrav1.ReadyCondition)).To(HavePrefix("False/"))
		g.Expect(cond(oss, infrav1.ReadyCondition)).To(ContainSubstring(why), "Deleting: %s", cond(oss, clusterv1.DeletingCondition))
	}, wait, tick).Should(Succeed(), "the server's Ready does not say why its deletion is stuck")

	restore()
	e.deleteAndWait(osm)
	for _, k := range []fakeopenstack.Kind{fakeopenstack.Servers, fakeopenstack.Ports} {
		g.Expect(e.cloud.Names(k)).To(BeEmpty(), "%s left in OpenStack", k)
	}
}

// TestDeletionCallBudget: deleting a server sends each DELETE once. Nova
// takes a while to delete a server (task_state "deleting"); looking at it
// again in the meantime must not send the DELETE again, and the pass that
// may follow the finalizer's removal (the informer cache still shows the
// object) must not delete anything again either.
func TestDeletionCallBudget(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	e := newCloudEnv(t)
	e.cloud.SetDeleteReads(2) // Nova answers twice with task_state "deleting"
	oss := e.server("budget")
	e.createDeletedOnCleanup(oss)
	waitServerReady(g, oss)

	e.cloud.ResetRequests()
	e.deleteAndWait(oss)
	g.Expect(e.cloud.Names(fakeopenstack.Servers)).To(BeEmpty())
	g.Expect(e.cloud.Names(fakeopenstack.Ports)).To(BeEmpty())
	// The last pass may still be running when the object is gone.
	g.Consistently(func(g Gomega) {
		g.Expect(e.cloud.Hits("DELETE", "/compute/v2.1/servers/{id}")).To(Equal(1), "server DELETEs: %v", e.cloud.Calls())
		g.Expect(e.cloud.Hits("DELETE", "/network/v2.0/ports/{id}")).To(Equal(1), "port DELETEs: %v", e.cloud.Calls())
	}, 2*time.Second, tick).Should(Succeed())
}
