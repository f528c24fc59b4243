package controllers_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"

	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
	"github.com/ocp-capi/ocp-capi/test/envtest"
)

// addonAgent tells the add-on's requests from the stand-ins' and the
// test's own in the audit log.
const addonAgent = "addon-manager/audit"

// audit is the suite's steady-state audit (envtest.AuditEnv), nil when off.
var audit *envtest.Audit

var addonRequest = envtest.ByAgent(addonAgent)

// TestSteadyStateAudit syncs a MAPI MachineSet and its running Machine
// (MAPI authoritative: a paused CAPI mirror of each, and its
// OpenStackMachine and template), lets them settle, then watches two sync
// periods, in which every object is reconciled again. It fails on any
// write by the add-on to the API server (its audit log) and on a sync or
// migration controller that did not go through its objects, and prints the
// figures (docs/reliability.md, Steady-state audit).
func TestSteadyStateAudit(t *testing.T) {
	audit.SkipUnlessOn(t)
	g := NewWithT(t)
	start := time.Now()
	msName, mName := machineSetAndMachine(t)
	waitSynced(t, msName)
	waitMachineSynced(t, mName, mapiv1beta1.SynchronizedAPIMachineAPI)
	// The sync wrote the mirrors: the log tells the add-on's requests.
	g.Expect(audit.CheckWrites(start, addonAgent)).To(Succeed())

	settled, err := audit.Settle(15*time.Second, 3*time.Minute, addonRequest)
	g.Expect(err).NotTo(HaveOccurred(), "the objects do not settle")
	t.Logf("settled %s after Synchronized", settled.Round(time.Second))

	r, err := audit.Watch(envtest.AuditWindow, addonRequest)
	g.Expect(err).NotTo(HaveOccurred())
	envtest.PrintAuditReport(t, r.Report("add-on", "the add-on", "MachineSet "+msName+" and Machine "+mName))

	g.Expect(r.Idle("machinesetsync", "machinesync", "machinesetmigration", "machinemigration")).To(BeEmpty(),
		"controllers that did not resync in the window")
	g.Expect(r.Tally.Writes).To(BeEmpty(), "API writes in the steady state")
}
