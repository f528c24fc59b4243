package controllers_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	bootstrapv1 "github.com/ocp-capi/ocp-capi/api/bootstrap/v1alpha2"
	aiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/agentinstall/v1beta1"
	hivev1 "github.com/ocp-capi/ocp-capi/internal/consumed/hive/v1"
	hiveextv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/hiveext/v1beta1"
	"github.com/ocp-capi/ocp-capi/test/envtest"
)

// TestPause: a paused cluster, then a paused config, stop everything at the
// Paused condition (no finalizer, no InfraEnv); unpausing resumes.
func TestPause(t *testing.T) {
	tc := newCluster(t, 1, 0, watchValue)
	g := tc.g
	cluster := &clusterv1.Cluster{}
	g.Expect(k8s.Get(tc.ctx, types.NamespacedName{Namespace: tc.ns, Name: tc.name}, cluster)).To(Succeed())
	base := cluster.DeepCopy()
	cluster.Spec.Paused = ptr.To(true)
	g.Expect(k8s.Patch(tc.ctx, cluster, client.MergeFrom(base))).To(Succeed())

	tc.openstackMachine("cp-0", machineOpts{controlPlane: true})
	oac := tc.waitCondition("cp-0", clusterv1.PausedCondition, metav1.ConditionTrue, clusterv1.PausedReason)
	g.Expect(oac.Finalizers).To(BeEmpty())
	g.Expect(tc.infraEnvs()).To(BeEmpty())

	// Unpause the cluster but pause the config itself.
	oacBase := oac.DeepCopy()
	oac.Annotations = map[string]string{clusterv1.PausedAnnotation: ""}
	g.Expect(k8s.Patch(tc.ctx, oac, client.MergeFrom(oacBase))).To(Succeed())
	base = cluster.DeepCopy()
	cluster.Spec.Paused = ptr.To(false)
	g.Expect(k8s.Patch(tc.ctx, cluster, client.MergeFrom(base))).To(Succeed())
	g.Eventually(func(g Gomega) {
		oac = tc.config("cp-0")
		g.Expect(condStatus(oac, clusterv1.PausedCondition)).To(Equal(metav1.ConditionTrue))
		g.Expect(condMessage(oac, clusterv1.PausedCondition)).To(Equal("OpenshiftAssistedConfig has the cluster.x-k8s.io/paused annotation"))
	}, wait, tick).Should(Succeed())
	g.Expect(tc.infraEnvs()).To(BeEmpty())

	oacBase = oac.DeepCopy()
	delete(oac.Annotations, clusterv1.PausedAnnotation)
	g.Expect(k8s.Patch(tc.ctx, oac, client.MergeFrom(oacBase))).To(Succeed())
	tc.waitCondition("cp-0", clusterv1.PausedCondition, metav1.ConditionFalse, clusterv1.NotPausedReason)
	tc.waitDataSecret("cp-0")
	tc.waitCondition("cp-0", bootstrapv1.AgentApprovedCondition, metav1.ConditionTrue, bootstrapv1.AgentApprovedReason)
}

// TestDeletion deletes in every order. Deleting never waits for the Machine
// or the Cluster (gone is normal: CAPOA, the provider this one replaces,
// stalled on a nil Machine there; docs/bootstrap.md, Flow, Deletion), removes
// the config's InfraEnv (assisted-service then removes its Agents), keeps a
// shared InfraEnv while another config uses it, and unbinds the Agent of a
// shared InfraEnv so that a returning host is bound afresh.
func TestDeletion(t *testing.T) {
	// ready: the machines boot and their Agents are approved.
	ready := func(t *testing.T) *testCluster {
		tc := newCluster(t, 2, 0, watchValue)
		sim.HoldAt(tc.aciKey(), hiveextv1beta1.StateReady) // installs nothing: hosts stay known
		t.Cleanup(func() { sim.Release(tc.aciKey()) })
		tc.openstackMachine("os-0", machineOpts{controlPlane: true})
		tc.metal3Template("cp", nil)
		tc.metal3Machine("m3-0", "cp", machineOpts{controlPlane: true})
		tc.metal3Machine("m3-1", "cp", machineOpts{controlPlane: true})
		for _, n := range []string{"os-0", "m3-0", "m3-1"} {
			tc.waitCondition(n, bootstrapv1.AgentApprovedCondition, metav1.ConditionTrue, bootstrapv1.AgentApprovedReason)
		}
		return tc
	}
	deleteObj := func(tc *testCluster, obj client.Object, name string) {
		obj.SetNamespace(tc.ns)
		obj.SetName(name)
		tc.g.Expect(client.IgnoreNotFound(k8s.Delete(tc.ctx, obj))).To(Succeed())
	}
	gone := func(tc *testCluster, obj client.Object, name string) {
		tc.t.Helper()
		tc.g.Eventually(func() bool {
			return isNotFound(k8s.Get(tc.ctx, types.NamespacedName{Namespace: tc.ns, Name: name}, obj))
		}, wait, tick).Should(BeTrue(), "%T %s is not gone", obj, name)
	}
	// deleteConfigs deletes the configs, as the garbage collector would
	// once their Machines are gone (envtest runs no garbage collector).
	deleteConfigs := func(tc *testCluster, names ...string) {
		for _, n := range names {
			deleteObj(tc, &bootstrapv1.OpenshiftAssistedConfig{}, n)
		}
		for _, n := range names {
			gone(tc, &bootstrapv1.OpenshiftAssistedConfig{}, n)
		}
	}

	t.Run("config first", func(t *testing.T) {
		tc := ready(t)
		g := tc.g
		agentOf := func(n string) string { return tc.config(n).Status.AgentRef.Name }
		m30Agent, os0Agent := agentOf("m3-0"), agentOf("os-0")

		deleteConfigs(tc, "os-0")
		gone(tc, &aiv1beta1.InfraEnv{}, "os-0")
		gone(tc, &aiv1beta1.Agent{}, os0Agent) // assisted-service removes the InfraEnv's Agents

		deleteConfigs(tc, "m3-0")
		a := &aiv1beta1.Agent{}
		g.Expect(k8s.Get(tc.ctx, types.NamespacedName{Namespace: tc.ns, Name: m30Agent}, a)).To(Succeed())
		g.Expect(a.Spec.Approved).To(BeFalse(), "unbound")
		g.Expect(a.Labels).NotTo(HaveKey(bootstrapv1.ConfigLabel))
		g.Expect(k8s.Get(tc.ctx, types.NamespacedName{Namespace: tc.ns, Name: "cp-liveiso"}, &aiv1beta1.InfraEnv{})).
			To(Succeed(), "m3-1 still boots from the shared InfraEnv")
		g.Expect(tc.approvedAgentsOf("m3-1")).To(HaveLen(1), "the other machine keeps its Agent")

		deleteConfigs(tc, "m3-1")
		gone(tc, &aiv1beta1.InfraEnv{}, "cp-liveiso")
		// The Machines are still there: deleting a config does not wait for
		// them, nor touch them.
		g.Expect(k8s.Get(tc.ctx, types.NamespacedName{Namespace: tc.ns, Name: "os-0"}, &clusterv1.Machine{})).To(Succeed())
	})

	t.Run("machine first", func(t *testing.T) {
		tc := ready(t)
		for _, n := range []string{"os-0", "m3-0", "m3-1"} {
			deleteObj(tc, &clusterv1.Machine{}, n)
		}
		for _, n := range []string{"os-0", "m3-0", "m3-1"} {
			gone(tc, &clusterv1.Machine{}, n)
		}
		// The configs now have no owner: they wait, without an error.
		tc.waitCondition("os-0", bootstrapv1.DataSecretAvailableCondition, metav1.ConditionTrue, bootstrapv1.DataSecretAvailableReason)
		deleteConfigs(tc, "os-0", "m3-0", "m3-1")
		gone(tc, &aiv1beta1.InfraEnv{}, "os-0")
		gone(tc, &aiv1beta1.InfraEnv{}, "cp-liveiso")
	})

	t.Run("cluster first", func(t *testing.T) {
		tc := ready(t)
		// CAPI deletes the Cluster; the control-plane provider's
		// ClusterDeployment and AgentClusterInstall go with it.
		deleteObj(tc, &clusterv1.Cluster{}, tc.name)
		deleteObj(tc, &hiveextv1beta1.AgentClusterInstall{}, tc.name)
		deleteObj(tc, &hivev1.ClusterDeployment{}, tc.name)
		gone(tc, &clusterv1.Cluster{}, tc.name)
		gone(tc, &hivev1.ClusterDeployment{}, tc.name)
		for _, n := range []string{"os-0", "m3-0", "m3-1"} {
			deleteObj(tc, &clusterv1.Machine{}, n)
		}
		deleteConfigs(tc, "os-0", "m3-0", "m3-1")
		gone(tc, &aiv1beta1.InfraEnv{}, "os-0")
		gone(tc, &aiv1beta1.InfraEnv{}, "cp-liveiso")
	})

	t.Run("config without a Machine ever", func(t *testing.T) {
		tc := newCluster(t, 1, 0, watchValue)
		oac := &bootstrapv1.OpenshiftAssistedConfig{ObjectMeta: tc.meta("orphan", map[string]string{clusterv1.ClusterNameLabel: tc.name})}
		tc.create(oac)
		got := tc.waitCondition("orphan", bootstrapv1.DataSecretAvailableCondition, metav1.ConditionFalse, bootstrapv1.WaitingForMachineReason)
		tc.g.Expect(controllerutil.ContainsFinalizer(got, bootstrapv1.ConfigFinalizer)).To(BeFalse())
		deleteConfigs(tc, "orphan")
	})
}

// TestRestart stops the provider in the middle of the flow (data secrets
// created, hosts not yet registered), lets the hosts register while it is
// down, and starts it again: it binds and approves each Agent once and the
// install completes, with no InfraEnv or approval twice. A third start over
// the finished cluster writes nothing at all.
func TestRestart(t *testing.T) {
	const filter = "bootstrap-restart"
	// Three control-plane hosts and a worker, all in the day-1 installation
	// (a single node takes no worker on day 1).
	tc := newCluster(t, 3, 1, filter)
	g := tc.g
	ctx := context.Background()
	stopA, err := startBootstrap(ctx, env.Config, filter)
	g.Expect(err).NotTo(HaveOccurred())
	machines := []string{"cp-0", "cp-1", "cp-2", "worker-0"}
	for _, n := range machines[:3] {
		tc.openstackMachine(n, machineOpts{controlPlane: true})
	}
	tc.metal3Template("workers", nil)
	tc.metal3Machine("worker-0", "workers", machineOpts{})
	for _, n := range machines {
		tc.waitDataSecret(n)
	}
	stopA()

	// The hosts boot and register while the provider is down.
	g.Eventually(func() []aiv1beta1.Agent { return tc.agents() }, wait, tick).Should(HaveLen(len(machines)))

	stopB, err := startBootstrap(ctx, env.Config, filter)
	g.Expect(err).NotTo(HaveOccurred())
	tc.waitInstallState(hiveextv1beta1.StateAddingHosts)
	for _, n := range machines {
		tc.waitCondition(n, bootstrapv1.AgentApprovedCondition, metav1.ConditionTrue, bootstrapv1.AgentApprovedReason)
		g.Expect(tc.approvedAgentsOf(n)).To(HaveLen(1), n)
	}
	g.Expect(tc.infraEnvs()).To(HaveLen(len(machines)))
	// Let the last host finish, so that nothing moves any more.
	g.Eventually(func(g Gomega) {
		for _, a := range tc.agents() {
			g.Expect(a.Status.DebugInfo.State).To(BeElementOf("installed", "added-to-existing-cluster"))
		}
	}, wait, tick).Should(Succeed())
	stopB()

	// Steady state: a fresh start reconciles everything and writes nothing.
	writes := &envtest.WriteCounter{}
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(writes.Wrap)
	before, idle := envtest.ReconcileCounts(), busy()
	stopC, err := startBootstrap(ctx, cfg, filter)
	g.Expect(err).NotTo(HaveOccurred())
	defer stopC()
	g.Eventually(func(g Gomega) {
		now := envtest.ReconcileCounts()
		g.Expect(now["openshiftassistedconfig"] - before["openshiftassistedconfig"]).To(BeNumerically(">=", 2))
		g.Expect(now["agent"] - before["agent"]).To(BeNumerically(">=", 2))
		g.Expect(busy()).To(Equal(idle), "queued or running reconciles")
	}, wait, tick).Should(Succeed())
	g.Expect(writes.Load()).To(BeZero(), "writes in steady state: %v", writes.Seen())
}

// busy is the number of queued and running reconciles of the bootstrap
// controllers, to compare with a baseline (see envtest.Busy).
func busy() float64 { return envtest.Busy("openshiftassistedconfig", "agent") }
