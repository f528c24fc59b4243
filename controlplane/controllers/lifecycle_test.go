package controllers_test

import (
	"slices"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	capiconditions "sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "github.com/ocp-capi/ocp-capi/api/controlplane/v1alpha3"
	aiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/agentinstall/v1beta1"
	hivev1 "github.com/ocp-capi/ocp-capi/internal/consumed/hive/v1"
	hiveextv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/hiveext/v1beta1"
	"github.com/ocp-capi/ocp-capi/test/assisted"
	"github.com/ocp-capi/ocp-capi/test/fakecapi"
)

// setReplicas changes the control plane's spec.replicas.
func (tc *testCluster) setReplicas(n int32) {
	tc.t.Helper()
	o := tc.oacp()
	base := o.DeepCopy()
	o.Spec.Replicas = ptr.To(n)
	tc.g.Expect(k8s.Patch(tc.ctx, o, client.MergeFrom(base))).To(Succeed())
}

// setFailureDomains replaces the Cluster's control-plane failure domains,
// as CAPI core copies them from the infrastructure cluster.
func (tc *testCluster) setFailureDomains(fds ...string) {
	tc.t.Helper()
	tc.g.Expect(fakecapi.ProvisionCluster(tc.ctx, k8s, tc.cluster(), fds...)).To(Succeed())
}

// TestControlPlaneScaleUpAndDown grows an installed control plane by one
// Machine (a day-2 master, in the least used failure domain) and shrinks
// it again: the Machine deleted is the oldest of the most populated
// failure domain, not the oldest overall.
func TestControlPlaneScaleUpAndDown(t *testing.T) {
	tc := installed(t, clusterOpts{failureDomains: []string{"fd-a", "fd-b", "fd-c"}}, 0)
	g := tc.g
	byFD := func() map[string][]string {
		out := map[string][]string{}
		for _, m := range tc.machines() {
			if m.DeletionTimestamp.IsZero() {
				out[m.Spec.FailureDomain] = append(out[m.Spec.FailureDomain], m.Name)
			}
		}
		return out
	}
	day1 := byFD()
	g.Expect(day1).To(HaveLen(3))
	// fd-a is retired: the next Machine goes to fd-b (fd-b and fd-c tie,
	// fd-b sorts first), which then has the most Machines.
	tc.setFailureDomains("fd-b", "fd-c")
	tc.setReplicas(4)
	g.Eventually(tc.aciWants, wait, tick).Should(Equal([2]int{4, 0}))
	tc.waitHostsSettled(4)
	g.Expect(byFD()["fd-b"]).To(HaveLen(2))
	var added string
	for _, n := range byFD()["fd-b"] {
		if n != day1["fd-b"][0] {
			added = n
		}
	}
	a := tc.agentOf(added)
	g.Expect(a).NotTo(BeNil())
	g.Expect(a.Spec.Role).To(Equal(aiv1beta1.HostRoleMaster))
	g.Expect(a.Status.DebugInfo.State).To(Equal("added-to-existing-cluster"), "a day-2 master")
	tc.waitCondition(controlplanev1.MachinesCreatedCondition, metav1.ConditionTrue, controlplanev1.MachinesCreatedReason)

	// The oldest Machine of fd-b, by creation time then name, goes (the
	// day-1 one, unless both were made within the same second), not
	// fd-a's, which is the oldest overall.
	var fdb []clusterv1.Machine
	for _, m := range tc.machines() { // oldest first
		if m.Spec.FailureDomain == "fd-b" {
			fdb = append(fdb, m)
		}
	}
	g.Expect(fdb).To(HaveLen(2))
	oldest, kept := fdb[0].Name, fdb[1].Name
	tc.setReplicas(3)
	g.Eventually(func(g Gomega) {
		var names []string
		for _, m := range tc.machines() {
			names = append(names, m.Name)
		}
		g.Expect(names).To(ConsistOf(day1["fd-a"][0], day1["fd-c"][0], kept))
	}, wait, tick).Should(Succeed())
	// CAPI core deleted the Machine's config and Metal3Machine with it.
	g.Eventually(func() []string { return tc.metal3Machines() }, wait, tick).ShouldNot(ContainElement(oldest))
	g.Eventually(tc.aciWants, wait, tick).Should(Equal([2]int{3, 0}))
	tc.waitCondition(controlplanev1.MachinesCreatedCondition, metav1.ConditionTrue, controlplanev1.MachinesCreatedReason)
	tc.waitAvailable()
	g.Eventually(func() *int32 { return tc.oacp().Status.Replicas }, wait, tick).Should(HaveValue(BeEquivalentTo(3)))
}

// TestInstallFailure fails the installation midway: Available and Ready say
// so with assisted-service's message; once assisted-service resets the
// installation, it goes on to Available.
func TestInstallFailure(t *testing.T) {
	tc := newCluster(t, clusterOpts{replicas: 1})
	g := tc.g
	sim.FailAt(tc.aciKey(), hiveextv1beta1.StateInstalling, "host cp-0: disk /dev/sda is too small")
	oacp := tc.waitCondition(controlplanev1.AvailableCondition, metav1.ConditionFalse, controlplanev1.InstallationFailedReason)
	c := capiconditions.Get(oacp, controlplanev1.AvailableCondition)
	g.Expect(c.Message).To(ContainSubstring("disk /dev/sda is too small"))
	g.Expect(c.Message).To(ContainSubstring(`"error"`))
	ready := capiconditions.Get(oacp, controlplanev1.ReadyCondition)
	g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
	g.Expect(ready.Message).To(ContainSubstring("disk /dev/sda is too small"))
	g.Expect(oacp.Status.Initialization.ControlPlaneInitialized).To(BeNil())
	tc.waitCondition(controlplanev1.KubeconfigAvailableCondition, metav1.ConditionFalse, controlplanev1.KubeconfigUnavailableReason)

	sim.Release(tc.aciKey())
	tc.waitAvailable()
}

// TestKubeconfigRefresh rotates the admin kubeconfig that assisted-service
// publishes: <cluster>-kubeconfig follows it.
func TestKubeconfigRefresh(t *testing.T) {
	tc := installed(t, clusterOpts{replicas: 1}, 0)
	g := tc.g
	kubeconfig := func() []byte {
		s := &corev1.Secret{}
		g.Expect(k8s.Get(tc.ctx, tc.key(clusterName+"-kubeconfig"), s)).To(Succeed())
		return s.Data["value"]
	}
	before := kubeconfig()
	rotated := []byte("apiVersion: v1\nkind: Config\nclusters:\n- name: c1\n  cluster:\n    server: https://api.c1.example.com:6443\n" +
		"contexts:\n- name: admin\n  context:\n    cluster: c1\n    user: admin\ncurrent-context: admin\n" +
		"users:\n- name: admin\n  user:\n    token: rotated\n")
	g.Expect(before).NotTo(Equal(rotated))
	g.Expect(sim.SetKubeconfig(tc.ctx, tc.key(controlPlane), rotated)).To(Succeed())
	g.Eventually(kubeconfig, wait, tick).Should(Equal(rotated))
	tc.waitCondition(controlplanev1.KubeconfigAvailableCondition, metav1.ConditionTrue, controlplanev1.KubeconfigAvailableReason)
}

// TestPause pauses the Cluster: the control plane says Paused and changes
// nothing, even for a new spec (the barrier is observedGeneration, which a
// paused reconcile still records); unpaused, it acts on it.
func TestPause(t *testing.T) {
	tc := installed(t, clusterOpts{}, 0)
	g := tc.g
	c := tc.cluster()
	base := c.DeepCopy()
	c.Spec.Paused = ptr.To(true)
	g.Expect(k8s.Patch(tc.ctx, c, client.MergeFrom(base))).To(Succeed())
	tc.waitCondition(clusterv1.PausedCondition, metav1.ConditionTrue, clusterv1.PausedReason)

	aciBefore := tc.aci()
	tc.setReplicas(4)
	gen := tc.oacp().Generation
	g.Eventually(func() int64 { return tc.oacp().Status.ObservedGeneration }, wait, tick).Should(Equal(gen))
	g.Expect(tc.machines()).To(HaveLen(3), "no Machine while paused")
	g.Expect(tc.aci().ResourceVersion).To(Equal(aciBefore.ResourceVersion), "the AgentClusterInstall is not touched while paused")
	tc.waitCondition(clusterv1.PausedCondition, metav1.ConditionTrue, clusterv1.PausedReason)

	c = tc.cluster()
	base = c.DeepCopy()
	c.Spec.Paused = ptr.To(false)
	g.Expect(k8s.Patch(tc.ctx, c, client.MergeFrom(base))).To(Succeed())
	tc.waitCondition(clusterv1.PausedCondition, metav1.ConditionFalse, clusterv1.NotPausedReason)
	g.Eventually(tc.aciWants, wait, tick).Should(Equal([2]int{4, 0}))
	tc.waitHostsSettled(4)
	tc.waitAvailable()

	// The paused annotation on the control plane pauses it too.
	o := tc.oacp()
	obase := o.DeepCopy()
	o.Annotations = map[string]string{clusterv1.PausedAnnotation: ""}
	g.Expect(k8s.Patch(tc.ctx, o, client.MergeFrom(obase))).To(Succeed())
	tc.waitCondition(clusterv1.PausedCondition, metav1.ConditionTrue, clusterv1.PausedReason)
}

// TestDeletion deletes the control plane of an installed cluster with
// workers: it waits for the workers (CAPI core deletes them first), then
// deletes its Machines, then the AgentClusterInstall while the
// ClusterDeployment is there to let assisted-service release it, then the
// ClusterDeployment, then the ClusterImageSet, and finally goes. No
// finalizer is left behind.
func TestDeletion(t *testing.T) {
	tc := installed(t, clusterOpts{}, 1)
	g := tc.g
	cd := &hivev1.ClusterDeployment{}
	g.Expect(k8s.Get(tc.ctx, tc.key(controlPlane), cd)).To(Succeed())
	g.Expect(cd.Finalizers).To(ContainElement(assisted.ClusterDeploymentFinalizer), "the simulator plays assisted-service's finalizers")
	g.Expect(tc.aci().Finalizers).To(ContainElement(assisted.AgentClusterInstallFinalizer))
	imageSet := tc.imageSets()[0].Name

	g.Expect(k8s.Delete(tc.ctx, tc.oacp())).To(Succeed())
	oacp := tc.waitCondition(controlplanev1.AvailableCondition, metav1.ConditionFalse, controlplanev1.DeletingReason)
	g.Expect(capiconditions.Get(oacp, controlplanev1.AvailableCondition).Message).To(ContainSubstring("worker Machines"))
	g.Expect(tc.machines()).To(HaveLen(3), "the control plane outlives the workers")
	g.Expect(tc.aci()).NotTo(BeNil())

	// CAPI core deletes the workers (MachineDeployment first).
	g.Expect(k8s.Delete(tc.ctx, &clusterv1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: tc.ns, Name: "md"}})).To(Succeed())
	g.Expect(k8s.Delete(tc.ctx, &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: tc.ns, Name: workerName(0)}})).To(Succeed())

	g.Eventually(func() bool { return tc.oacp() == nil }, wait, tick).Should(BeTrue(), "the control plane is gone")
	// Everything with a finalizer is gone; what is left is collected by
	// the garbage collector (envtest runs none) through its owner.
	g.Expect(tc.list(&clusterv1.MachineList{})).To(BeEmpty())
	g.Expect(tc.metal3Machines()).To(BeEmpty())
	g.Expect(tc.list(&aiv1beta1.InfraEnvList{})).To(BeEmpty())
	g.Expect(tc.list(&aiv1beta1.AgentList{})).To(BeEmpty())
	g.Expect(tc.list(&hiveextv1beta1.AgentClusterInstallList{})).To(BeEmpty())
	g.Expect(tc.list(&hivev1.ClusterDeploymentList{})).To(BeEmpty())
	g.Expect(k8s.Get(tc.ctx, client.ObjectKey{Name: imageSet}, &hivev1.ClusterImageSet{})).NotTo(Succeed())
	g.Expect(tc.imageSets()).To(BeEmpty())
	kc := &corev1.Secret{}
	g.Expect(k8s.Get(tc.ctx, tc.key(clusterName+"-kubeconfig"), kc)).To(Succeed())
	g.Expect(kc.OwnerReferences).To(ContainElement(HaveField("UID", oacp.UID)), "collected with the control plane")

	// assisted-service released the AgentClusterInstall before the
	// ClusterDeployment: the reverse strands the former's finalizer.
	order := slices.DeleteFunc(sim.Deprovisioned(), func(s string) bool { return !strings.Contains(s, " "+tc.ns+"/") })
	g.Expect(order).To(Equal([]string{"AgentClusterInstall " + tc.ns + "/" + controlPlane, "ClusterDeployment " + tc.ns + "/" + controlPlane}))
}

// TestImageSetNamesDoNotCollide makes two clusters of the same names in
// two namespaces: each has its own cluster-scoped ClusterImageSet (the
// reference names it after the ClusterDeployment, so they would share one).
func TestImageSetNamesDoNotCollide(t *testing.T) {
	a := newCluster(t, clusterOpts{replicas: 1})
	b := newCluster(t, clusterOpts{replicas: 1})
	g := a.g
	var names []string
	for _, tc := range []*testCluster{a, b} {
		g.Eventually(func() []hivev1.ClusterImageSet { return tc.imageSets() }, wait, tick).Should(HaveLen(1))
		is := tc.imageSets()[0]
		g.Eventually(func(g Gomega) {
			aci := tc.aci()
			g.Expect(aci).NotTo(BeNil())
			g.Expect(aci.Spec.ImageSetRef).To(HaveField("Name", is.Name))
		}, wait, tick).Should(Succeed())
		names = append(names, is.Name)
	}
	g.Expect(names[0]).NotTo(Equal(names[1]))
	a.waitAvailable()
	b.waitAvailable()
}
