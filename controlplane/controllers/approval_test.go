package controllers_test

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/ocp-capi/ocp-capi/api/bootstrap/v1alpha2"
	controlplanev1 "github.com/ocp-capi/ocp-capi/api/controlplane/v1alpha3"
	aiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/agentinstall/v1beta1"
	hivev1 "github.com/ocp-capi/ocp-capi/internal/consumed/hive/v1"
	hiveextv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/hiveext/v1beta1"
	"github.com/ocp-capi/ocp-capi/test/assisted"
)

// These tests play the orderings that the real assisted-service allows and
// that a lenient stand-in hid (issue 15, defect 3): its state "ready" only
// means that the cluster's validations pass; the installation waits, with
// RequirementsMet False, until the provision requirements are met by known,
// approved Agents (docs/assisted-simulator.md).

// TestControlPlaneBeforeWorkers: the control-plane hosts register and are
// approved well before any worker boots. The cluster is "ready" and waits
// for its workers (InsufficientAgents); a worker that got its bootstrap
// data before and boots only now, and one created only now, both join the
// day-1 installation, which then installs all five hosts.
func TestControlPlaneBeforeWorkers(t *testing.T) {
	tc := newCluster(t, clusterOpts{})
	g := tc.g
	tc.machineDeployment("md", 2)
	g.Eventually(tc.aciWants, wait, tick).Should(Equal([2]int{3, 2}))
	tc.workerHeld("w-0")
	tc.waitDataSecret("w-0")

	// The control-plane hosts are in, approved; the installation waits for
	// the workers.
	g.Eventually(func(g Gomega) {
		aci := tc.aci()
		g.Expect(aci).NotTo(BeNil())
		g.Expect(aci.Status.DebugInfo.State).To(Equal(hiveextv1beta1.StateReady))
		c := installCondition(aci.Status.Conditions, hivev1.ClusterInstallRequirementsMet)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(corev1.ConditionFalse))
		g.Expect(c.Reason).To(Equal("InsufficientAgents"), c.Message)
		g.Expect(c.Message).To(ContainSubstring("registered 3 master agents, 0 arbiter agents and 0 worker agents"))
		masters := 0
		for _, a := range tc.agents() {
			if a.Spec.Approved && a.Spec.Role == aiv1beta1.HostRoleMaster && a.Status.DebugInfo.State == assisted.HostKnown {
				masters++
			}
		}
		g.Expect(masters).To(Equal(3))
	}, wait, tick).Should(Succeed())
	tc.waitCondition(controlplanev1.AvailableCondition, metav1.ConditionFalse, controlplanev1.InstallationNotStartedReason)

	tc.worker("w-1") // made only now
	tc.boot("w-0")   // booted only now
	tc.waitAvailable()
	tc.waitHostsSettled(5)
	roles := map[aiv1beta1.HostRole]int{}
	for _, a := range tc.agents() {
		g.Expect(a.Status.DebugInfo.State).To(Equal(assisted.HostInstalled), "%s: a day-1 host", a.Name)
		roles[a.Spec.Role]++
	}
	g.Expect(roles).To(Equal(map[aiv1beta1.HostRole]int{aiv1beta1.HostRoleMaster: 3, aiv1beta1.HostRoleWorker: 2}))
}

// TestUnapprovedAgentHoldsInstall: a worker's Agent registers and is left
// unapproved for a while (its config paused, so the bootstrap provider does
// not touch it). The installation does not start: the cluster is "ready"
// with UnapprovedAgents, the Agent says AgentIsNotApproved. Once approved,
// the cluster installs with every host.
func TestUnapprovedAgentHoldsInstall(t *testing.T) {
	tc := newCluster(t, clusterOpts{})
	g := tc.g
	tc.machineDeployment("md", 1)
	g.Eventually(tc.aciWants, wait, tick).Should(Equal([2]int{3, 1}))
	tc.workerHeld("w-0")
	tc.waitDataSecret("w-0")
	tc.setConfigPaused("w-0", true)
	tc.boot("w-0")

	var unapproved string
	g.Eventually(func(g Gomega) {
		aci := tc.aci()
		g.Expect(aci.Status.DebugInfo.State).To(Equal(hiveextv1beta1.StateReady))
		c := installCondition(aci.Status.Conditions, hivev1.ClusterInstallRequirementsMet)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal("UnapprovedAgents"), c.Message)
		g.Expect(c.Status).To(Equal(corev1.ConditionFalse))
		g.Expect(c.Message).To(Equal("The installation is pending on the approval of 1 agents"))
		unapproved = ""
		for _, a := range tc.agents() {
			if !a.Spec.Approved {
				g.Expect(unapproved).To(BeEmpty(), "one unapproved Agent")
				unapproved = a.Name
				g.Expect(a.Status.DebugInfo.State).To(Equal(assisted.HostKnown))
				r := agentCondition(a.Status.Conditions, aiv1beta1.RequirementsMetCondition)
				g.Expect(r).NotTo(BeNil())
				g.Expect(r.Reason).To(Equal("AgentIsNotApproved"))
			}
		}
		g.Expect(unapproved).NotTo(BeEmpty())
	}, wait, tick).Should(Succeed())
	tc.waitCondition(controlplanev1.AvailableCondition, metav1.ConditionFalse, controlplanev1.InstallationNotStartedReason)

	tc.setConfigPaused("w-0", false)
	tc.waitAvailable()
	tc.waitHostsSettled(4)
	for _, a := range tc.agents() {
		g.Expect(a.Status.DebugInfo.State).To(Equal(assisted.HostInstalled), "%s: a day-1 host", a.Name)
	}
	g.Expect(tc.agentOf("w-0").Name).To(Equal(unapproved), "the Agent left unapproved is the one installed")
}

// waitDataSecret waits for the config's bootstrap data.
func (tc *testCluster) waitDataSecret(name string) {
	tc.t.Helper()
	tc.g.Eventually(func(g Gomega) {
		oac := &bootstrapv1.OpenshiftAssistedConfig{}
		g.Expect(k8s.Get(tc.ctx, tc.key(name), oac)).To(Succeed())
		g.Expect(oac.Status.Initialization.DataSecretCreated).To(Equal(ptr.To(true)), "%v", oac.Status.Conditions)
	}, wait, tick).Should(Succeed())
}

// setConfigPaused pauses (or unpauses) one OpenshiftAssistedConfig, as a
// user does with CAPI's paused annotation.
func (tc *testCluster) setConfigPaused(name string, paused bool) {
	tc.t.Helper()
	oac := &bootstrapv1.OpenshiftAssistedConfig{}
	tc.g.Expect(k8s.Get(tc.ctx, tc.key(name), oac)).To(Succeed())
	base := oac.DeepCopy()
	if paused {
		if oac.Annotations == nil {
			oac.Annotations = map[string]string{}
		}
		oac.Annotations[clusterv1.PausedAnnotation] = ""
	} else {
		delete(oac.Annotations, clusterv1.PausedAnnotation)
	}
	tc.g.Expect(k8s.Patch(tc.ctx, oac, client.MergeFrom(base))).To(Succeed())
}

func installCondition(conds []hivev1.ClusterInstallCondition, t hivev1.ClusterInstallConditionType) *hivev1.ClusterInstallCondition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}

func agentCondition(conds []aiv1beta1.Condition, t aiv1beta1.ConditionType) *aiv1beta1.Condition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}
