package controllers_test

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/ocp-capi/ocp-capi/api/bootstrap/v1alpha2"
	aiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/agentinstall/v1beta1"
	hiveextv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/hiveext/v1beta1"
)

// TestConcurrentRegistrations: every host registers three Agents at the
// same moment (a host that re-registered under new IDs). Each machine ends
// with exactly one approved Agent; the others are never approved and are
// deleted (deregistered), since assisted-service counts every Agent bound
// to the cluster and a duplicate left in place holds the installation in
// ready for good. The installation then completes.
func TestConcurrentRegistrations(t *testing.T) {
	sim.DuplicateRegistrations(2)
	t.Cleanup(func() { sim.DuplicateRegistrations(0) })
	tc := newCluster(t, 3, 2, watchValue)
	g := tc.g
	tc.metal3Template("cp", nil)
	tc.metal3Template("workers", nil)
	machines := []string{"cp-0", "cp-1", "cp-2", "worker-0", "worker-1"}
	for _, n := range machines[:3] {
		tc.metal3Machine(n, "cp", machineOpts{controlPlane: true})
	}
	for _, n := range machines[3:] {
		tc.metal3Machine(n, "workers", machineOpts{})
	}
	tc.waitInstallState(hiveextv1beta1.StateAddingHosts)
	// Each of the two duplicates of each host was reported (once) before it
	// was deleted.
	g.Eventually(func(g Gomega) {
		list := &eventsv1.EventList{}
		g.Expect(k8s.List(tc.ctx, list, client.InNamespace(tc.ns))).To(Succeed())
		dups := map[string]bool{}
		for _, e := range list.Items {
			if e.Reason == "DuplicateAgent" && e.Related != nil {
				dups[e.Related.Name] = true
			}
		}
		g.Expect(dups).To(HaveLen(2 * len(machines)))
	}, wait, tick).Should(Succeed())
	for _, n := range machines {
		tc.waitCondition(n, bootstrapv1.AgentApprovedCondition, metav1.ConditionTrue, bootstrapv1.AgentApprovedReason)
	}
	// Checked after the install finished: no later reconcile approved a
	// second Agent.
	approved := 0
	for _, a := range tc.agents() {
		g.Expect(a.Spec.Approved).To(BeTrue(), "Agent %s: a duplicate is deleted, not left unapproved", a.Name)
		approved++
	}
	g.Expect(approved).To(Equal(len(machines)))
	for _, n := range machines {
		g.Expect(tc.approvedAgentsOf(n)).To(HaveLen(1), n)
	}
}

// TestDay1Day2Gate: a worker that appears while the day-1 installation runs
// gets no bootstrap data (WaitingForInstallComplete) and so does not boot;
// its Metal3Machine's image, changed meanwhile, is put back before it boots;
// once the cluster accepts day-2 hosts it boots, its Agent is approved and
// the simulator adds it.
func TestDay1Day2Gate(t *testing.T) {
	tc := newCluster(t, 1, 0, watchValue)
	g := tc.g
	sim.HoldAt(tc.aciKey(), hiveextv1beta1.StateInstalling)
	t.Cleanup(func() { sim.Release(tc.aciKey()) })
	tc.metal3Template("cp", nil)
	tc.metal3Template("workers", nil)
	tc.metal3Machine("cp-0", "cp", machineOpts{controlPlane: true})
	tc.waitInstallState(hiveextv1beta1.StateInstalling)

	tc.metal3Machine("worker-0", "workers", machineOpts{})
	oac := tc.waitCondition("worker-0", bootstrapv1.DataSecretAvailableCondition, metav1.ConditionFalse, bootstrapv1.WaitingForInstallCompleteReason)
	g.Expect(condMessage(oac, bootstrapv1.DataSecretAvailableCondition)).To(ContainSubstring(`"installing"`))
	g.Expect(condStatus(oac, bootstrapv1.ReadyCondition)).To(Equal(metav1.ConditionFalse))
	g.Expect(k8s.Get(tc.ctx, client.ObjectKey{Namespace: tc.ns, Name: "worker-0"}, &corev1.Secret{})).To(MatchError(ContainSubstring("not found")))
	// Someone points the waiting worker at another ISO.
	m := tc.metal3("Metal3Machine", "worker-0")
	g.Expect(unstructured.SetNestedMap(m.Object, map[string]any{"url": "https://elsewhere.example.com/x.iso", "diskFormat": "live-iso"}, "spec", "image")).To(Succeed())
	g.Expect(k8s.Update(tc.ctx, m)).To(Succeed())

	sim.Release(tc.aciKey())
	tc.waitInstallState(hiveextv1beta1.StateAddingHosts)
	tc.waitDataSecret("worker-0")
	iso := ""
	for _, ie := range tc.infraEnvs() {
		if ie.Name == "workers-liveiso" {
			iso = ie.Status.ISODownloadURL
		}
	}
	image, _, _ := unstructured.NestedMap(tc.metal3("Metal3Machine", "worker-0").Object, "spec", "image")
	g.Expect(image).To(Equal(map[string]any{"url": iso, "diskFormat": "live-iso"}), "the worker boots its InfraEnv's ISO")
	tc.waitCondition("worker-0", bootstrapv1.AgentApprovedCondition, metav1.ConditionTrue, bootstrapv1.AgentApprovedReason)
	g.Eventually(func(g Gomega) {
		a := tc.approvedAgentsOf("worker-0")
		g.Expect(a).To(HaveLen(1))
		g.Expect(a[0].Status.DebugInfo.State).To(Equal("added-to-existing-cluster"), "a day-2 host")
	}, wait, tick).Should(Succeed())
	// The day-1 host was installed with the cluster.
	g.Expect(tc.approvedAgentsOf("cp-0")[0].Status.DebugInfo.State).To(Equal("installed"))
}

// TestWorkerAgentWaitsForDay2: on a single-node cluster a worker that
// exists before the day-1 installation starts gets no bootstrap data (the
// installation takes no workers: assisted-service would count its Agent
// and fail the cluster's validations for good), so it does not boot; once
// the cluster accepts day-2 hosts it boots, registers, is approved and is
// added. It once booted before the installation and registered during it,
// a path the real service does not allow on a single node.
func TestWorkerAgentWaitsForDay2(t *testing.T) {
	tc := newCluster(t, 1, 0, watchValue)
	g := tc.g
	sim.HoldAt(tc.aciKey(), hiveextv1beta1.StateInstalling)
	t.Cleanup(func() { sim.Release(tc.aciKey()) })
	tc.openstackMachine("worker-0", machineOpts{})
	oac := tc.waitCondition("worker-0", bootstrapv1.DataSecretAvailableCondition, metav1.ConditionFalse, bootstrapv1.WaitingForInstallCompleteReason)
	g.Expect(condMessage(oac, bootstrapv1.DataSecretAvailableCondition)).To(ContainSubstring("workerAgents is 0"))
	tc.openstackMachine("cp-0", machineOpts{controlPlane: true})
	tc.waitInstallState(hiveextv1beta1.StateInstalling)
	g.Expect(tc.config("worker-0").Status.DataSecretName).To(BeEmpty(), "no bootstrap data during the day-1 installation")
	g.Expect(tc.approvedAgentsOf("worker-0")).To(BeEmpty())

	sim.Release(tc.aciKey())
	tc.waitDataSecret("worker-0")
	tc.waitCondition("worker-0", bootstrapv1.AgentApprovedCondition, metav1.ConditionTrue, bootstrapv1.AgentApprovedReason)
	g.Eventually(func(g Gomega) {
		a := tc.approvedAgentsOf("worker-0")
		g.Expect(a).To(HaveLen(1))
		g.Expect(a[0].Status.DebugInfo.State).To(Equal("added-to-existing-cluster"))
	}, wait, tick).Should(Succeed())
}

// TestAgentOfAnotherInfraEnvIsNotBound: an Agent that registered in a
// shared InfraEnv with the MAC of a machine that boots from another InfraEnv
// (a host that escaped its ISO) is not bound or approved; an Agent of an
// InfraEnv this provider did not make is not touched.
func TestAgentOfAnotherInfraEnvIsNotBound(t *testing.T) {
	tc := newCluster(t, 1, 0, watchValue)
	g := tc.g
	sim.HoldAt(tc.aciKey(), hiveextv1beta1.StateReady)
	t.Cleanup(func() { sim.Release(tc.aciKey()) })
	tc.metal3Template("cp", nil)
	tc.metal3Machine("cp-0", "cp", machineOpts{controlPlane: true})
	tc.openstackMachine("other-0", machineOpts{controlPlane: true}) // its own InfraEnv
	tc.waitCondition("cp-0", bootstrapv1.AgentApprovedCondition, metav1.ConditionTrue, bootstrapv1.AgentApprovedReason)
	tc.waitDataSecret("other-0")

	var otherMAC string
	g.Eventually(func(g Gomega) {
		for _, a := range tc.agents() {
			if a.Labels[aiv1beta1.InfraEnvNameLabel] == "other-0" && len(a.Status.Inventory.Interfaces) > 0 {
				otherMAC = a.Status.Inventory.Interfaces[0].MacAddress
			}
		}
		g.Expect(otherMAC).NotTo(BeEmpty())
	}, wait, tick).Should(Succeed())
	for name, ie := range map[string]string{"escaped": "cp-liveiso", "foreign": "someone-elses"} {
		a := &aiv1beta1.Agent{
			ObjectMeta: tc.meta(name, map[string]string{aiv1beta1.InfraEnvNameLabel: ie}),
			Spec:       aiv1beta1.AgentSpec{Role: aiv1beta1.HostRoleAutoAssign},
		}
		tc.create(a)
		base := a.DeepCopy()
		a.Status.Inventory.Interfaces = []aiv1beta1.HostInterface{{Name: "eth0", MacAddress: otherMAC, IPV4Addresses: []string{}, IPV6Addresses: []string{}, Flags: []string{}}}
		g.Expect(k8s.Status().Patch(tc.ctx, a, client.MergeFrom(base))).To(Succeed())
	}
	g.Eventually(func(g Gomega) {
		list := &eventsv1.EventList{}
		g.Expect(k8s.List(tc.ctx, list, client.InNamespace(tc.ns))).To(Succeed())
		found := false
		for _, e := range list.Items {
			found = found || (e.Reason == "AgentInfraEnvMismatch" && e.Regarding.Name == "escaped")
		}
		g.Expect(found).To(BeTrue())
	}, wait, tick).Should(Succeed())
	for _, a := range tc.agents() {
		if a.Name == "escaped" || a.Name == "foreign" {
			g.Expect(a.Spec.Approved).To(BeFalse(), a.Name)
			g.Expect(a.Labels).NotTo(HaveKey(bootstrapv1.ConfigLabel), a.Name)
			g.Expect(a.Spec.Role).To(Equal(aiv1beta1.HostRoleAutoAssign), a.Name)
		}
	}
	g.Eventually(func() []aiv1beta1.Agent { return tc.approvedAgentsOf("other-0") }, wait, tick).Should(HaveLen(1))
}
