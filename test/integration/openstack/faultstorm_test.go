package openstack

import (
	"context"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	capiconditions "sigs.k8s.io/cluster-api/util/conditions"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/test/chaos"
	"github.com/ocp-capi/ocp-capi/test/openstackproxy"
)

// chaosEnv turns on the bounded storm scenarios that `make chaos` runs;
// they take minutes, so the ordinary suite skips them.
const chaosEnv = "OCP_CAPI_CHAOS"

// Fault storm parameters (issue 21): 10% of all requests, Keystone's
// included, get a fault, a third each: 429 with Retry-After, 503, and a
// dropped connection.
const (
	stormRate       = 0.10
	stormRetryAfter = 2 * time.Second
)

// stormRow is one line of the summary table.
type stormRow struct {
	round                     string
	calls, faults             int
	byKind                    map[openstackproxy.FaultKind]int
	ready, gone               time.Duration
	duplicates, leftovers     int
	earlyAfter429, retryGates int
}

// TestFaultStorm creates a cluster (managed network, load balancer
// endpoint, bastion) with three control-plane machines, then deletes it
// all, once without faults and once with a fault storm at the OpenStack
// proxy. Both must converge (every object Ready, then gone), with exactly
// one server per machine while they exist and nothing left afterwards; no
// request may reach a service inside the Retry-After of a 429 it answered.
// It prints a summary table; OCP_CAPI_TEST_SEED replays the faults.
func TestFaultStorm(t *testing.T) {
	if os.Getenv(chaosEnv) == "" {
		t.Skipf("a chaos scenario (minutes): `make chaos` runs it (%s=1)", chaosEnv)
	}
	RegisterTestingT(t)
	startManager(t)
	seed := testSeed(t)
	t.Logf("fault storm: seed %d (OCP_CAPI_TEST_SEED replays it)", seed)
	var rows []stormRow
	t.Cleanup(func() { recordFaultStorm(t, rows, seed) })
	rows = append(rows, stormRound(t, "no faults", fx.prefix+"-calm", 0, seed))
	rows = append(rows, stormRound(t, fmt.Sprintf("%.0f%% faults", stormRate*100), fx.prefix+"-storm", stormRate, seed))
	table := stormTable(rows)
	t.Logf("fault storm summary (seed %d):\n%s", seed, table)
	fmt.Printf("\nFAULT STORM SUMMARY (seed %d)\n%s\n", seed, table)
}

// stormRound runs one create-and-delete with faults at rate (0: none).
func stormRound(t *testing.T, round, name string, rate float64, seed int64) stormRow {
	t.Helper()
	ctx := context.Background()
	ns := newNamespace(t)
	row := stormRow{round: round}
	var rules []*openstackproxy.ActiveFault
	if rate > 0 {
		// Three rules tried in turn: p each gives 1-(1-p)^3 = rate in all.
		p := 1 - math.Pow(1-rate, 1.0/3)
		for i, f := range []openstackproxy.Fault{
			{Kind: openstackproxy.FaultRateLimit, RetryAfter: stormRetryAfter},
			{Kind: openstackproxy.FaultUnavailable},
			{Kind: openstackproxy.FaultDrop},
		} {
			f.Probability, f.Seed = p, seed+int64(i)
			rules = append(rules, proxy.AddFault(f))
		}
	}
	removeFaults := func() {
		for _, r := range rules {
			proxy.RemoveFault(r)
		}
		rules = nil
	}
	defer removeFaults()

	proxy.Reset()
	start := time.Now()
	spec := managedClusterSpec()
	spec.Bastion = bastionSpec("m1.tiny")
	c, osc := clusterObjects(t, ns, name, spec)
	var machines []*infrav1.OpenStackMachine
	for _, n := range []string{"cp-0", "cp-1", "cp-2"} {
		machines = append(machines, cpMachine(t, ns, name, name+"-"+n))
	}
	waitClusterReady(t, osc)
	markInfrastructureProvisioned(t, c) // CAPI core's copy, which the machines wait for
	for _, m := range machines {
		Eventually(func(g Gomega) {
			get(t, m)(g)
			g.Expect(capiconditions.IsTrue(m, infrav1.ReadyCondition)).To(BeTrue(), "machine %s: InstanceReady %s; APIServerIngressReady %s",
				m.Name, condition(m, infrav1.InstanceReadyCondition), condition(m, infrav1.APIServerIngressReadyCondition))
		}, 5*wait, 500*time.Millisecond).Should(Succeed())
	}
	row.ready = time.Since(start)

	// Exactly one of each: the cluster's resources, a server per machine
	// and for the bastion, a port per name.
	for kind, n := range clusterResourceCounts(t, ns, name) {
		if n > 1 {
			t.Errorf("%s: %d %s", round, n, kind)
			row.duplicates += n - 1
		}
	}
	names := map[string]int{}
	servers := 0
	for _, l := range leftovers(t, name) {
		kind, rest, _ := strings.Cut(l, " ")
		key, _, _ := strings.Cut(rest, " (")
		names[kind+" "+key]++
		if kind == "server" {
			servers++
		}
	}
	for k, n := range names {
		if n > 1 {
			t.Errorf("%s: %d of %s", round, n, k)
			row.duplicates += n - 1
		}
	}
	Expect(servers).To(Equal(len(machines)+1), "%s: servers %v", round, names)

	Expect(env.Client.Delete(ctx, osc)).To(Succeed())
	for _, m := range machines {
		Expect(env.Client.Delete(ctx, m)).To(Succeed())
	}
	for _, m := range machines {
		waitGone(t, m, 5*wait, func() string { return "machine " + m.Name + " Ready " + condition(m, infrav1.ReadyCondition) })
	}
	waitGone(t, osc, 5*wait, func() string { return "Deleting " + condition(osc, "Deleting") })
	row.gone = time.Since(start) - row.ready

	calls := proxy.Calls()
	removeFaults()
	row.calls = len(calls)
	row.byKind = map[openstackproxy.FaultKind]int{}
	for _, c := range calls {
		if c.Fault != "" {
			row.faults++
			row.byKind[c.Fault]++
		}
	}
	row.earlyAfter429, row.retryGates = earlyAfterRateLimit(calls, stormRetryAfter)
	Expect(row.earlyAfter429).To(BeZero(), "%s: requests inside a Retry-After window", round)

	left := leftovers(t, name)
	deadline := time.Now().Add(2 * time.Minute)
	for len(left) > 0 && time.Now().Before(deadline) {
		time.Sleep(time.Second)
		left = leftovers(t, name)
	}
	row.leftovers = len(left)
	Expect(left).To(BeEmpty(), "%s: left in OpenStack", round)
	expectNoClusterLeftovers(t, ns, name)
	return row
}

// earlyAfterRateLimit counts the requests that reached a service while a
// 429 it answered (with Retry-After) was in force, not counting those that
// were already on their way (arrived before the 429 was answered), and
// how many 429s there were.
func earlyAfterRateLimit(calls []openstackproxy.Call, retryAfter time.Duration) (early, gates int) {
	// The proxy sends whole seconds; a client may round its clock.
	const slack = 50 * time.Millisecond
	for _, g := range calls {
		if g.Fault != openstackproxy.FaultRateLimit {
			continue
		}
		gates++
		from := g.Time.Add(g.Duration + slack)
		until := g.Time.Add(retryAfter - slack)
		for _, c := range calls {
			if c.Service == g.Service && c.Time.After(from) && c.Time.Before(until) {
				early++
			}
		}
	}
	return early, gates
}

func stormTable(rows []stormRow) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| round | OpenStack calls | faults injected | create → all Ready | delete → gone | duplicates | leftovers | requests inside Retry-After |\n")
	fmt.Fprintf(&b, "|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		kinds := make([]string, 0, len(r.byKind))
		for k, n := range r.byKind {
			kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
		}
		sort.Strings(kinds)
		f := "0"
		if r.faults > 0 {
			f = fmt.Sprintf("%d (%s)", r.faults, strings.Join(kinds, ", "))
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %d | %d | %d (after %d 429s) |\n", r.round, r.calls, f,
			r.ready.Round(100*time.Millisecond), r.gone.Round(100*time.Millisecond), r.duplicates, r.leftovers, r.earlyAfter429, r.retryGates)
	}
	if len(rows) == 2 {
		fmt.Fprintf(&b, "\nextra calls the faults cost: %d (%+.0f%%)\n", rows[1].calls-rows[0].calls,
			100*float64(rows[1].calls-rows[0].calls)/float64(max(rows[0].calls, 1)))
	}
	return b.String()
}

// recordFaultStorm writes the storm's row of the summary table (test/chaos)
// from the rounds that finished: the faulted round against the calm one.
func recordFaultStorm(t *testing.T, rows []stormRow, seed int64) {
	row := chaos.Row{Scenario: "fault storm", Result: "pass",
		Objects: "1 cluster (managed network, load balancer, bastion), 3 control-plane machines; a calm round, then a faulted one"}
	if t.Failed() || len(rows) != 2 {
		row.Result = "FAIL"
	}
	if len(rows) == 2 {
		calm, storm := rows[0], rows[1]
		kinds := make([]string, 0, len(storm.byKind))
		for k, n := range storm.byKind {
			kinds = append(kinds, fmt.Sprintf("%d × %s", n, k))
		}
		sort.Strings(kinds)
		row.Faults = fmt.Sprintf("%.0f%% of OpenStack requests: %d (%s)", stormRate*100, storm.faults, strings.Join(kinds, ", "))
		row.Converge = fmt.Sprintf("create → Ready %s, delete → gone %s (calm: %s, %s)", storm.ready.Round(time.Second),
			storm.gone.Round(time.Second), calm.ready.Round(time.Second), calm.gone.Round(time.Second))
		row.Duplicates = calm.duplicates + storm.duplicates
		row.Leftovers = calm.leftovers + storm.leftovers
		row.Notes = fmt.Sprintf("seed %d; %d calls against %d calm (%+.0f%%); %d requests inside a Retry-After (after %d 429s)",
			seed, storm.calls, calm.calls, 100*float64(storm.calls-calm.calls)/float64(max(calm.calls, 1)), storm.earlyAfter429, storm.retryGates)
	}
	if err := chaos.Record(row); err != nil {
		t.Error(err)
	}
}
