package openstack

import (
	"context"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	capiconditions "sigs.k8s.io/cluster-api/util/conditions"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/test/envtest"
	"github.com/ocp-capi/ocp-capi/test/openstackproxy"
)

// audit is the suite's steady-state audit (envtest.AuditEnv), nil when off.
var audit *envtest.Audit

// TestSteadyStateAudit settles a cluster (managed network, load balancer
// endpoint, bastion) with three control-plane machines, then watches two
// sync periods of a manager with --sync-period=1m, in which every object is
// reconciled again. It fails on any write to the API server (its audit
// log; the API server's own Lease renewals aside), on any OpenStack write,
// on more OpenStack reads than the documented figures (one Nova read per
// OpenStackServer reconcile, one per OpenStackCluster reconcile, none per
// OpenStackMachine reconcile), and on more reconciles than the resyncs can
// bring, so that a controller that requeues itself fails too. It prints the
// figures (docs/reliability.md, Steady-state audit).
func TestSteadyStateAudit(t *testing.T) {
	audit.SkipUnlessOn(t)
	RegisterTestingT(t)
	startManagerSyncing(t, envtest.AuditSyncPeriod)
	ns := newNamespace(t)
	name := fx.prefix + "-audit"
	t.Cleanup(func() { expectNoLeftovers(t, name) })

	spec := managedClusterSpec()
	spec.Bastion = bastionSpec("m1.tiny")
	c, osc := clusterObjects(t, ns, name, spec)
	var machines []*infrav1.OpenStackMachine
	for _, n := range []string{"cp-0", "cp-1", "cp-2"} {
		machines = append(machines, cpMachine(t, ns, name, name+"-"+n))
	}
	// Not t.Context(): it is cancelled before the cleanups run, and
	// these deletes would fail unseen.
	t.Cleanup(func() {
		ctx := context.Background()
		_ = env.Client.Delete(ctx, osc)
		for _, m := range machines {
			_ = env.Client.Delete(ctx, m)
		}
		for _, m := range machines {
			waitGone(t, m, 5*wait, func() string { return "machine " + m.Name })
		}
		waitGone(t, osc, 5*wait, func() string { return "Deleting " + condition(osc, "Deleting") })
	})
	waitClusterReady(t, osc)
	markInfrastructureProvisioned(t, c)
	for _, m := range machines {
		Eventually(func(g Gomega) {
			get(t, m)(g)
			g.Expect(capiconditions.IsTrue(m, infrav1.ReadyCondition)).To(BeTrue(), "machine %s: InstanceReady %s",
				m.Name, condition(m, infrav1.InstanceReadyCondition))
		}, 5*wait, 500*time.Millisecond).Should(Succeed())
	}
	servers := len(machines) + 1 // and the bastion

	// Settled: no write by anyone for 15 s.
	settled, err := audit.Settle(15*time.Second, 3*time.Minute, isClient)
	Expect(err).NotTo(HaveOccurred(), "the cluster does not settle")
	t.Logf("settled %s after Ready", settled.Round(time.Second))

	proxy.Reset()
	r, err := audit.Watch(envtest.AuditWindow, isClient)
	Expect(err).NotTo(HaveOccurred())
	calls := proxy.Calls()
	writes := r.Tally.Writes
	byPath := map[string]int{}
	for _, c := range calls {
		byPath[c.Service+" "+c.Method+" "+c.Path]++
	}
	envtest.PrintAuditReport(t, r.Report("OpenStack provider", "clients (the test's own polling included)",
		fmt.Sprintf("a cluster with %d control-plane machines and a bastion", len(machines)),
		fmt.Sprintf("OpenStack calls: %d (%d besides Keystone) for %d servers: %v", len(calls), countCalls(calls, notIdentity), servers, byPath)))

	// Every controller that has objects went through them again.
	Expect(r.Idle("openstackcluster", "openstackmachine", "openstackserver")).To(BeEmpty(), "controllers that did not resync in the window")
	Expect(writes).To(BeEmpty(), "API writes in the steady state")
	Expect(countCalls(calls, isWrite)).To(BeZero(), "OpenStack writes in the steady state: %v", byPath)

	// The documented figures, per reconcile of a settled object
	// (docs/openstack/performance.md, docs/openstack/cluster.md): Nova is
	// read once per OpenStackServer, the load balancer once per
	// OpenStackCluster, nothing per OpenStackMachine.
	reconciles := r.Reconciles
	byService := map[string]int{}
	for _, c := range calls {
		if notIdentity(c) {
			byService[c.Service]++
		}
	}
	Expect(byService[openstackproxy.ServiceCompute]).To(BeNumerically("<=", reconciles("openstackserver")),
		"Nova reads: more than one per OpenStackServer reconcile (%v)", byPath)
	Expect(byService[openstackproxy.ServiceLoadBalancer]).To(BeNumerically("<=", reconciles("openstackcluster")),
		"Octavia reads: more than one per OpenStackCluster reconcile (%v)", byPath)
	delete(byService, openstackproxy.ServiceCompute)
	delete(byService, openstackproxy.ServiceLoadBalancer)
	Expect(byService).To(BeEmpty(), "calls beyond the documented figures (%v)", byPath)

	// A resync delivers each object of an informer once, at most three
	// times in the window. More reconciles than that: a controller that
	// triggers itself. The informers that reach each controller's objects
	// in the steady state (the others' predicates drop resyncs):
	feeds := map[string]int{
		"openstackserver":  servers * 1,       // its own
		"openstackcluster": 1 * 2,             // its own; its bastion's OpenStackServer
		"openstackmachine": len(machines) * 3, // its own; its OpenStackServer; its Machine
	}
	for n, objects := range feeds {
		Expect(reconciles(n)).To(BeNumerically("<=", 3*objects), "controller %s: more reconciles than resyncs in the window", n)
	}
}

// isClient is a request of a client of the API server, not of the server
// itself (it renews its identity Lease every 10 s).
func isClient(e envtest.AuditEvent) bool {
	return e.User.Username != "system:apiserver"
}

func countCalls(calls []openstackproxy.Call, keep func(openstackproxy.Call) bool) int {
	n := 0
	for _, c := range calls {
		if keep(c) {
			n++
		}
	}
	return n
}
