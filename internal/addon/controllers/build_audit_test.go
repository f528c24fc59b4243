package controllers_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"

	osbuild "github.com/ocp-capi/ocp-capi/internal/addon/internal/osbuild"
	"github.com/ocp-capi/ocp-capi/test/envtest"
)

// buildAgent tells the BuildController's requests in the audit log.
const buildAgent = "addon-manager-build/audit"

// TestBuildSteadyStateAudit settles a pool driven by a MachineOSConfig
// whose build succeeded (the Build API backend, its stand-in playing the
// builder), then watches two sync periods of the BuildController's manager
// with --sync-period=1m. It fails on any write of the BuildController to
// the API server (its audit log) and on a window in which it did not go
// through the pool, and prints the figures (docs/reliability.md,
// Steady-state audit).
func TestBuildSteadyStateAudit(t *testing.T) {
	audit.SkipUnlessOn(t)
	h := newHarness(t, osbuild.BackendBuild)
	h.agent = buildAgent
	start := time.Now()
	h.inputs()
	config := h.machineConfigWith("a", []string{"quiet"})
	pool := h.pool("worker", config, false).Name
	h.machineOSConfig(pool, "RUN echo audited")
	h.start()
	build := h.waitBuildFor(pool, config)
	mosb := h.mosbFor(pool, config)
	h.setRunning(build)
	h.setSucceeded(build, digest('a'))
	h.mosbState(mosb.Name, osbuild.BuildStateSucceeded)
	h.waitCondition(pool, osbuild.ConditionBuildSuccess, osbuild.ReasonBuildSucceeded)
	h.g.Eventually(func() []string { return h.buildNames(pool) }).Should(BeEmpty())
	h.g.Eventually(func() []string { return h.configMapNames(pool) }).Should(BeEmpty())
	h.g.Eventually(func() string { return h.getMOSC(pool).Status.CurrentImagePullSpec }).Should(Equal(moscRepo + "@" + digest('a')))
	h.g.Expect(audit.CheckWrites(start, buildAgent)).To(Succeed())

	mine := envtest.ByAgent(buildAgent)
	settled, err := audit.Settle(15*time.Second, 3*time.Minute, mine)
	h.g.Expect(err).NotTo(HaveOccurred(), "the pool does not settle")
	t.Logf("settled %s after BuildSuccess", settled.Round(time.Second))

	r, err := audit.Watch(envtest.AuditWindow, mine)
	h.g.Expect(err).NotTo(HaveOccurred())
	envtest.PrintAuditReport(t, r.Report("BuildController", "the BuildController",
		"pool "+pool+" with MachineOSConfig and MachineOSBuild "+mosb.Name+" (Succeeded, Build API backend)"))

	h.g.Expect(r.Idle(buildControllerName)).To(BeEmpty(), "the BuildController did not go through the pool in the window")
	h.g.Expect(r.Tally.Writes).To(BeEmpty(), "API writes in the steady state")
}
