package openstack

import (
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

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
	// stormClusters are created and deleted at once in each round, each
	// with the kill storm's objects.
	stormClusters = 2
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

// TestFaultStorm creates two clusters at once, each with the kill storm's
// objects (managed network, load balancer endpoint, bastion; 3
// control-plane and 2 worker machines; a server with a root and a data
// volume), then deletes them all, once without faults and once with a
// fault storm at the OpenStack proxy. Both must converge (every object
// Ready, then gone), with exactly one of each OpenStack resource while
// they exist and nothing left afterwards; no
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
	clusters := make([]*stormObjects, 0, stormClusters)
	for i := range stormClusters {
		// A namespace each: waitReady counts the OpenStackServers of its own.
		o := &stormObjects{ns: newNamespace(t), name: fmt.Sprintf("%s-%d", name, i)}
		o.create(t)
		clusters = append(clusters, o)
	}
	for _, o := range clusters {
		o.waitReady(t)
	}
	row.ready = time.Since(start)
	// Exactly one of each: the clusters' resources, a server per machine,
	// bastion and extra server, a port, trunk and volume per name.
	for _, o := range clusters {
		row.duplicates += o.duplicates(t)
	}

	for _, o := range clusters {
		o.delete(t)
	}
	for _, o := range clusters {
		o.waitGone(t)
	}
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

	for _, o := range clusters {
		left := o.leftInOpenStack(t)
		row.leftovers += len(left)
		Expect(left).To(BeEmpty(), "%s: left in OpenStack", round)
		expectNoClusterLeftovers(t, o.ns, o.name)
	}
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
		Objects: fmt.Sprintf("%d clusters at once, each: managed network, load balancer, bastion, 3 control-plane + 2 worker machines, 1 server with 2 volumes; a calm round, then a faulted one", stormClusters)}
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
