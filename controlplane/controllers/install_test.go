package controllers_test

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/ocp-capi/ocp-capi/api/bootstrap/v1alpha2"
	controlplanev1 "github.com/ocp-capi/ocp-capi/api/controlplane/v1alpha3"
	aiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/agentinstall/v1beta1"
	hivev1 "github.com/ocp-capi/ocp-capi/internal/consumed/hive/v1"
	hiveextv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/hiveext/v1beta1"
)

// TestDay1ToAvailable installs a cluster of 3 control-plane and 2 worker
// Machines in one day-1 installation. The workers come from a
// MachineDeployment (whose own MachineSet is not counted twice) and from a
// MachineSet of no MachineDeployment: the AgentClusterInstall waits for
// both. The control plane ends Available and Ready with its kubeconfig, its
// counters and its Machines spread over the failure domains.
func TestDay1ToAvailable(t *testing.T) {
	tc := newCluster(t, clusterOpts{failureDomains: []string{"fd-a", "fd-b", "fd-c"}})
	g := tc.g
	md := tc.machineDeployment("md", 1)
	tc.machineSet("md-abc12", 1, md) // the MachineDeployment's own
	tc.machineSet("ms", 1, nil)

	// The AgentClusterInstall waits for everything CAPI will make.
	g.Eventually(func(g Gomega) {
		aci := tc.aci()
		g.Expect(aci).NotTo(BeNil())
		g.Expect(aci.Spec.ProvisionRequirements.ControlPlaneAgents).To(Equal(3))
		g.Expect(aci.Spec.ProvisionRequirements.WorkerAgents).To(Equal(2))
	}, wait, tick).Should(Succeed())
	// Nothing installs before every host is there.
	tc.waitCondition(controlplanev1.AvailableCondition, metav1.ConditionFalse, controlplanev1.InstallationNotStartedReason)
	tc.worker("w-0")
	tc.worker("w-1")

	oacp := tc.waitAvailable()
	tc.waitHostsSettled(5)

	// The hive objects.
	cd := &hivev1.ClusterDeployment{}
	g.Expect(k8s.Get(tc.ctx, tc.key(controlPlane), cd)).To(Succeed())
	g.Expect(cd.Labels).To(HaveKeyWithValue(clusterv1.ClusterNameLabel, clusterName))
	g.Expect(cd.Spec.ClusterName).To(Equal(clusterName))
	g.Expect(cd.Spec.PullSecretRef.Name).To(Equal("pull-secret"))
	g.Expect(metav1.IsControlledBy(cd, oacp)).To(BeTrue())
	aci := tc.aci()
	g.Expect(aci.Spec.Networking.ClusterNetwork).To(HaveLen(1))
	g.Expect(aci.Spec.Networking.ServiceNetwork).To(Equal([]string{"172.30.0.0/16"}))
	sets := tc.imageSets()
	g.Expect(sets).To(HaveLen(1))
	g.Expect(aci.Spec.ImageSetRef.Name).To(Equal(sets[0].Name))
	g.Expect(sets[0].Spec.ReleaseImage).To(ContainSubstring(":" + version))

	// The kubeconfig: the admin kubeconfig, as CAPI wants it.
	admin := &corev1.Secret{}
	g.Expect(k8s.Get(tc.ctx, tc.key(aci.Spec.ClusterMetadata.AdminKubeconfigSecretRef.Name), admin)).To(Succeed())
	kc := &corev1.Secret{}
	g.Expect(k8s.Get(tc.ctx, tc.key(clusterName+"-kubeconfig"), kc)).To(Succeed())
	g.Expect(kc.Type).To(Equal(clusterv1.ClusterSecretType))
	g.Expect(kc.Data["value"]).To(Equal(admin.Data["kubeconfig"]))
	g.Expect(metav1.IsControlledBy(kc, oacp)).To(BeTrue())
	g.Expect(kc.Labels).To(HaveKeyWithValue(clusterv1.ClusterNameLabel, clusterName))

	// The contract's status.
	oacp = tc.waitCondition(controlplanev1.MachinesReadyCondition, metav1.ConditionTrue, controlplanev1.MachinesReadyReason)
	// CAPI's patch helper writes the conditions, then the rest of the status:
	// what a pass set with a condition lands one write after it.
	g.Eventually(func() *bool { return tc.oacp().Status.Initialization.ControlPlaneInitialized }, wait, tick).Should(HaveValue(BeTrue()))
	for _, c := range []string{controlplanev1.KubeconfigAvailableCondition, controlplanev1.MachinesCreatedCondition,
		controlplanev1.UpgradeCompletedCondition, controlplanev1.KubernetesVersionAvailableCondition} {
		tc.waitCondition(c, metav1.ConditionTrue, map[string]string{
			controlplanev1.KubeconfigAvailableCondition:        controlplanev1.KubeconfigAvailableReason,
			controlplanev1.MachinesCreatedCondition:            controlplanev1.MachinesCreatedReason,
			controlplanev1.UpgradeCompletedCondition:           controlplanev1.UpgradeCompletedReason,
			controlplanev1.KubernetesVersionAvailableCondition: controlplanev1.KubernetesVersionAvailableReason,
		}[c])
	}
	tc.waitCondition(clusterv1.PausedCondition, metav1.ConditionFalse, clusterv1.NotPausedReason)
	g.Eventually(func(g Gomega) {
		o := tc.oacp()
		g.Expect(o.Status.Replicas).To(HaveValue(BeEquivalentTo(3)))
		g.Expect(o.Status.ReadyReplicas).To(HaveValue(BeEquivalentTo(3)))
		g.Expect(o.Status.AvailableReplicas).To(HaveValue(BeEquivalentTo(3)))
		g.Expect(o.Status.UpToDateReplicas).To(HaveValue(BeEquivalentTo(3)))
		g.Expect(o.Status.DistributionVersion).To(Equal(version))
		g.Expect(o.Status.Version).To(HavePrefix("v1.32."))
		g.Expect(o.Status.Selector).To(ContainSubstring(clusterv1.MachineControlPlaneNameLabel + "=" + controlPlane))
		g.Expect(o.Status.ObservedGeneration).To(Equal(o.Generation))
	}, wait, tick).Should(Succeed())

	// The Machines: one per failure domain, each with its config and
	// its Metal3Machine cloned from the template.
	machines := tc.machines()
	g.Expect(machines).To(HaveLen(3))
	var fds []string
	for _, m := range machines {
		fds = append(fds, m.Spec.FailureDomain)
		g.Expect(m.Labels).To(HaveKey(clusterv1.MachineControlPlaneLabel))
		g.Expect(metav1.IsControlledBy(&m, oacp)).To(BeTrue())
		g.Expect(m.Spec.Bootstrap.ConfigRef.Name).To(Equal(m.Name))
		oac := &bootstrapv1.OpenshiftAssistedConfig{}
		g.Expect(k8s.Get(tc.ctx, tc.key(m.Name), oac)).To(Succeed())
		infra := &unstructured.Unstructured{}
		infra.SetGroupVersionKind(infraGV.WithKind("Metal3Machine"))
		g.Expect(k8s.Get(tc.ctx, tc.key(m.Name), infra)).To(Succeed())
		g.Expect(infra.GetAnnotations()).To(HaveKeyWithValue(clusterv1.TemplateClonedFromNameAnnotation, cpTemplate))
		g.Expect(strings.HasPrefix(m.Name, controlPlane+"-")).To(BeTrue(), m.Name)
	}
	g.Expect(fds).To(ConsistOf("fd-a", "fd-b", "fd-c"))
	// The template the Machines are cloned from belongs to the Cluster (as
	// KCP's does), so the garbage collector deletes it with the Cluster.
	tmpl := &unstructured.Unstructured{}
	tmpl.SetGroupVersionKind(infraGV.WithKind("Metal3MachineTemplate"))
	g.Expect(k8s.Get(tc.ctx, tc.key(cpTemplate), tmpl)).To(Succeed())
	cluster := tc.cluster()
	g.Expect(tmpl.GetOwnerReferences()).To(ContainElement(And(
		HaveField("Kind", "Cluster"), HaveField("Name", cluster.Name), HaveField("UID", cluster.UID),
		HaveField("Controller", BeNil()))))

	// Day 1: every host was installed with the cluster, in its role.
	roles := map[aiv1beta1.HostRole]int{}
	for _, a := range tc.agents() {
		g.Expect(a.Status.DebugInfo.State).To(Equal("installed"), "%s of %s: %v", a.Name, a.Labels[bootstrapv1.ConfigLabel], a.Status.Progress)
		roles[a.Spec.Role]++
	}
	g.Expect(roles).To(Equal(map[aiv1beta1.HostRole]int{aiv1beta1.HostRoleMaster: 3, aiv1beta1.HostRoleWorker: 2}))
}

// TestWorkerScaleUpDay2 adds a worker to an installed cluster: the
// AgentClusterInstall follows the MachineDeployment, and the new host joins
// as a day-2 host while the cluster stays Available.
func TestWorkerScaleUpDay2(t *testing.T) {
	tc := installed(t, clusterOpts{}, 1)
	g := tc.g
	md := &clusterv1.MachineDeployment{}
	g.Expect(k8s.Get(tc.ctx, tc.key("md"), md)).To(Succeed())
	base := md.DeepCopy()
	md.Spec.Replicas = ptr.To[int32](2)
	g.Expect(k8s.Patch(tc.ctx, md, client.MergeFrom(base))).To(Succeed())
	g.Eventually(tc.aciWants, wait, tick).Should(Equal([2]int{3, 2}))

	tc.worker("w-1")
	tc.waitHostsSettled(5)
	a := tc.agentOf("w-1")
	g.Expect(a).NotTo(BeNil())
	g.Expect(a.Status.DebugInfo.State).To(Equal("added-to-existing-cluster"), "a day-2 host")
	g.Expect(a.Spec.Role).To(Equal(aiv1beta1.HostRoleWorker))
	g.Expect(tc.aci().Status.DebugInfo.State).To(Equal(hiveextv1beta1.StateAddingHosts))
	oacp := tc.waitAvailable()
	g.Expect(oacp.Status.Replicas).To(HaveValue(BeEquivalentTo(3)))
}
