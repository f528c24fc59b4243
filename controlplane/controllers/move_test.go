package controllers_test

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	capiconditions "sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/ocp-capi/ocp-capi/api/bootstrap/v1alpha2"
	controlplanev1 "github.com/ocp-capi/ocp-capi/api/controlplane/v1alpha3"
	aiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/agentinstall/v1beta1"
	configv1 "github.com/ocp-capi/ocp-capi/internal/consumed/config/v1"
	hivev1 "github.com/ocp-capi/ocp-capi/internal/consumed/hive/v1"
	"github.com/ocp-capi/ocp-capi/test/fakecapi"
)

// TestImportAfterMove installs a cluster, then does what clusterctl move
// does (the cluster paused; its Cluster API objects and the Secrets they
// own copied without status, owner references rebuilt; the source's
// objects deleted with their finalizers removed) into another namespace,
// which plays the target management cluster: assisted-service's objects
// stay behind. On the target the control plane imports the installed
// cluster (a ClusterDeployment with installed: true and the clusterMetadata
// read from the workload cluster), the simulator takes it as a day-2
// cluster, and the status is rebuilt without a new Machine, InfraEnv or
// Agent. On the source, the control plane's ClusterImageSet, which no
// garbage collector can collect, goes with it.
func TestImportAfterMove(t *testing.T) {
	kubeconfig, workload := startWorkloadCluster(t)
	src := newCluster(t, clusterOpts{replicas: 1})
	g := src.g
	g.Expect(sim.SetWorkload(src.ctx, src.key(controlPlane), kubeconfig)).To(Succeed())
	src.waitAvailable()
	src.waitHostsSettled(1)
	srcCD := &hivev1.ClusterDeployment{}
	g.Expect(k8s.Get(src.ctx, src.key(controlPlane), srcCD)).To(Succeed())
	g.Expect(srcCD.Spec.ClusterMetadata).NotTo(BeNil())
	srcImageSets := src.imageSets()
	g.Expect(srcImageSets).To(HaveLen(1))
	machines := src.machines()
	g.Expect(machines).To(HaveLen(1))
	m := machines[0].Name

	// clusterctl move: pause, copy owners first, unpause the target.
	cluster := src.cluster()
	base := cluster.DeepCopy()
	cluster.Spec.Paused = ptr.To(true)
	g.Expect(k8s.Patch(src.ctx, cluster, client.MergeFrom(base))).To(Succeed())
	src.waitCondition(clusterv1.PausedCondition, metav1.ConditionTrue, clusterv1.PausedReason)

	ns, err := env.NewNamespace(src.ctx, "oacp-moved")
	g.Expect(err).NotTo(HaveOccurred())
	dst := &testCluster{t: t, g: g, ctx: src.ctx, ns: ns.Name, filter: src.filter, opts: src.opts}
	t.Cleanup(func() {
		if errs := reconcileErrorsIn(dst.ns); len(errs) > 0 && !t.Failed() {
			t.Errorf("reconcile errors in %s:\n  %v", dst.ns, errs)
		}
	})
	gv := func(gv schema.GroupVersion, kind string) schema.GroupVersionKind { return gv.WithKind(kind) }
	core := schema.GroupVersion{Version: "v1"}
	uids := map[types.UID]types.UID{}
	for _, o := range []struct {
		gvk  schema.GroupVersionKind
		name string
	}{
		{gv(clusterv1.GroupVersion, "Cluster"), clusterName},
		{gv(infraGV, "Metal3MachineTemplate"), cpTemplate},
		{gv(infraGV, "Metal3MachineTemplate"), wTemplate},
		{gv(controlplanev1.GroupVersion, "OpenshiftAssistedControlPlane"), controlPlane},
		{gv(clusterv1.GroupVersion, "Machine"), m},
		{gv(bootstrapv1.GroupVersion, "OpenshiftAssistedConfig"), m},
		{gv(infraGV, "Metal3Machine"), m},
		{gv(core, "Secret"), "pull-secret"},
		{gv(core, "Secret"), clusterName + "-kubeconfig"},
		{gv(core, "Secret"), m}, // the bootstrap data
	} {
		moveObject(t, src, dst.ns, o.gvk, o.name, uids)
	}

	// The workload cluster answers, but its Infrastructure is missing: the
	// import waits and says why.
	infra := &configv1.Infrastructure{}
	g.Expect(workload.Get(src.ctx, types.NamespacedName{Name: "cluster"}, infra)).To(Succeed())
	infraID, infraStatus := infra.Status.InfrastructureName, infra.Status
	g.Expect(infraID).To(Equal(srcCD.Spec.ClusterMetadata.InfraID), "the simulator's installation left the infrastructure ID")
	g.Expect(workload.Delete(src.ctx, infra)).To(Succeed())

	// CAPI core on the target: unpaused, the infrastructure provisioned
	// again (the infrastructure provider rebuilds its status).
	moved := dst.cluster()
	base = moved.DeepCopy()
	moved.Spec.Paused = ptr.To(false)
	g.Expect(k8s.Patch(src.ctx, moved, client.MergeFrom(base))).To(Succeed())
	g.Expect(fakecapi.ProvisionCluster(src.ctx, k8s, moved)).To(Succeed())

	// The source's objects go as clusterctl deletes them: finalizers
	// removed first, so no controller of the source acts on the deletion.
	for _, obj := range []client.Object{&controlplanev1.OpenshiftAssistedControlPlane{}, &clusterv1.Cluster{}} {
		name := controlPlane
		if _, ok := obj.(*clusterv1.Cluster); ok {
			name = clusterName
		}
		g.Expect(k8s.Get(src.ctx, src.key(name), obj)).To(Succeed())
		base, _ := obj.DeepCopyObject().(client.Object)
		obj.SetFinalizers(nil)
		g.Expect(k8s.Patch(src.ctx, obj, client.MergeFrom(base))).To(Succeed())
		g.Expect(k8s.Delete(src.ctx, obj)).To(Succeed())
	}
	g.Eventually(func() bool {
		err := k8s.Get(src.ctx, types.NamespacedName{Name: srcImageSets[0].Name}, &hivev1.ClusterImageSet{})
		return apierrors.IsNotFound(err)
	}, wait, tick).Should(BeTrue(), "the source's ClusterImageSet %s is deleted with its control plane", srcImageSets[0].Name)

	o := dst.waitCondition(controlplanev1.AvailableCondition, metav1.ConditionFalse, controlplanev1.ImportingClusterReason)
	g.Expect(capiconditions.Get(o, controlplanev1.AvailableCondition).Message).To(ContainSubstring("Infrastructure cluster"))
	g.Expect(k8s.Get(src.ctx, dst.key(controlPlane), &hivev1.ClusterDeployment{})).
		To(Satisfy(apierrors.IsNotFound), "no ClusterDeployment before the import can name the cluster")

	// The Infrastructure is back; a change of the control plane brings the
	// controller back before its retry.
	infra = &configv1.Infrastructure{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}}
	g.Expect(workload.Create(src.ctx, infra)).To(Succeed())
	infra.Status = infraStatus
	g.Expect(workload.Status().Update(src.ctx, infra)).To(Succeed())
	o = dst.oacp()
	base2 := o.DeepCopy()
	o.Annotations = map[string]string{"test/nudge": "1"}
	g.Expect(k8s.Patch(src.ctx, o, client.MergeFrom(base2))).To(Succeed())

	// Imported: installed, with the cluster's own IDs and an admin
	// kubeconfig made from the moved <cluster>-kubeconfig.
	cd := &hivev1.ClusterDeployment{}
	g.Eventually(func() error { return k8s.Get(src.ctx, dst.key(controlPlane), cd) }, wait, tick).Should(Succeed())
	g.Expect(cd.Spec.Installed).To(BeTrue())
	g.Expect(cd.Spec.ClusterMetadata).NotTo(BeNil())
	g.Expect(cd.Spec.ClusterMetadata.ClusterID).To(Equal(srcCD.Spec.ClusterMetadata.ClusterID), "the ClusterVersion's cluster ID")
	g.Expect(cd.Spec.ClusterMetadata.InfraID).To(Equal(infraID))
	admin := &corev1.Secret{}
	g.Expect(k8s.Get(src.ctx, dst.key(cd.Spec.ClusterMetadata.AdminKubeconfigSecretRef.Name), admin)).To(Succeed())
	g.Expect(admin.Data["kubeconfig"]).To(Equal(kubeconfig))
	o = dst.oacp()
	g.Expect(metav1.IsControlledBy(cd, o)).To(BeTrue())
	g.Expect(metav1.IsControlledBy(admin, o)).To(BeTrue())
	g.Eventually(dst.aciState, wait, tick).Should(Equal("adding-hosts"), "the simulator takes an imported cluster as installed")

	// CAPI core finds the Node again (the Machine's status went with the
	// move) and reports the Machine Ready.
	g.Eventually(func() error {
		mm := &clusterv1.Machine{}
		if err := k8s.Get(src.ctx, dst.key(m), mm); err != nil {
			return err
		}
		base := mm.DeepCopy()
		mm.Status.NodeRef = clusterv1.MachineNodeReference{Name: m}
		for _, c := range []string{clusterv1.MachineReadyCondition, clusterv1.MachineAvailableCondition} {
			capiconditions.Set(mm, metav1.Condition{Type: c, Status: metav1.ConditionTrue, Reason: "Simulated"})
		}
		return k8s.Status().Patch(src.ctx, mm, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
	}, wait, tick).Should(Succeed())

	dst.waitAvailable()
	// CAPI's patch helper writes the conditions, then the rest of the status:
	// what a pass set with Available lands one write after it.
	g.Eventually(func() *bool { return dst.oacp().Status.Initialization.ControlPlaneInitialized }, wait, tick).Should(HaveValue(BeTrue()))
	dst.waitCondition(controlplanev1.KubeconfigAvailableCondition, metav1.ConditionTrue, controlplanev1.KubeconfigAvailableReason)
	g.Eventually(func(g Gomega) {
		o := dst.oacp()
		g.Expect(o.Status.ReadyReplicas).To(HaveValue(BeEquivalentTo(1)))
		g.Expect(o.Status.DistributionVersion).To(Equal(version))
	}, wait, tick).Should(Succeed())

	// The bootstrap config's status is rebuilt from the Machine, with no
	// InfraEnv made and no Agent: nothing is installed again.
	g.Eventually(func(g Gomega) {
		oac := &bootstrapv1.OpenshiftAssistedConfig{}
		g.Expect(k8s.Get(src.ctx, dst.key(m), oac)).To(Succeed())
		g.Expect(oac.Status.DataSecretName).To(Equal(m))
		g.Expect(oac.Status.Initialization.DataSecretCreated).To(HaveValue(BeTrue()))
		c := capiconditions.Get(oac, bootstrapv1.AgentApprovedCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(bootstrapv1.NodeJoinedReason), c.Message)
		g.Expect(capiconditions.IsTrue(oac, bootstrapv1.DataSecretAvailableCondition)).To(BeTrue())
	}, wait, tick).Should(Succeed())
	g.Expect(dst.machines()).To(HaveLen(1), "no control-plane Machine is made")
	g.Expect(dst.list(&aiv1beta1.InfraEnvList{})).To(BeEmpty())
	g.Expect(dst.list(&aiv1beta1.AgentList{})).To(BeEmpty())
	g.Expect(dst.imageSets()).To(HaveLen(1))

	events := &eventsv1.EventList{}
	g.Eventually(func() []string {
		g.Expect(k8s.List(src.ctx, events, client.InNamespace(dst.ns))).To(Succeed())
		var reasons []string
		for _, e := range events.Items {
			reasons = append(reasons, e.Reason)
		}
		return reasons
	}, wait, tick).Should(ContainElement("ClusterImported"))
}

// moveObject copies one object of from's namespace into namespace to as
// clusterctl move creates it: no status, no UID or resource version, the
// owner references pointing at the copies of the owners (moved before it;
// uids maps the old UIDs to the new ones).
func moveObject(t *testing.T, from *testCluster, to string, gvk schema.GroupVersionKind, name string, uids map[types.UID]types.UID) {
	t.Helper()
	g := from.g
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	g.Expect(k8s.Get(from.ctx, from.key(name), obj)).To(Succeed(), "%s %s", gvk.Kind, name)
	old := obj.GetUID()
	delete(obj.Object, "status")
	obj.SetNamespace(to)
	obj.SetUID("")
	obj.SetResourceVersion("")
	obj.SetGeneration(0)
	obj.SetCreationTimestamp(metav1.Time{})
	obj.SetManagedFields(nil)
	var refs []metav1.OwnerReference
	for _, r := range obj.GetOwnerReferences() {
		if uid, ok := uids[r.UID]; ok {
			r.UID = uid
			refs = append(refs, r)
		}
	}
	obj.SetOwnerReferences(refs)
	g.Expect(k8s.Create(from.ctx, obj)).To(Succeed(), "moving %s %s", gvk.Kind, name)
	uids[old] = obj.GetUID()
}
