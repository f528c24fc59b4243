package controllers_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"

	"github.com/ocp-capi/ocp-capi/test/envtest"
)

// auditEnv turns on the API server's audit log for the suite, a one-minute
// sync period for its managers, and TestSteadyStateAudit, which runs for
// minutes (make bench-audit).
const auditEnv = "OCP_CAPI_AUDIT"

// auditSyncPeriod is the managers' --sync-period while auditing: short, so
// that the window fits in a test; every object is reconciled again in it,
// as after the default 10 minutes.
const auditSyncPeriod = time.Minute

// The managers' user agents: the audit log tells their requests from the
// stand-ins' and the test's own, which share the process.
const (
	bootstrapAgent    = "bootstrap-manager/audit"
	controlPlaneAgent = "controlplane-manager/audit"
)

// auditLog is the API server's audit log while auditing.
var auditLog string

func auditing() bool { return os.Getenv(auditEnv) != "" }

func withAgent(cfg *rest.Config, agent string) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.UserAgent = agent
	return c
}

// ours is a request of the bootstrap or the control-plane manager.
func ours(e envtest.AuditEvent) bool {
	return e.UserAgent == bootstrapAgent || e.UserAgent == controlPlaneAgent
}

// TestSteadyStateAudit installs a cluster of 3 control-plane and 2 worker
// Machines with the bootstrap and control-plane providers (the simulator
// plays assisted-service), lets it settle, then watches two sync periods
// of managers with --sync-period=1m, in which every object is reconciled
// again. It fails on any write of either manager to the API server (its
// audit log) and on a controller that did not go through its objects, and
// prints the figures (docs/reliability.md, Steady-state audit).
func TestSteadyStateAudit(t *testing.T) {
	if !auditing() {
		t.Skipf("a steady-state audit of several minutes: `make bench-audit` runs it (%s=1)", auditEnv)
	}
	start := time.Now()
	tc := installed(t, clusterOpts{}, 2)
	g := NewWithT(t)
	// The install wrote: the log tells the managers' requests.
	made, err := envtest.ReadAuditLog(auditLog, start, time.Now())
	g.Expect(err).NotTo(HaveOccurred())
	for _, agent := range []string{bootstrapAgent, controlPlaneAgent} {
		g.Expect(envtest.TallyAudit(made, func(e envtest.AuditEvent) bool { return e.UserAgent == agent }).Writes).NotTo(BeEmpty(),
			"no write of user agent %s in the audit log", agent)
	}

	// Settled: no write by either manager for 15 s.
	settled := time.Now()
	g.Eventually(func() (bool, error) { return envtest.QuietSince(auditLog, 15*time.Second, ours) },
		3*time.Minute, 2*time.Second).Should(BeTrue(), "the cluster does not settle")
	t.Logf("settled %s after Available", time.Since(settled).Round(time.Second))

	before := envtest.ReconcileCounts()
	from := time.Now()
	// Each informer's period is 0.9 to 1.1 times the sync period, and
	// client-go skips an informer's first resync when its handler came
	// after the informer's start: two periods hold at least one resync of
	// every informer.
	window := 2 * auditSyncPeriod
	time.Sleep(window)
	to := time.Now()
	after := envtest.ReconcileCounts()
	seen, err := envtest.ReadAuditLog(auditLog, from, to)
	g.Expect(err).NotTo(HaveOccurred())
	tally := envtest.TallyAudit(seen, ours)
	report := fmt.Sprintf("steady-state audit (bootstrap and control plane) over %s (--sync-period %s), namespace %s (3 control-plane + 2 worker Machines): %d API requests in the audit log\n"+
		"reconciles per controller:%s\nAPI writes by the managers: %d %v\nAPI reads by the managers: %v\nwrites by the stand-ins, the test and the API server (not audited): %v\n",
		window.Round(time.Second), auditSyncPeriod, tc.ns, len(seen), envtest.CountsSince(before, after),
		len(tally.Writes), tally.Writes, tally.Reads, tally.OthersWrites)
	t.Log(report)
	fmt.Printf("\nSTEADY-STATE AUDIT\n%s\n", report)

	for _, n := range []string{"openshiftassistedcontrolplane", "openshiftassistedconfig", "agent"} {
		g.Expect(after[n]-before[n]).To(BeNumerically(">", 0), "controller %s did not resync in %s", n, window)
	}
	g.Expect(tally.Writes).To(BeEmpty(), "API writes in the steady state")
}
