package controllers_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
	"github.com/ocp-capi/ocp-capi/test/envtest"
)

// auditEnv turns on the API server's audit log for the suite, a one-minute
// sync period and a user agent of its own for the add-on's managers, and
// TestSteadyStateAudit, which runs for minutes (make bench-audit).
const auditEnv = "OCP_CAPI_AUDIT"

// auditSyncPeriod is the managers' --sync-period while auditing: every
// object is reconciled again in the window, as after the default 10
// minutes.
const auditSyncPeriod = time.Minute

// addonAgent tells the add-on's requests from the stand-ins' and the
// test's own in the audit log.
const addonAgent = "addon-manager/audit"

// auditLog is the API server's audit log while auditing.
var auditLog string

func auditing() bool { return os.Getenv(auditEnv) != "" }

func addonRequest(e envtest.AuditEvent) bool { return e.UserAgent == addonAgent }

// TestSteadyStateAudit syncs a MAPI MachineSet and its running Machine
// (MAPI authoritative: a paused CAPI mirror of each, and its
// OpenStackMachine and template), lets them settle, then watches two sync
// periods, in which every object is reconciled again. It fails on any
// write by the add-on to the API server (its audit log) and on a sync or
// migration controller that did not go through its objects, and prints the
// figures (docs/reliability.md, Steady-state audit).
func TestSteadyStateAudit(t *testing.T) {
	if !auditing() {
		t.Skipf("a steady-state audit of several minutes: `make bench-audit` runs it (%s=1)", auditEnv)
	}
	g := NewWithT(t)
	start := time.Now()
	msName, mName := machineSetAndMachine(t)
	waitSynced(t, msName)
	waitMachineSynced(t, mName, mapiv1beta1.SynchronizedAPIMachineAPI)
	// The sync wrote the mirrors: the log tells the add-on's requests.
	made, err := envtest.ReadAuditLog(auditLog, start, time.Now())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(envtest.TallyAudit(made, addonRequest).Writes).NotTo(BeEmpty(), "no write of user agent %s in the audit log", addonAgent)

	settled := time.Now()
	g.Eventually(func() (bool, error) { return envtest.QuietSince(auditLog, 15*time.Second, addonRequest) },
		3*time.Minute, 2*time.Second).Should(BeTrue(), "the objects do not settle")
	t.Logf("settled %s after Synchronized", time.Since(settled).Round(time.Second))

	before := envtest.ReconcileCounts()
	from := time.Now()
	// Each informer's period is 0.9 to 1.1 times the sync period: two
	// periods hold at least one resync of every informer.
	window := 2 * auditSyncPeriod
	time.Sleep(window)
	to := time.Now()
	after := envtest.ReconcileCounts()
	seen, err := envtest.ReadAuditLog(auditLog, from, to)
	g.Expect(err).NotTo(HaveOccurred())
	tally := envtest.TallyAudit(seen, addonRequest)
	report := fmt.Sprintf("steady-state audit (add-on) over %s (--sync-period %s), MachineSet %s and Machine %s: %d API requests in the audit log\n"+
		"reconciles per controller:%s\nAPI writes by the add-on: %d %v\nAPI reads by the add-on: %v\nwrites by the stand-ins, the test and the API server (not audited): %v\n",
		window.Round(time.Second), auditSyncPeriod, msName, mName, len(seen), envtest.CountsSince(before, after),
		len(tally.Writes), tally.Writes, tally.Reads, tally.OthersWrites)
	t.Log(report)
	fmt.Printf("\nSTEADY-STATE AUDIT\n%s\n", report)

	for _, n := range []string{"machinesetsync", "machinesync", "machinesetmigration", "machinemigration"} {
		g.Expect(after[n]-before[n]).To(BeNumerically(">", 0), "controller %s did not resync in %s", n, window)
	}
	g.Expect(tally.Writes).To(BeEmpty(), "API writes in the steady state")
}
