package controllers_test

import (
	"context"
	"slices"
	"strconv"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	capiconditions "sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/ocp-capi/ocp-capi/api/bootstrap/v1alpha2"
	controlplanev1 "github.com/ocp-capi/ocp-capi/api/controlplane/v1alpha3"
	aiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/agentinstall/v1beta1"
	hivev1 "github.com/ocp-capi/ocp-capi/internal/consumed/hive/v1"
	hiveextv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/hiveext/v1beta1"
	"github.com/ocp-capi/ocp-capi/test/fakecapi"
)

// Names every test cluster uses, each in its own namespace.
const (
	clusterName  = "c1"
	controlPlane = "cp"
	cpTemplate   = "cp-template"
	wTemplate    = "worker-template"
	version      = "4.19.0"
)

// rhcos is the disk image of the Metal3MachineTemplates: the hosts boot
// it with the discovery ignition as user data (DiscoveryIgnition).
var rhcos = map[string]any{"url": "https://mirror.example.com/rhcos.qcow2", "diskFormat": "qcow2",
	"checksum": "https://mirror.example.com/rhcos.qcow2.sha256", "checksumType": "sha256"}

// clusterOpts describe a test cluster.
type clusterOpts struct {
	// replicas of the control plane (default 3).
	replicas int32
	// failureDomains are the Cluster's control-plane failure domains.
	failureDomains []string
	// filter is the watch-filter value (default: the shared manager's).
	filter string
	// noControlPlane leaves the control plane out; create it with
	// createControlPlane.
	noControlPlane bool
}

// testCluster is one CAPI cluster (the Cluster, the control plane and the
// infrastructure templates) in a namespace of its own.
type testCluster struct {
	t      testing.TB
	g      *WithT
	ctx    context.Context
	ns     string
	filter string
	opts   clusterOpts
}

// newCluster creates the cluster's objects as a user (and, for the
// Cluster's status and the control plane's owner reference, CAPI core)
// would.
func newCluster(t testing.TB, o clusterOpts) *testCluster {
	t.Helper()
	if o.replicas == 0 {
		o.replicas = 3
	}
	if o.filter == "" {
		o.filter = watchValue
	}
	ctx := context.Background()
	ns, err := env.NewNamespace(ctx, "oacp")
	if err != nil {
		t.Fatal(err)
	}
	tc := &testCluster{t: t, g: NewWithT(t), ctx: ctx, ns: ns.Name, filter: o.filter, opts: o}
	t.Cleanup(func() {
		if errs := reconcileErrorsIn(tc.ns); len(errs) > 0 && !t.Failed() {
			t.Errorf("reconcile errors in %s:\n  %v", tc.ns, errs)
		}
		if t.Failed() {
			tc.dumpBinding()
		}
	})
	tc.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "pull-secret", Namespace: tc.ns},
		Data: map[string][]byte{".dockerconfigjson": []byte(`{"auths":{}}`)}, Type: corev1.SecretTypeDockerConfigJson})
	tc.metal3Template(cpTemplate)
	tc.metal3Template(wTemplate)

	cluster := &clusterv1.Cluster{
		ObjectMeta: tc.meta(clusterName, nil),
		Spec: clusterv1.ClusterSpec{
			Paused: ptr.To(false),
			ControlPlaneRef: clusterv1.ContractVersionedObjectReference{APIGroup: controlplanev1.GroupVersion.Group,
				Kind: "OpenshiftAssistedControlPlane", Name: controlPlane},
			ClusterNetwork: clusterv1.ClusterNetwork{
				Pods:     clusterv1.NetworkRanges{CIDRBlocks: []string{"10.128.0.0/14"}},
				Services: clusterv1.NetworkRanges{CIDRBlocks: []string{"172.30.0.0/16"}},
			},
		},
	}
	tc.create(cluster)
	// CAPI core: the infrastructure provider's status, copied.
	tc.g.Expect(fakecapi.ProvisionCluster(ctx, k8s, cluster, o.failureDomains...)).To(Succeed())
	if !o.noControlPlane {
		tc.createControlPlane(nil)
	}
	return tc
}

// createControlPlane creates the control plane, owned by the Cluster as
// CAPI core makes it; mutate may change it first.
func (tc *testCluster) createControlPlane(mutate func(*controlplanev1.OpenshiftAssistedControlPlane)) {
	tc.t.Helper()
	cluster := tc.cluster()
	oacp := &controlplanev1.OpenshiftAssistedControlPlane{
		ObjectMeta: tc.meta(controlPlane, map[string]string{clusterv1.ClusterNameLabel: clusterName}),
		Spec: controlplanev1.OpenshiftAssistedControlPlaneSpec{
			DistributionVersion: version,
			Replicas:            ptr.To(tc.opts.replicas),
			MachineTemplate: controlplanev1.OpenshiftAssistedControlPlaneMachineTemplate{
				InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infraGV.Group, Kind: "Metal3MachineTemplate", Name: cpTemplate},
			},
			Config: controlplanev1.OpenshiftAssistedControlPlaneConfigSpec{
				BaseDomain:    "example.com",
				PullSecretRef: &corev1.LocalObjectReference{Name: "pull-secret"},
			},
			OpenshiftAssistedConfigSpec: bootstrapv1.OpenshiftAssistedConfigSpec{BootMode: bootstrapv1.BootModeDiscoveryIgnition},
		},
	}
	oacp.OwnerReferences = []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster",
		Name: cluster.Name, UID: cluster.UID}}
	if mutate != nil {
		mutate(oacp)
	}
	tc.create(oacp)
}

func (tc *testCluster) meta(name string, labels map[string]string) metav1.ObjectMeta {
	l := map[string]string{}
	for k, v := range labels {
		l[k] = v
	}
	l[clusterv1.WatchLabel] = tc.filter
	return metav1.ObjectMeta{Name: name, Namespace: tc.ns, Labels: l}
}

func (tc *testCluster) create(obj client.Object) {
	tc.t.Helper()
	tc.g.Expect(k8s.Create(tc.ctx, obj)).To(Succeed(), "creating %T %s", obj, obj.GetName())
}

func (tc *testCluster) key(name string) types.NamespacedName {
	return types.NamespacedName{Namespace: tc.ns, Name: name}
}

// aciKey and cdKey: both are named after the control plane.
func (tc *testCluster) aciKey() types.NamespacedName { return tc.key(controlPlane) }

func (tc *testCluster) metal3Template(name string) {
	tc.t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"image": rhcos}}},
	}}
	u.SetGroupVersionKind(infraGV.WithKind("Metal3MachineTemplate"))
	u.SetName(name)
	u.SetNamespace(tc.ns)
	u.SetLabels(tc.meta(name, nil).Labels)
	tc.create(u)
}

// worker creates a worker Machine with its OpenshiftAssistedConfig and
// Metal3Machine, as a MachineSet (CAPI core) makes them.
func (tc *testCluster) worker(name string) { tc.t.Helper(); tc.newWorker(name, false) }

// workerHeld creates a worker whose host does not boot until boot(name).
func (tc *testCluster) workerHeld(name string) { tc.t.Helper(); tc.newWorker(name, true) }

// boot lets the host of a workerHeld boot.
func (tc *testCluster) boot(name string) {
	tc.t.Helper()
	m := &clusterv1.Machine{}
	tc.g.Expect(k8s.Get(tc.ctx, tc.key(name), m)).To(Succeed())
	base := m.DeepCopy()
	delete(m.Annotations, fakecapi.HoldBootAnnotation)
	tc.g.Expect(k8s.Patch(tc.ctx, m, client.MergeFrom(base))).To(Succeed())
}

func (tc *testCluster) newWorker(name string, hold bool) {
	labels := map[string]string{clusterv1.ClusterNameLabel: clusterName}
	m := &clusterv1.Machine{
		ObjectMeta: tc.meta(name, labels),
		Spec: clusterv1.MachineSpec{
			ClusterName: clusterName,
			Bootstrap: clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: bootstrapv1.GroupVersion.Group, Kind: "OpenshiftAssistedConfig", Name: name}},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infraGV.Group, Kind: "Metal3Machine", Name: name},
		},
	}
	if hold {
		m.Annotations = map[string]string{fakecapi.HoldBootAnnotation: ""}
	}
	tc.create(m)
	owner := fakecapi.MachineOwner(m)
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"image": rhcos}}}
	u.SetGroupVersionKind(infraGV.WithKind("Metal3Machine"))
	u.SetName(name)
	u.SetNamespace(tc.ns)
	u.SetLabels(tc.meta(name, labels).Labels)
	u.SetAnnotations(map[string]string{clusterv1.TemplateClonedFromNameAnnotation: wTemplate,
		clusterv1.TemplateClonedFromGroupKindAnnotation: "Metal3MachineTemplate.infrastructure.cluster.x-k8s.io"})
	u.SetOwnerReferences([]metav1.OwnerReference{owner})
	tc.create(u)
	oac := &bootstrapv1.OpenshiftAssistedConfig{ObjectMeta: tc.meta(name, labels),
		Spec: bootstrapv1.OpenshiftAssistedConfigSpec{BootMode: bootstrapv1.BootModeDiscoveryIgnition}}
	oac.OwnerReferences = []metav1.OwnerReference{owner}
	tc.create(oac)
}

// machineTemplate is the Machine template of a MachineDeployment or
// MachineSet.
func (tc *testCluster) machineTemplate(pool string) clusterv1.MachineTemplateSpec {
	return clusterv1.MachineTemplateSpec{
		ObjectMeta: clusterv1.ObjectMeta{Labels: map[string]string{"pool": pool}},
		Spec: clusterv1.MachineSpec{
			ClusterName: clusterName,
			Bootstrap: clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: bootstrapv1.GroupVersion.Group, Kind: "OpenshiftAssistedConfigTemplate", Name: "workers"}},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infraGV.Group, Kind: "Metal3MachineTemplate", Name: wTemplate},
		},
	}
}

// machineDeployment creates a MachineDeployment of replicas workers (its
// Machines are made by the test: CAPI core does not run).
func (tc *testCluster) machineDeployment(name string, replicas int32) *clusterv1.MachineDeployment {
	tc.t.Helper()
	md := &clusterv1.MachineDeployment{
		ObjectMeta: tc.meta(name, map[string]string{clusterv1.ClusterNameLabel: clusterName}),
		Spec: clusterv1.MachineDeploymentSpec{
			ClusterName: clusterName, Replicas: ptr.To(replicas),
			Selector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": name}},
			Template: tc.machineTemplate(name),
		},
	}
	tc.create(md)
	return md
}

// machineSet creates a MachineSet of replicas workers, owned by md when
// given (as CAPI core makes a MachineDeployment's MachineSets).
func (tc *testCluster) machineSet(name string, replicas int32, md *clusterv1.MachineDeployment) {
	tc.t.Helper()
	pool := name
	if md != nil {
		pool = md.Name
	}
	ms := &clusterv1.MachineSet{
		ObjectMeta: tc.meta(name, map[string]string{clusterv1.ClusterNameLabel: clusterName}),
		Spec: clusterv1.MachineSetSpec{
			ClusterName: clusterName, Replicas: ptr.To(replicas),
			Selector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": pool}},
			Template: tc.machineTemplate(pool),
		},
	}
	if md != nil {
		ms.OwnerReferences = []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "MachineDeployment",
			Name: md.Name, UID: md.UID, Controller: ptr.To(true)}}
	}
	tc.create(ms)
}

// ---- reading ----

func (tc *testCluster) cluster() *clusterv1.Cluster {
	c := &clusterv1.Cluster{}
	tc.g.Expect(k8s.Get(tc.ctx, tc.key(clusterName), c)).To(Succeed())
	return c
}

// oacp reads the control plane; nil when it does not exist.
func (tc *testCluster) oacp() *controlplanev1.OpenshiftAssistedControlPlane {
	o := &controlplanev1.OpenshiftAssistedControlPlane{}
	if err := k8s.Get(tc.ctx, tc.key(controlPlane), o); err != nil {
		return nil
	}
	return o
}

func (tc *testCluster) aci() *hiveextv1beta1.AgentClusterInstall {
	aci := &hiveextv1beta1.AgentClusterInstall{}
	if err := k8s.Get(tc.ctx, tc.aciKey(), aci); err != nil {
		return nil
	}
	return aci
}

// aciState is the AgentClusterInstall's state ("" when there is none).
func (tc *testCluster) aciState() string {
	if aci := tc.aci(); aci != nil {
		return aci.Status.DebugInfo.State
	}
	return ""
}

// aciWants is the AgentClusterInstall's control-plane and worker agents
// (-1, -1 when there is none).
func (tc *testCluster) aciWants() [2]int {
	if aci := tc.aci(); aci != nil {
		return [2]int{aci.Spec.ProvisionRequirements.ControlPlaneAgents, aci.Spec.ProvisionRequirements.WorkerAgents}
	}
	return [2]int{-1, -1}
}

// waitCondition waits for a condition of the control plane and returns
// the control plane.
func (tc *testCluster) waitCondition(condition string, status metav1.ConditionStatus, reason string) *controlplanev1.OpenshiftAssistedControlPlane {
	tc.t.Helper()
	var out *controlplanev1.OpenshiftAssistedControlPlane
	tc.g.Eventually(func(g Gomega) {
		o := tc.oacp()
		g.Expect(o).NotTo(BeNil())
		c := capiconditions.Get(o, condition)
		g.Expect(c).NotTo(BeNil(), "conditions: %v", o.Status.Conditions)
		g.Expect(c.Status).To(Equal(status), "%s %s: %s", condition, c.Reason, c.Message)
		g.Expect(c.Reason).To(Equal(reason), "%s: %s", condition, c.Message)
		out = o
	}, wait, tick).Should(Succeed())
	return out
}

// waitAvailable waits for the control plane to be Available and Ready (the
// summary, which needs every Machine ready), and returns it.
func (tc *testCluster) waitAvailable() *controlplanev1.OpenshiftAssistedControlPlane {
	tc.t.Helper()
	tc.waitCondition(controlplanev1.AvailableCondition, metav1.ConditionTrue, controlplanev1.AvailableReason)
	// CAPI's summary: all True, some with messages, is InfoReported.
	return tc.waitCondition(controlplanev1.ReadyCondition, metav1.ConditionTrue, "InfoReported")
}

// machines are the control plane's Machines, by name.
func (tc *testCluster) machines() []clusterv1.Machine {
	list := &clusterv1.MachineList{}
	tc.g.Expect(k8s.List(tc.ctx, list, client.InNamespace(tc.ns),
		client.MatchingLabels{clusterv1.MachineControlPlaneNameLabel: controlPlane})).To(Succeed())
	slices.SortFunc(list.Items, func(a, b clusterv1.Machine) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		if a.Name < b.Name {
			return -1
		}
		return 1
	})
	return list.Items
}

func (tc *testCluster) agents() []aiv1beta1.Agent {
	list := &aiv1beta1.AgentList{}
	tc.g.Expect(k8s.List(tc.ctx, list, client.InNamespace(tc.ns))).To(Succeed())
	return list.Items
}

// dumpBinding logs, for a failed test, what binds Agents to Machines: each
// Agent's config label, approval and state; each config's Agent and
// conditions; each Metal3Machine's host annotation and owner.
func (tc *testCluster) dumpBinding() {
	agents := &aiv1beta1.AgentList{}
	configs := &bootstrapv1.OpenshiftAssistedConfigList{}
	m3ms := &unstructured.UnstructuredList{}
	m3ms.SetGroupVersionKind(infraGV.WithKind("Metal3MachineList"))
	for _, l := range []client.ObjectList{agents, configs, m3ms} {
		if err := k8s.List(tc.ctx, l, client.InNamespace(tc.ns)); err != nil {
			tc.t.Logf("dump: listing %T: %v", l, err)
		}
	}
	for _, a := range agents.Items {
		tc.t.Logf("dump: Agent %s: config %q, approved %v, state %q, MACs %v", a.Name, a.Labels[bootstrapv1.ConfigLabel],
			a.Spec.Approved, a.Status.DebugInfo.State, a.Status.Inventory.Interfaces)
	}
	for _, c := range configs.Items {
		tc.t.Logf("dump: config %s: agentRef %v, infraEnvRef %v, conditions %v", c.Name, c.Status.AgentRef, c.Status.InfraEnvRef, c.Status.Conditions)
	}
	for _, m := range m3ms.Items {
		tc.t.Logf("dump: Metal3Machine %s: annotations %v, owners %v", m.GetName(), m.GetAnnotations(), m.GetOwnerReferences())
	}
}

// agentOf is the Agent of the Machine (config) name; nil if none.
func (tc *testCluster) agentOf(name string) *aiv1beta1.Agent {
	for _, a := range tc.agents() {
		if a.Labels[bootstrapv1.ConfigLabel] == name && a.Spec.Approved {
			return &a
		}
	}
	return nil
}

// waitHostsSettled waits until every approved Agent is installed or
// added, and every Machine has its Node: nothing moves any more.
func (tc *testCluster) waitHostsSettled(n int) {
	tc.t.Helper()
	tc.g.Eventually(func(g Gomega) {
		approved := 0
		for _, a := range tc.agents() {
			if !a.Spec.Approved {
				continue
			}
			approved++
			g.Expect(a.Status.DebugInfo.State).To(BeElementOf("installed", "added-to-existing-cluster"), a.Name)
		}
		g.Expect(approved).To(Equal(n))
		list := &clusterv1.MachineList{}
		g.Expect(k8s.List(tc.ctx, list, client.InNamespace(tc.ns))).To(Succeed())
		g.Expect(list.Items).To(HaveLen(n))
		for _, m := range list.Items {
			g.Expect(m.Status.NodeRef.Name).NotTo(BeEmpty(), m.Name)
		}
	}, wait, tick).Should(Succeed())
}

// imageSets are the ClusterImageSets that belong to this namespace's
// control plane.
func (tc *testCluster) imageSets() []hivev1.ClusterImageSet {
	list := &hivev1.ClusterImageSetList{}
	tc.g.Expect(k8s.List(tc.ctx, list)).To(Succeed())
	var out []hivev1.ClusterImageSet
	for _, is := range list.Items {
		if is.Annotations[controlplanev1.OwnerAnnotation] == tc.ns+"/"+controlPlane {
			out = append(out, is)
		}
	}
	return out
}

// list returns the names of the objects of a list type in the namespace.
func (tc *testCluster) list(l client.ObjectList) []string {
	tc.g.Expect(k8s.List(tc.ctx, l, client.InNamespace(tc.ns))).To(Succeed())
	var out []string
	items, err := metaItems(l)
	tc.g.Expect(err).NotTo(HaveOccurred())
	for _, o := range items {
		out = append(out, o.GetName())
	}
	slices.Sort(out)
	return out
}

func (tc *testCluster) metal3Machines() []string {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(infraGV.WithKind("Metal3MachineList"))
	return tc.list(l)
}

func metaItems(l client.ObjectList) ([]metav1.Object, error) {
	objs, err := apimeta.ExtractList(l)
	if err != nil {
		return nil, err
	}
	out := make([]metav1.Object, 0, len(objs))
	for _, o := range objs {
		a, err := apimeta.Accessor(o)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// installed makes a cluster with a MachineDeployment of workers workers
// (named w-0, w-1, ...) and waits for it to be installed, Available, and
// for every host to be settled.
func installed(t testing.TB, o clusterOpts, workers int) *testCluster {
	t.Helper()
	tc := newCluster(t, o)
	tc.machineDeployment("md", int32(workers))
	for i := range workers {
		tc.worker(workerName(i))
	}
	tc.waitAvailable()
	tc.waitHostsSettled(int(tc.opts.replicas) + workers)
	return tc
}

func workerName(i int) string { return "w-" + strconv.Itoa(i) }
