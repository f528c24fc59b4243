//go:build e2e

package e2e

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "github.com/ocp-capi/ocp-capi/api/controlplane/v1alpha3"
)

var _ = Describe("Control-plane remediation, openstack-agent flavor", func() {
	It("replaces a control-plane Machine whose Node a MachineHealthCheck finds unhealthy, and the cluster stays Available", func() {
		quickStart(suiteCtx, quickStartInput{
			Proxy:             mgmt,
			Sim:               sim,
			Prefix:            "rem",
			Flavor:            "openstack-agent",
			ControlPlaneCount: 3,
			WorkerCount:       0,
			AfterAvailable:    remediateControlPlaneMachine,
		})
	})
})

// remediateControlPlaneMachine makes CAPI core's MachineHealthCheck (the
// real one, in the management cluster) find one control-plane Node's Ready
// condition Unknown, as a host that stopped posting status; the control
// plane deletes the Machine and makes a replacement, which boots on the
// local OpenStack and joins as a day-2 master.
func remediateControlPlaneMachine(ctx context.Context, qs *quickStartCluster) {
	c := qs.Proxy.GetClient()
	By("Creating a MachineHealthCheck for the control-plane Machines")
	mhc := &clusterv1.MachineHealthCheck{
		ObjectMeta: metav1.ObjectMeta{Namespace: qs.Namespace, Name: qs.Name + "-control-plane"},
		Spec: clusterv1.MachineHealthCheckSpec{
			ClusterName: qs.Name,
			Selector:    metav1.LabelSelector{MatchLabels: map[string]string{clusterv1.MachineControlPlaneLabel: ""}},
			Checks: clusterv1.MachineHealthCheckChecks{UnhealthyNodeConditions: []clusterv1.UnhealthyNodeCondition{
				{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, TimeoutSeconds: ptr.To(int32(1))},
			}},
		},
	}
	Expect(c.Create(ctx, mhc)).To(Succeed())

	machines := func(g Gomega) []clusterv1.Machine {
		list := &clusterv1.MachineList{}
		g.Expect(c.List(ctx, list, client.InNamespace(qs.Namespace),
			client.MatchingLabels{clusterv1.ClusterNameLabel: qs.Name, clusterv1.MachineControlPlaneLabel: ""})).To(Succeed())
		return list.Items
	}
	var sick clusterv1.Machine
	Eventually(func(g Gomega) {
		ms := machines(g)
		g.Expect(ms).To(HaveLen(3))
		sick = ms[0]
		g.Expect(sick.Status.NodeRef.IsDefined()).To(BeTrue())
	}, e2eConfig.GetIntervals("default", "wait-machines")...).Should(Succeed())

	By("Marking Node " + sick.Status.NodeRef.Name + " (Machine " + sick.Name + ") Ready=Unknown in the workload cluster")
	Eventually(func() error {
		node := &corev1.Node{}
		if err := qs.Workload.Client.Get(ctx, client.ObjectKey{Name: sick.Status.NodeRef.Name}, node); err != nil {
			return err
		}
		base := node.DeepCopy()
		for i := range node.Status.Conditions {
			if node.Status.Conditions[i].Type == corev1.NodeReady {
				node.Status.Conditions[i].Status = corev1.ConditionUnknown
				node.Status.Conditions[i].Reason = "NodeStatusUnknown"
				node.Status.Conditions[i].Message = "Kubelet stopped posting node status (e2e)."
				node.Status.Conditions[i].LastTransitionTime = metav1.Now()
			}
		}
		return qs.Workload.Client.Status().Patch(ctx, node, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
	}, e2eConfig.GetIntervals("default", "wait-machines")...).Should(Succeed())

	By("Waiting for the control plane to replace Machine " + sick.Name)
	Eventually(func(g Gomega) {
		ms := machines(g)
		g.Expect(ms).To(HaveLen(3))
		for _, m := range ms {
			g.Expect(m.Name).NotTo(Equal(sick.Name), "Machine %s is still there; conditions %s", sick.Name, condSummary(m.Status.Conditions))
			g.Expect(m.Status.NodeRef.IsDefined()).To(BeTrue(), "Machine %s has no nodeRef; conditions %s", m.Name, condSummary(m.Status.Conditions))
		}
	}, e2eConfig.GetIntervals("default", "wait-machines")...).Should(Succeed())

	By("Waiting for the control plane to be Available with 3 available replicas and nothing left to remediate")
	oacp := &controlplanev1.OpenshiftAssistedControlPlane{}
	Eventually(func(g Gomega) {
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: qs.Namespace, Name: qs.Name}, oacp)).To(Succeed())
		g.Expect(ptr.Deref(oacp.Status.AvailableReplicas, 0)).To(BeEquivalentTo(3), "%s", condSummary(oacp.Status.Conditions))
		g.Expect(apimeta.IsStatusConditionTrue(oacp.Status.Conditions, controlplanev1.AvailableCondition)).To(BeTrue())
		g.Expect(apimeta.IsStatusConditionFalse(oacp.Status.Conditions, controlplanev1.RemediatingCondition)).To(BeTrue(),
			"%s", condSummary(oacp.Status.Conditions))
	}, e2eConfig.GetIntervals("default", "wait-machines")...).Should(Succeed())

	// The recorded OpenStack resources are the Available cluster's; the
	// replaced server is gone and a new one exists, which the deletion must
	// not leave behind either.
	Expect(c.Delete(ctx, mhc)).To(Succeed())
}
