package controllers_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	capiconditions "sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/ocp-capi/ocp-capi/api/bootstrap/v1alpha2"
	controlplanev1 "github.com/ocp-capi/ocp-capi/api/controlplane/v1alpha3"
	hivev1 "github.com/ocp-capi/ocp-capi/internal/consumed/hive/v1"
	hiveextv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/hiveext/v1beta1"
	"github.com/ocp-capi/ocp-capi/test/envtest"
)

// TestRestartMidInstall stops the control-plane manager while the day-1
// installation runs and starts a new one: the installation completes and
// nothing is made twice (the Machines, their configs and Metal3Machines,
// the hive objects, the ClusterImageSet). Then, on the settled cluster, a
// third manager reconciles everything again and writes nothing at all:
// the steady state makes zero writes.
func TestRestartMidInstall(t *testing.T) {
	const filter = "controlplane-restart"
	ctx := context.Background()
	stopA, err := startControlPlane(ctx, env.Config, filter)
	if err != nil {
		t.Fatal(err)
	}
	defer stopA()
	tc := newCluster(t, clusterOpts{filter: filter, failureDomains: []string{"fd-a", "fd-b", "fd-c"}})
	g := tc.g
	sim.HoldAt(tc.aciKey(), hiveextv1beta1.StateInstalling)
	defer sim.Release(tc.aciKey())
	tc.machineDeployment("md", 1)
	tc.worker(workerName(0))
	g.Eventually(tc.aciState, wait, tick).Should(Equal(hiveextv1beta1.StateInstalling))
	tc.waitCondition(controlplanev1.AvailableCondition, metav1.ConditionFalse, controlplanev1.ControlPlaneInstallingReason)
	stopA()

	machines := tc.list(&clusterv1.MachineList{})
	configs := tc.list(&bootstrapv1.OpenshiftAssistedConfigList{})
	infra := tc.metal3Machines()
	g.Expect(machines).To(HaveLen(4))
	imageSet := tc.imageSets()[0].Name

	stopB, err := startControlPlane(ctx, env.Config, filter)
	if err != nil {
		t.Fatal(err)
	}
	defer stopB()
	sim.Release(tc.aciKey())
	tc.waitAvailable()
	tc.waitHostsSettled(4)
	g.Expect(tc.list(&clusterv1.MachineList{})).To(Equal(machines))
	g.Expect(tc.list(&bootstrapv1.OpenshiftAssistedConfigList{})).To(Equal(configs))
	g.Expect(tc.metal3Machines()).To(Equal(infra))
	g.Expect(tc.list(&hivev1.ClusterDeploymentList{})).To(Equal([]string{controlPlane}))
	g.Expect(tc.list(&hiveextv1beta1.AgentClusterInstallList{})).To(Equal([]string{controlPlane}))
	g.Expect(tc.imageSets()).To(HaveLen(1))
	g.Expect(tc.imageSets()[0].Name).To(Equal(imageSet))
	// The control plane's Secrets: the kubeconfig, once.
	secrets := &corev1.SecretList{}
	g.Expect(k8s.List(tc.ctx, secrets, client.InNamespace(tc.ns))).To(Succeed())
	oacp := tc.oacp()
	var owned []string
	for _, s := range secrets.Items {
		if metav1.IsControlledBy(&s, oacp) {
			owned = append(owned, s.Name)
		}
	}
	g.Expect(owned).To(Equal([]string{clusterName + "-kubeconfig"}))
	// Everything settled: the counters and conditions are final.
	tc.waitCondition(controlplanev1.MachinesReadyCondition, metav1.ConditionTrue, controlplanev1.MachinesReadyReason)
	tc.waitCondition(controlplanev1.UpgradeCompletedCondition, metav1.ConditionTrue, controlplanev1.UpgradeCompletedReason)
	g.Eventually(func(g Gomega) {
		o := tc.oacp()
		g.Expect(capiconditions.IsTrue(o, controlplanev1.AvailableCondition)).To(BeTrue())
		g.Expect(tc.aci().Status.DebugInfo.State).To(Equal(hiveextv1beta1.StateAddingHosts))
		g.Expect(o.Status.ReadyReplicas).To(HaveValue(BeEquivalentTo(3)))
		g.Expect(o.Status.AvailableReplicas).To(HaveValue(BeEquivalentTo(3)))
		g.Expect(o.Status.UpToDateReplicas).To(HaveValue(BeEquivalentTo(3)))
	}, wait, tick).Should(Succeed())
	stopB()

	// Steady state: a fresh start reconciles everything and writes nothing.
	writes := &envtest.WriteCounter{}
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(writes.Wrap)
	before, idle := reconciles(), busy()
	stopC, err := startControlPlane(ctx, cfg, filter)
	if err != nil {
		t.Fatal(err)
	}
	defer stopC()
	g.Eventually(func(g Gomega) {
		g.Expect(reconciles()[cpController] - before[cpController]).To(BeNumerically(">=", 1))
		g.Expect(busy()).To(Equal(idle), "queued or running reconciles")
	}, wait, tick).Should(Succeed())
	g.Expect(writes.Load()).To(BeZero(), "writes in steady state: %v", writes.Seen())
}

// cpController is the control-plane controller's name in the metrics.
const cpController = "openshiftassistedcontrolplane"

// reconciles sums controller-runtime's reconcile counter per controller
// (over every manager of the process).
func reconciles() map[string]float64 { return envtest.ReconcileCounts() }

// busy is the number of queued and running reconciles of the control-plane
// controller, to compare with a baseline (see envtest.Busy).
func busy() float64 { return envtest.Busy(cpController) }
