package controllers_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/ocp-capi/ocp-capi/test/envtest"
)

// The managers' user agents while auditing: the audit log tells their
// requests from the stand-ins' and the test's own, which share the process.
const (
	bootstrapAgent    = "bootstrap-manager/audit"
	controlPlaneAgent = "controlplane-manager/audit"
)

// audit is the suite's steady-state audit (envtest.AuditEnv), nil when off.
var audit *envtest.Audit

// ours is a request of the bootstrap or the control-plane manager.
var ours = envtest.ByAgent(bootstrapAgent, controlPlaneAgent)

// TestSteadyStateAudit installs a cluster of 3 control-plane and 2 worker
// Machines with the bootstrap and control-plane providers (the simulator
// plays assisted-service), lets it settle, then watches two sync periods
// of managers with --sync-period=1m, in which every object is reconciled
// again. It fails on any write of either manager to the API server (its
// audit log) and on a controller that did not go through its objects, and
// prints the figures (docs/reliability.md, Steady-state audit).
func TestSteadyStateAudit(t *testing.T) {
	audit.SkipUnlessOn(t)
	start := time.Now()
	tc := installed(t, clusterOpts{}, 2)
	g := NewWithT(t)
	// The install wrote: the log tells the managers' requests.
	g.Expect(audit.CheckWrites(start, bootstrapAgent, controlPlaneAgent)).To(Succeed())

	settled, err := audit.Settle(15*time.Second, 3*time.Minute, ours)
	g.Expect(err).NotTo(HaveOccurred(), "the cluster does not settle")
	t.Logf("settled %s after Available", settled.Round(time.Second))

	r, err := audit.Watch(envtest.AuditWindow, ours)
	g.Expect(err).NotTo(HaveOccurred())
	envtest.PrintAuditReport(t, r.Report("bootstrap and control plane", "the managers",
		"namespace "+tc.ns+" (3 control-plane + 2 worker Machines)"))

	g.Expect(r.Idle("openshiftassistedcontrolplane", "openshiftassistedconfig", "agent")).To(BeEmpty(),
		"controllers that did not resync in the window")
	g.Expect(r.Tally.Writes).To(BeEmpty(), "API writes in the steady state")
}
