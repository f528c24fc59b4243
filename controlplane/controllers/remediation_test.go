package controllers_test

import (
	"slices"
	"testing"

	. "github.com/onsi/gomega"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	capiconditions "sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "github.com/ocp-capi/ocp-capi/api/controlplane/v1alpha3"
	hiveextv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/hiveext/v1beta1"
)

// setHealth writes a Machine's HealthCheckSucceeded condition as CAPI's
// MachineHealthCheck does (core/reconcilers/machinehealthcheck): unhealthy,
// it also sets OwnerRemediated False (WaitingForRemediation) when the
// Machine has none or a True one, which hands the remediation to the
// Machine's owner, the control plane; healthy again, it leaves
// OwnerRemediated to the owner.
func (tc *testCluster) setHealth(name string, healthy bool) {
	tc.t.Helper()
	tc.g.Eventually(func() error {
		m := &clusterv1.Machine{}
		if err := k8s.Get(tc.ctx, tc.key(name), m); err != nil {
			return err
		}
		base := m.DeepCopy()
		if healthy {
			capiconditions.Set(m, metav1.Condition{Type: clusterv1.MachineHealthCheckSucceededCondition,
				Status: metav1.ConditionTrue, Reason: clusterv1.MachineHealthCheckSucceededReason})
		} else {
			capiconditions.Set(m, metav1.Condition{Type: clusterv1.MachineHealthCheckSucceededCondition,
				Status: metav1.ConditionFalse, Reason: clusterv1.MachineHealthCheckUnhealthyNodeReason,
				Message: "Condition Ready on Node is reporting status Unknown for more than 5m0s"})
			if c := capiconditions.Get(m, clusterv1.MachineOwnerRemediatedCondition); c == nil || c.Status == metav1.ConditionTrue {
				capiconditions.Set(m, metav1.Condition{Type: clusterv1.MachineOwnerRemediatedCondition,
					Status: metav1.ConditionFalse, Reason: clusterv1.MachineOwnerRemediatedWaitingForRemediationReason,
					Message: "Waiting for remediation"})
			}
		}
		return k8s.Status().Patch(tc.ctx, m, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
	}, wait, tick).Should(Succeed())
}

// waitOwnerRemediated waits for the Machine's OwnerRemediated reason and
// returns the condition.
func (tc *testCluster) waitOwnerRemediated(name, reason string) *metav1.Condition {
	tc.t.Helper()
	var out *metav1.Condition
	tc.g.Eventually(func(g Gomega) {
		m := &clusterv1.Machine{}
		g.Expect(k8s.Get(tc.ctx, tc.key(name), m)).To(Succeed())
		c := capiconditions.Get(m, clusterv1.MachineOwnerRemediatedCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(reason), c.Message)
		out = c
	}, wait, tick).Should(Succeed())
	return out
}

// waitNoOwnerRemediated waits for the Machine to have no OwnerRemediated
// condition.
func (tc *testCluster) waitNoOwnerRemediated(name string) {
	tc.t.Helper()
	tc.g.Eventually(func(g Gomega) {
		m := &clusterv1.Machine{}
		g.Expect(k8s.Get(tc.ctx, tc.key(name), m)).To(Succeed())
		g.Expect(capiconditions.Get(m, clusterv1.MachineOwnerRemediatedCondition)).To(BeNil())
	}, wait, tick).Should(Succeed())
}

// setPaused sets the Cluster's spec.paused.
func (tc *testCluster) setPaused(paused bool) {
	tc.t.Helper()
	c := tc.cluster()
	base := c.DeepCopy()
	c.Spec.Paused = ptr.To(paused)
	tc.g.Expect(k8s.Patch(tc.ctx, c, client.MergeFrom(base))).To(Succeed())
}

// liveMachines are the names of the control plane's Machines not being
// deleted, oldest first.
func (tc *testCluster) liveMachines() []string {
	var out []string
	for _, m := range tc.machines() {
		if m.DeletionTimestamp.IsZero() {
			out = append(out, m.Name)
		}
	}
	return out
}

// eventReasons are the reasons of the events recorded in the namespace.
func (tc *testCluster) eventReasons() []string {
	list := &eventsv1.EventList{}
	tc.g.Expect(k8s.List(tc.ctx, list, client.InNamespace(tc.ns))).To(Succeed())
	var out []string
	for _, e := range list.Items {
		out = append(out, e.Reason)
	}
	return out
}

// waitReplaced waits until gone has been replaced: the control plane has
// its spec.replicas Machines again, gone not among them, each with its
// Node.
func (tc *testCluster) waitReplaced(gone string) []string {
	tc.t.Helper()
	var names []string
	tc.g.Eventually(func(g Gomega) {
		ms := tc.machines()
		names = names[:0]
		for _, m := range ms {
			g.Expect(m.DeletionTimestamp.IsZero()).To(BeTrue(), m.Name)
			g.Expect(m.Status.NodeRef.IsDefined()).To(BeTrue(), m.Name)
			names = append(names, m.Name)
		}
		g.Expect(names).To(HaveLen(int(tc.opts.replicas)))
		g.Expect(names).NotTo(ContainElement(gone))
	}, wait, tick).Should(Succeed())
	return names
}

// TestControlPlaneRemediation marks control-plane Machines unhealthy as a
// MachineHealthCheck does. During the installation the replacement is
// deferred; once installed, the Machine is deleted and a new one joins as
// a day-2 master. With two of three Machines unhealthy, removing one would
// leave one healthy Machine, below etcd's quorum of two: nothing is
// deleted until the other recovers.
func TestControlPlaneRemediation(t *testing.T) {
	tc := newCluster(t, clusterOpts{})
	g := tc.g
	sim.HoldAt(tc.aciKey(), hiveextv1beta1.StateInstalling)
	defer sim.Release(tc.aciKey())
	tc.machineDeployment("md", 0)
	g.Eventually(tc.aciState, wait, tick).Should(Equal(hiveextv1beta1.StateInstalling))
	tc.waitCondition(controlplanev1.RemediatingCondition, metav1.ConditionFalse, controlplanev1.NotRemediatingReason)
	day1 := tc.liveMachines()
	g.Expect(day1).To(HaveLen(3))

	// Never while installing.
	sick := day1[1]
	tc.setHealth(sick, false)
	c := tc.waitOwnerRemediated(sick, controlplanev1.RemediationDeferredReason)
	g.Expect(c.Message).To(ContainSubstring("not installed"))
	oacp := tc.waitCondition(controlplanev1.RemediatingCondition, metav1.ConditionTrue, controlplanev1.RemediatingReason)
	g.Expect(capiconditions.Get(oacp, controlplanev1.RemediatingCondition).Message).To(ContainSubstring("not installed"))
	g.Expect(tc.liveMachines()).To(Equal(day1), "no Machine is deleted while installing")
	g.Eventually(tc.eventReasons, wait, tick).Should(ContainElement("MachineRemediationDeferred"))

	// It recovers before its turn: its OwnerRemediated goes.
	tc.setHealth(sick, true)
	tc.waitNoOwnerRemediated(sick)
	tc.waitCondition(controlplanev1.RemediatingCondition, metav1.ConditionFalse, controlplanev1.NotRemediatingReason)

	// Installed, it fails again: it is replaced.
	sim.Release(tc.aciKey())
	tc.waitAvailable()
	tc.waitHostsSettled(3)
	tc.setHealth(sick, false)
	now := tc.waitReplaced(sick)
	g.Expect(now).To(ContainElements(day1[0], day1[2]))
	g.Expect(tc.eventReasons()).To(ContainElement("MachineRemediating"))
	added := now[len(now)-1]
	g.Expect(slices.Contains(day1, added)).To(BeFalse())
	g.Eventually(func() string { return tc.agentOf(added).Status.DebugInfo.State }, wait, tick).
		Should(Equal("added-to-existing-cluster"), "the replacement joins as a day-2 master")
	tc.waitCondition(controlplanev1.RemediatingCondition, metav1.ConditionFalse, controlplanev1.NotRemediatingReason)
	tc.waitAvailable()

	// Two unhealthy of three: removing either would lose etcd's quorum.
	// The MachineHealthCheck marks both while the Cluster is paused, so
	// that the control plane sees them together.
	a, b := now[0], now[1] // a is the older: it goes first
	tc.setPaused(true)
	tc.waitCondition(clusterv1.PausedCondition, metav1.ConditionTrue, clusterv1.PausedReason)
	tc.setHealth(a, false)
	tc.setHealth(b, false)
	tc.setPaused(false)
	c = tc.waitOwnerRemediated(a, controlplanev1.CannotBeRemediatedReason)
	g.Expect(c.Message).To(ContainSubstring("fewer than etcd's quorum of 2 for 3 replicas"))
	g.Expect(tc.liveMachines()).To(Equal(now), "no Machine is deleted below quorum")
	g.Eventually(tc.eventReasons, wait, tick).Should(ContainElement("MachineCannotBeRemediated"))
	tc.waitCondition(controlplanev1.RemediatingCondition, metav1.ConditionTrue, controlplanev1.RemediatingReason)

	// b recovers before its turn: its OwnerRemediated goes, and a is
	// replaced.
	tc.setHealth(b, true)
	tc.waitNoOwnerRemediated(b)
	last := tc.waitReplaced(a)
	g.Expect(last).To(ContainElements(b, now[2]))
	tc.waitCondition(controlplanev1.RemediatingCondition, metav1.ConditionFalse, controlplanev1.NotRemediatingReason)
	tc.waitAvailable()
}

// TestControlPlaneRemediationSingleNode: a single control-plane Machine is
// never removed, since etcd would lose its only member.
func TestControlPlaneRemediationSingleNode(t *testing.T) {
	tc := installed(t, clusterOpts{replicas: 1}, 0)
	g := tc.g
	only := tc.liveMachines()
	g.Expect(only).To(HaveLen(1))
	tc.setHealth(only[0], false)
	c := tc.waitOwnerRemediated(only[0], controlplanev1.CannotBeRemediatedReason)
	g.Expect(c.Message).To(ContainSubstring("leave 0 healthy control-plane Machines, fewer than etcd's quorum of 1 for 1 replicas"))
	g.Expect(tc.liveMachines()).To(Equal(only))
	tc.waitCondition(controlplanev1.RemediatingCondition, metav1.ConditionTrue, controlplanev1.RemediatingReason)
}

// TestControlPlaneRemediationWaitsForUpgrade: an unhealthy Machine is not
// replaced while the cluster-version operator upgrades the cluster; it is
// once the upgrade completes.
func TestControlPlaneRemediationWaitsForUpgrade(t *testing.T) {
	kubeconfig, _ := startWorkloadCluster(t)
	tc := newCluster(t, clusterOpts{})
	g := tc.g
	cdKey := tc.key(controlPlane)
	g.Expect(sim.SetWorkload(tc.ctx, cdKey, kubeconfig)).To(Succeed())
	tc.machineDeployment("md", 0)
	tc.waitAvailable()
	tc.waitHostsSettled(3)
	tc.waitCondition(controlplanev1.UpgradeCompletedCondition, metav1.ConditionTrue, controlplanev1.UpgradeCompletedReason)

	sim.HoldUpgrade(cdKey, true)
	defer sim.HoldUpgrade(cdKey, false)
	tc.setVersion("4.19.5")
	tc.waitCondition(controlplanev1.UpgradeCompletedCondition, metav1.ConditionFalse, controlplanev1.UpgradeInProgressReason)
	machines := tc.liveMachines()
	sick := machines[0]
	tc.setHealth(sick, false)
	c := tc.waitOwnerRemediated(sick, controlplanev1.RemediationDeferredReason)
	g.Expect(c.Message).To(ContainSubstring("upgrading from OpenShift 4.19.0 to 4.19.5"))
	g.Expect(tc.liveMachines()).To(Equal(machines), "no Machine is deleted while upgrading")

	sim.HoldUpgrade(cdKey, false)
	tc.waitCondition(controlplanev1.UpgradeCompletedCondition, metav1.ConditionTrue, controlplanev1.UpgradeCompletedReason)
	tc.waitReplaced(sick)
	tc.waitCondition(controlplanev1.RemediatingCondition, metav1.ConditionFalse, controlplanev1.NotRemediatingReason)
}
