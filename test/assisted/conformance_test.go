package assisted

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"

	aiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/agentinstall/v1beta1"
	hivev1 "github.com/ocp-capi/ocp-capi/internal/consumed/hive/v1"
	hiveextv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/hiveext/v1beta1"
)

// The conformance tests hold model.go and the behaviour tables of
// docs/assisted-simulator.md to each other, both ways: each row is produced
// by the model for a fixture, and whatever the model produces over a
// generated set of inputs is a row. The tables carry the upstream place of
// each row, so a change to the model without its row (or the reverse)
// fails here.

const docPath = "../../docs/assisted-simulator.md"

// mdTable is one markdown table of the doc, under its "### " heading.
type mdTable struct {
	heading string
	rows    [][]string // cells, header and separator excluded
	lines   []int
}

func docTables(t *testing.T) []mdTable {
	t.Helper()
	f, err := os.Open(docPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []mdTable
	heading, inTable, n := "", false, 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if h, ok := strings.CutPrefix(line, "### "); ok {
			heading = h
		}
		if !strings.HasPrefix(line, "|") {
			inTable = false
			continue
		}
		if !inTable {
			// The header row opens a table; the separator follows.
			inTable = true
			out = append(out, mdTable{heading: heading})
			continue
		}
		if strings.HasPrefix(line, "|---") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		tb := &out[len(out)-1]
		tb.rows = append(tb.rows, cells)
		tb.lines = append(tb.lines, n)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// table is the index-th table under heading, its rows checked for width.
func table(t *testing.T, heading string, index, width int) mdTable {
	t.Helper()
	i := 0
	for _, tb := range docTables(t) {
		if tb.heading != heading {
			continue
		}
		if i == index {
			for r, row := range tb.rows {
				if len(row) != width {
					t.Fatalf("%s:%d: %d cells, want %d", docPath, tb.lines[r], len(row), width)
				}
			}
			if len(tb.rows) == 0 {
				t.Fatalf("table %d under %q is empty", index, heading)
			}
			return tb
		}
		i++
	}
	t.Fatalf("%s: no table %d under %q", docPath, index, heading)
	return mdTable{}
}

var backticked = regexp.MustCompile("`([^`]*)`")

// vals are the backticked values of a cell (`""` is the empty value).
func vals(t *testing.T, cell string) []string {
	t.Helper()
	var out []string
	for _, m := range backticked.FindAllStringSubmatch(cell, -1) {
		v := m[1]
		if v == `""` {
			v = ""
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		t.Fatalf("cell %q has no backticked value", cell)
	}
	return out
}

func val(t *testing.T, cell string) string {
	t.Helper()
	v := vals(t, cell)
	if len(v) != 1 {
		t.Fatalf("cell %q: want one value, got %q", cell, v)
	}
	return v[0]
}

// upstreamPlace: each row names a file inside assisted-service.
var upstreamPlace = regexp.MustCompile(`(internal|api|models)/[a-z0-9_/]+\.go`)

func checkUpstream(t *testing.T, tb mdTable, col int) {
	t.Helper()
	for i, row := range tb.rows {
		if !upstreamPlace.MatchString(row[col]) {
			t.Errorf("%s:%d: no assisted-service file in the upstream column %q", docPath, tb.lines[i], row[col])
		}
	}
}

// constants are the package's string constants whose names start with
// prefix, by value, read from its sources: the model's vocabulary.
func constants(t *testing.T, prefix string) []string {
	t.Helper()
	return constantsIn(t, ".", prefix)
}

// clusterStates are the cluster states the simulator enters: assisted-service's
// (hiveextv1beta1.State*, read from their source) but the unknownStates.
func clusterStates(t *testing.T) []string {
	t.Helper()
	all := constantsIn(t, filepath.Join("..", "..", "internal", "consumed", "hiveext", "v1beta1"), "State")
	return slices.DeleteFunc(all, func(s string) bool { return slices.Contains(unknownStates, s) })
}

// constantsIn is constants for the package in dir.
func constantsIn(t *testing.T, dir, prefix string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, id := range vs.Names {
					if !strings.HasPrefix(id.Name, prefix) || i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					v, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					out = append(out, v)
				}
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("no constants %s* in the package", prefix)
	}
	return out
}

// expand replaces * by all.
func expand(values, all []string) []string {
	var out []string
	for _, v := range values {
		if v == "*" {
			out = append(out, all...)
		} else {
			out = append(out, v)
		}
	}
	return out
}

// unknownStates stand for the cluster states upstream has and the
// simulator never enters (the * of the cluster table's from column).
var unknownStates = []string{"cancelled", "installing-pending-user-action"}

// --- fixtures ---

func hostsIn(n int, state string, stage aiv1beta1.HostStage) []host {
	out := make([]host, n)
	for i := range out {
		out[i] = host{name: fmt.Sprintf("h%d", i), state: state, stage: stage, role: aiv1beta1.HostRoleAutoAssign, approved: true}
	}
	return out
}

// base: three control-plane hosts, known and approved, exactly what the
// cluster requires.
func base() facts {
	return facts{want: hiveextv1beta1.ProvisionRequirements{ControlPlaneAgents: 3}, hosts: hostsIn(3, HostKnown, "")}
}

// clusterFixture is an input under which rule applies in state from.
func clusterFixture(t *testing.T, from, rule string) facts {
	t.Helper()
	f := base()
	switch rule {
	case ruleRegistered, ruleValidationsPass, ruleRequirementsMet, ruleUnknownStateKept, ruleAddingHosts:
	case ruleImported, ruleDay2:
		f.cdInstalled = true
	case ruleValidationsFail:
		f.hosts[0].state = HostDiscovering
	case ruleHeld:
		f.held = true
	case ruleRequirementsUnmet:
		f.want.WorkerAgents = 2
	case ruleOnHold:
		f.holdInstallation = true
	case ruleHostsPreparing:
		f.hosts = hostsIn(3, HostPreparingForInstallation, "")
	case ruleHostsPrepared:
		f.hosts = hostsIn(3, HostPreparingSuccessful, "")
	case ruleHostsInstalling:
		f.hosts = hostsIn(3, HostInstalling, stageStarting)
	case ruleEnoughInstalled, ruleHostsDone:
		f.hosts = hostsIn(3, HostInstalled, stageDone)
	case ruleFinalizing:
		// Three control-plane hosts and two of three workers installed:
		// enough to finalize, not yet done.
		f.want.WorkerAgents = 3
		f.hosts = hostsIn(6, HostInstalled, stageDone)
		f.hosts[5].state, f.hosts[5].stage = HostInstallingInProgress, stageRebooting
	case ruleMetadataPending:
		f.hosts = hostsIn(3, HostInstalled, stageDone)
	case ruleFailure, ruleFailedStays:
		f.failure = "injected"
	case ruleReset:
		f.hosts = hostsIn(3, HostError, stageRebooting)
	default:
		t.Fatalf("no fixture for rule %q", rule)
	}
	return f
}

// generatedFacts are the inputs the reverse checks drive the model with:
// host sets of every state, stage, size, role and approval, alone and mixed,
// under every provision requirement and knob.
func generatedFacts(t *testing.T, small bool) []facts {
	t.Helper()
	hostStates := append(constants(t, "Host"), "")
	stages := append(constants(t, "stage"), "")
	sizes := []int{1, 3, 5}
	if small {
		hostStates = []string{HostDiscovering, HostKnown, HostInstalled}
		stages = []string{""}
		sizes = []int{3, 5}
	}
	var sets [][]host
	sets = append(sets, nil)
	for _, n := range sizes {
		for _, s := range hostStates {
			for _, st := range stages {
				for variant := range 8 {
					if variant != 0 && st != "" {
						// Roles, approvals and sync vary at one stage:
						// stages matter to few states.
						continue
					}
					hs := hostsIn(n, s, aiv1beta1.HostStage(st))
					if variant&1 != 0 { // explicit roles
						for i := range hs {
							hs[i].role = aiv1beta1.HostRoleWorker
							if i < 3 {
								hs[i].role = aiv1beta1.HostRoleMaster
							}
						}
					}
					if variant&2 != 0 {
						hs[n-1].approved = false
					}
					if variant&4 != 0 {
						hs[0].unsynced = true
					}
					sets = append(sets, hs)
				}
			}
		}
	}
	if !small {
		// Mixed: three hosts in one state, two in another.
		for _, a := range hostStates {
			for _, b := range hostStates {
				for _, st := range []aiv1beta1.HostStage{"", stageWriting, stageRebooting} {
					hs := hostsIn(5, a, st)
					hs[3].state, hs[4].state = b, b
					sets = append(sets, hs)
				}
			}
		}
	}
	wants := []hiveextv1beta1.ProvisionRequirements{
		{ControlPlaneAgents: 3}, {ControlPlaneAgents: 3, WorkerAgents: 2}, {ControlPlaneAgents: 1},
		{ControlPlaneAgents: 2}, {ControlPlaneAgents: 3, ArbiterAgents: 1}, {},
	}
	var out []facts
	for _, hs := range sets {
		for _, w := range wants {
			for flags := range 32 {
				f := facts{hosts: hs, want: w, holdInstallation: flags&1 != 0, cdInstalled: flags&2 != 0,
					held: flags&4 != 0, prepared: flags&8 != 0}
				if flags&16 != 0 {
					f.failure = "injected"
				}
				out = append(out, f)
			}
		}
	}
	return out
}

// --- cluster transitions ---

type clusterRow struct {
	froms    []string
	rule, to string
	line     int
}

func clusterRows(t *testing.T) []clusterRow {
	tb := table(t, "Cluster transitions", 0, 4)
	checkUpstream(t, tb, 3)
	var out []clusterRow
	for i, r := range tb.rows {
		out = append(out, clusterRow{froms: vals(t, r[0]), rule: val(t, r[1]), to: val(t, r[2]), line: tb.lines[i]})
	}
	return out
}

func TestClusterTransitionsTable(t *testing.T) {
	t.Parallel()
	rows := clusterRows(t)
	states := clusterStates(t)

	// Rules: the table's are the model's, no more, no less.
	rules := constants(t, "rule")
	inTable := map[string]bool{}
	for _, r := range rows {
		inTable[r.rule] = true
		if !slices.Contains(rules, r.rule) {
			t.Errorf("%s:%d: rule %q is no rule* constant of the model", docPath, r.line, r.rule)
		}
	}
	for _, r := range rules {
		if !inTable[r] {
			t.Errorf("rule %q of model.go is in no row of the cluster transitions table", r)
		}
	}

	// Rows → model: each row happens for its fixture.
	for _, r := range rows {
		for _, from := range r.froms {
			froms := []string{from}
			if from == "*" {
				froms = unknownStates
			} else if from != "" && !slices.Contains(states, from) {
				t.Errorf("%s:%d: %q is no cluster state of the simulator", docPath, r.line, from)
				continue
			}
			for _, from := range froms {
				want := r.to
				if want == "=" {
					want = from
				}
				got, rule := nextState(from, clusterFixture(t, from, r.rule))
				if got != want || rule != r.rule {
					t.Errorf("%s:%d: from %q the %s fixture gives %q by %q, want %q by %q",
						docPath, r.line, from, r.rule, got, rule, want, r.rule)
				}
			}
		}
	}

	// Model → rows: every step over the generated inputs is a row.
	type step struct{ from, rule, to string }
	tabled := map[step]bool{}
	for _, r := range rows {
		for _, from := range r.froms {
			tabled[step{from, r.rule, r.to}] = true
		}
	}
	seen := map[step]int{}
	generated := generatedFacts(t, false)
	for _, from := range append(append([]string{""}, states...), unknownStates...) {
		key := from
		if from != "" && !slices.Contains(states, from) {
			key = "*"
		}
		for _, f := range generated {
			to, rule := nextState(from, f)
			s := step{key, rule, to}
			if to == from {
				if tabled[step{key, rule, "="}] {
					s.to = "="
				}
			}
			if !tabled[s] {
				if seen[s] == 0 {
					t.Errorf("the model steps %q → %q by %q (e.g. %+v): no row of the cluster transitions table", from, to, rule, f)
				}
			}
			seen[s]++
		}
	}
	// Every row is reached by the generated inputs too (the fixtures are
	// not the only way to it).
	for s := range tabled {
		if seen[s] == 0 {
			t.Errorf("row %s → %s by %s: never produced by the generated inputs", s.from, s.to, s.rule)
		}
	}
}

// --- host transitions ---

type hostRow struct {
	clusters, hosts []string
	stage, when     string
	to, toStage     string
	line            int
}

func hostRows(t *testing.T) []hostRow {
	tb := table(t, "Host transitions", 0, 7)
	checkUpstream(t, tb, 6)
	var out []hostRow
	for i, r := range tb.rows {
		out = append(out, hostRow{clusters: vals(t, r[0]), hosts: vals(t, r[1]), stage: val(t, r[2]), when: val(t, r[3]),
			to: val(t, r[4]), toStage: val(t, r[5]), line: tb.lines[i]})
	}
	return out
}

func approvals(t *testing.T, when string, line int) []bool {
	t.Helper()
	switch when {
	case "any":
		return []bool{true, false}
	case "approved":
		return []bool{true}
	case "not approved":
		return []bool{false}
	}
	t.Fatalf("%s:%d: when %q: want any, approved or not approved", docPath, line, when)
	return nil
}

func (r hostRow) matches(cluster string, h host) bool {
	if !slices.Contains(r.clusters, cluster) || !slices.Contains(r.hosts, h.state) {
		return false
	}
	if r.stage != "*" && r.stage != string(h.stage) {
		return false
	}
	return r.when == "any" || (r.when == "approved") == h.approved
}

func (r hostRow) want(h host) (string, aiv1beta1.HostStage) {
	state, stage := r.to, aiv1beta1.HostStage(r.toStage)
	if state == "=" {
		state = h.state
	}
	if r.toStage == "=" {
		stage = h.stage
	}
	return state, stage
}

func TestHostTransitionsTable(t *testing.T) {
	rows := hostRows(t)
	clusterStates := clusterStates(t)
	hostStates := append(constants(t, "Host"), "")
	stages := append(constants(t, "stage"), "")

	// Rows → model.
	for _, r := range rows {
		rowStages := []string{r.stage}
		if r.stage == "*" {
			rowStages = stages
		}
		for _, c := range r.clusters {
			if !slices.Contains(clusterStates, c) {
				t.Errorf("%s:%d: %q is no cluster state", docPath, r.line, c)
			}
			for _, hs := range r.hosts {
				if !slices.Contains(hostStates, hs) {
					t.Errorf("%s:%d: %q is no host state", docPath, r.line, hs)
				}
				for _, st := range rowStages {
					for _, approved := range approvals(t, r.when, r.line) {
						h := host{name: "h", state: hs, stage: aiv1beta1.HostStage(st), approved: approved}
						wantState, wantStage := r.want(h)
						if s, g := nextHost(c, h); s != wantState || g != wantStage {
							t.Errorf("%s:%d: cluster %q, host %q/%q approved %t: model gives %q/%q, row %q/%q",
								docPath, r.line, c, hs, st, approved, s, g, wantState, wantStage)
						}
					}
				}
			}
		}
	}

	// Model → rows: every move (a change of state or stage) is a row; a
	// host no row matches keeps both. nextHost sees the cluster's next
	// state, which is never "".
	for _, c := range clusterStates {
		for _, hs := range hostStates {
			for _, st := range stages {
				for _, approved := range []bool{true, false} {
					h := host{name: "h", state: hs, stage: aiv1beta1.HostStage(st), approved: approved}
					s, g := nextHost(c, h)
					var matched []hostRow
					for _, r := range rows {
						if r.matches(c, h) {
							matched = append(matched, r)
						}
					}
					if len(matched) > 1 {
						t.Errorf("cluster %q, host %q/%q approved %t: rows %d and %d both apply", c, hs, st, approved,
							matched[0].line, matched[1].line)
					}
					if (s != hs || g != h.stage) && len(matched) == 0 {
						t.Errorf("cluster %q, host %q/%q approved %t: the model moves it to %q/%q, no row says so",
							c, hs, st, approved, s, g)
					}
				}
			}
		}
	}
}

// --- state info ---

func TestStateInfoTables(t *testing.T) {
	clusterStates := clusterStates(t)
	tb := table(t, "State info", 0, 4)
	checkUpstream(t, tb, 3)
	covered := map[string]bool{}
	for i, r := range tb.rows {
		when, want := val(t, r[1]), val(t, r[2])
		for _, s := range vals(t, r[0]) {
			covered[s] = true
			var fs []facts
			for _, prepared := range []bool{true, false} {
				if when == "any" || (when == "prepared") == prepared {
					fs = append(fs, facts{prepared: prepared, failure: "injected"})
				}
			}
			if len(fs) == 0 {
				t.Fatalf("%s:%d: when %q: want any, prepared or not prepared", docPath, tb.lines[i], when)
			}
			for _, f := range fs {
				w := strings.ReplaceAll(want, "<failure>", f.failure)
				if got := clusterStateInfo(s, f); got != w {
					t.Errorf("%s:%d: %q (prepared %t): model %q, row %q", docPath, tb.lines[i], s, f.prepared, got, w)
				}
			}
		}
	}
	for _, s := range clusterStates {
		if !covered[s] {
			t.Errorf("cluster state %q has no state info row", s)
		}
	}

	hostStates := constants(t, "Host")
	stages := constants(t, "stage")
	tb = table(t, "State info", 1, 3)
	checkUpstream(t, tb, 2)
	covered = map[string]bool{}
	for i, r := range tb.rows {
		want := val(t, r[1])
		for _, s := range vals(t, r[0]) {
			if covered[s] {
				t.Errorf("%s:%d: host state %q has two rows", docPath, tb.lines[i], s)
			}
			covered[s] = true
			for _, st := range stages {
				if got, w := hostStateInfo(s, aiv1beta1.HostStage(st)), strings.ReplaceAll(want, "<stage>", st); got != w {
					t.Errorf("%s:%d: %q at %q: model %q, row %q", docPath, tb.lines[i], s, st, got, w)
				}
			}
		}
	}
	for _, s := range hostStates {
		if !covered[s] {
			t.Errorf("host state %q has no state info row", s)
		}
	}
}

// --- conditions ---

type condRow struct {
	states                             []string
	when, typ, status, reason, message string
	line                               int
}

func condRows(t *testing.T, heading string, all []string) []condRow {
	tb := table(t, heading, 0, 7)
	checkUpstream(t, tb, 6)
	var out []condRow
	for i, r := range tb.rows {
		out = append(out, condRow{states: expand(vals(t, r[0]), all), when: val(t, r[1]), typ: val(t, r[2]),
			status: val(t, r[3]), reason: val(t, r[4]), message: val(t, r[5]), line: tb.lines[i]})
	}
	return out
}

// messagePattern: the row's message with its placeholders filled in and
// %d a number.
func messagePattern(msg string, fill map[string]string) *regexp.Regexp {
	p := regexp.QuoteMeta(msg)
	for k, v := range fill {
		p = strings.ReplaceAll(p, regexp.QuoteMeta(k), regexp.QuoteMeta(v))
	}
	p = "^" + strings.ReplaceAll(p, "%d", `\d+`) + "$"
	patternsMu.Lock()
	defer patternsMu.Unlock()
	if re, ok := patterns[p]; ok {
		return re
	}
	patterns[p] = regexp.MustCompile(p)
	return patterns[p]
}

// patterns caches the compiled message patterns: the reverse checks match
// the same few thousand times over.
var (
	patterns   = map[string]*regexp.Regexp{}
	patternsMu sync.Mutex
)

func (r condRow) is(typ, status, reason, message string, fill map[string]string) bool {
	return r.typ == typ && r.status == status && r.reason == reason && messagePattern(r.message, fill).MatchString(message)
}

// installFixtures are the facts under which when holds in state ready (the
// inputs the AgentClusterInstall rows choose by).
func installFixtures(t *testing.T, when string, line int) []facts {
	t.Helper()
	f := base()
	switch when {
	case "counts differ":
		f.want.WorkerAgents = 2
	case "unsynced agents":
		f.hosts[0].unsynced = true
	case "unapproved agents":
		f.hosts[2].approved = false
	case "requirements met", "not holdInstallation", "not prepared":
	case "holdInstallation":
		f.holdInstallation = true
	case "prepared":
		f.prepared = true
	case "any":
		var out []facts
		for _, w := range []string{"counts differ", "unsynced agents", "unapproved agents", "requirements met", "holdInstallation", "prepared"} {
			out = append(out, installFixtures(t, w, line)...)
		}
		g := base()
		g.hosts[1].state = HostDiscovering
		g.failure, g.cdInstalled = "injected", true
		return append(out, g)
	default:
		t.Fatalf("%s:%d: no fixture for when %q", docPath, line, when)
	}
	return []facts{f}
}

func installFill(state string, f facts) map[string]string {
	return map[string]string{"<stateInfo>": clusterStateInfo(state, f), "<validations>": strings.Join(validationFailures(f), ",")}
}

func findInstallCond(conds []hivev1.ClusterInstallCondition, typ string) *hivev1.ClusterInstallCondition {
	for i := range conds {
		if string(conds[i].Type) == typ {
			return &conds[i]
		}
	}
	return nil
}

func TestAgentClusterInstallConditionsTable(t *testing.T) {
	t.Parallel()
	states := clusterStates(t)
	rows := condRows(t, "AgentClusterInstall conditions", states)

	// Rows → model.
	for _, r := range rows {
		for _, s := range r.states {
			if !slices.Contains(states, s) {
				t.Errorf("%s:%d: %q is no cluster state", docPath, r.line, s)
				continue
			}
			for _, f := range installFixtures(t, r.when, r.line) {
				c := findInstallCond(installConditions(s, f), r.typ)
				switch {
				case c == nil:
					t.Errorf("%s:%d: in %q the model writes no %s", docPath, r.line, s, r.typ)
				case !r.is(string(c.Type), string(c.Status), c.Reason, c.Message, installFill(s, f)):
					t.Errorf("%s:%d: in %q (%s) the model writes %s %s %q %q", docPath, r.line, s, r.when,
						c.Type, c.Status, c.Reason, c.Message)
				}
			}
		}
	}

	// Model → rows, and the same condition types in every state.
	types := map[string]bool{}
	for _, r := range rows {
		types[r.typ] = true
	}
	checked := map[string]bool{}
	generated := generatedFacts(t, true)
	for _, s := range states {
		for _, f := range generated {
			conds := installConditions(s, f)
			if len(conds) != len(types) {
				t.Fatalf("in %q the model writes %d conditions, the table has %d types", s, len(conds), len(types))
			}
			fill := installFill(s, f)
			for _, c := range conds {
				key := strings.Join([]string{s, string(c.Type), string(c.Status), c.Reason, c.Message,
					fill["<stateInfo>"], fill["<validations>"]}, "\x00")
				if checked[key] {
					continue
				}
				checked[key] = true
				ok := false
				for _, r := range rows {
					if slices.Contains(r.states, s) && r.is(string(c.Type), string(c.Status), c.Reason, c.Message, fill) {
						ok = true
						break
					}
				}
				if !ok {
					t.Fatalf("in %q the model writes %s %s %q %q (facts %+v): no row", s, c.Type, c.Status, c.Reason, c.Message, f)
				}
			}
		}
	}
}

func findAgentCond(conds []aiv1beta1.Condition, typ string) *aiv1beta1.Condition {
	for i := range conds {
		if string(conds[i].Type) == typ {
			return &conds[i]
		}
	}
	return nil
}

func TestAgentConditionsTable(t *testing.T) {
	hostStates := constants(t, "Host")
	stages := append(constants(t, "stage"), "")
	rows := condRows(t, "Agent conditions", hostStates)
	fill := func(state, stage string) map[string]string {
		return map[string]string{"<stateInfo>": hostStateInfo(state, aiv1beta1.HostStage(stage))}
	}

	// Rows → model.
	for _, r := range rows {
		for _, s := range r.states {
			if !slices.Contains(hostStates, s) {
				t.Errorf("%s:%d: %q is no host state", docPath, r.line, s)
				continue
			}
			for _, approved := range approvals(t, r.when, r.line) {
				for _, st := range stages {
					c := findAgentCond(agentConditions(s, approved, hostStateInfo(s, aiv1beta1.HostStage(st))), r.typ)
					switch {
					case c == nil:
						t.Errorf("%s:%d: in %q the model sets no %s", docPath, r.line, s, r.typ)
					case !r.is(string(c.Type), string(c.Status), c.Reason, c.Message, fill(s, st)):
						t.Errorf("%s:%d: in %q (approved %t) the model sets %s %s %q %q", docPath, r.line, s, approved,
							c.Type, c.Status, c.Reason, c.Message)
					}
				}
			}
		}
	}

	// Model → rows.
	types := map[string]bool{}
	for _, r := range rows {
		types[r.typ] = true
	}
	for _, s := range hostStates {
		for _, approved := range []bool{true, false} {
			for _, st := range stages {
				conds := agentConditions(s, approved, hostStateInfo(s, aiv1beta1.HostStage(st)))
				if len(conds) != len(types) {
					t.Fatalf("in %q the model sets %d conditions, the table has %d types", s, len(conds), len(types))
				}
				for _, c := range conds {
					ok := false
					for _, r := range rows {
						if slices.Contains(r.states, s) && (r.when == "any" || (r.when == "approved") == approved) &&
							r.is(string(c.Type), string(c.Status), c.Reason, c.Message, fill(s, st)) {
							ok = true
							break
						}
					}
					if !ok {
						t.Errorf("in %q (approved %t) the model sets %s %s %q %q: no row", s, approved, c.Type, c.Status, c.Reason, c.Message)
					}
				}
			}
		}
	}
}

// --- behaviour ---

func installCondition(t *testing.T, state string, f facts, typ string) hivev1.ClusterInstallCondition {
	t.Helper()
	c := findInstallCond(installConditions(state, f), typ)
	if c == nil {
		t.Fatalf("no %s in %q", typ, state)
	}
	return *c
}

// TestReadyWaitsForAgents: with the control plane known and approved and the
// workers not registered yet, the validations pass, so the cluster sits in
// ready (not insufficient) with RequirementsMet False for the missing
// Agents; an unapproved Agent keeps it there too; it starts once the counts
// are met and every Agent is approved.
func TestReadyWaitsForAgents(t *testing.T) {
	f := base()
	f.want.WorkerAgents = 2

	state, rule := nextState(hiveextv1beta1.StateInsufficient, f)
	if state != hiveextv1beta1.StateReady || rule != ruleValidationsPass {
		t.Fatalf("control plane known, workers missing: %q by %q, want ready", state, rule)
	}
	state, rule = nextState(state, f)
	if state != hiveextv1beta1.StateReady || rule != ruleRequirementsUnmet {
		t.Fatalf("ready with workers missing: %q by %q, want ready by %s", state, rule, ruleRequirementsUnmet)
	}
	c := installCondition(t, state, f, "RequirementsMet")
	want := "The cluster currently requires exactly 3 master agents, 0 arbiter agents and 2 worker agents, " +
		"but currently registered 3 master agents, 0 arbiter agents and 0 worker agents"
	if c.Status != corev1.ConditionFalse || c.Reason != "InsufficientAgents" || c.Message != want {
		t.Errorf("RequirementsMet: %s %s %q", c.Status, c.Reason, c.Message)
	}
	if v := installCondition(t, state, f, "Validated"); v.Status != corev1.ConditionTrue {
		t.Errorf("Validated: %s %s", v.Status, v.Reason)
	}

	// The workers register and are known; one is not approved yet.
	f.hosts = append(f.hosts, hostsIn(5, HostKnown, "")[3:]...)
	f.hosts[4].approved = false
	if state, rule = nextState(state, f); state != hiveextv1beta1.StateReady || rule != ruleRequirementsUnmet {
		t.Fatalf("one Agent unapproved: %q by %q, want ready", state, rule)
	}
	c = installCondition(t, state, f, "RequirementsMet")
	if c.Status != corev1.ConditionFalse || c.Reason != "UnapprovedAgents" ||
		c.Message != "The installation is pending on the approval of 1 agents" {
		t.Errorf("RequirementsMet: %s %s %q", c.Status, c.Reason, c.Message)
	}

	f.hosts[4].approved = true
	if state, rule = nextState(state, f); state != hiveextv1beta1.StatePreparingForInstallation || rule != ruleRequirementsMet {
		t.Fatalf("all approved: %q by %q, want preparing-for-installation", state, rule)
	}
}

// TestReadyWithPreparingHostsRecovers: a ready cluster whose hosts are
// preparing (its own move to preparing-for-installation was lost: the
// Agents were written, the AgentClusterInstall was not) does not wait for
// ever on "pending on the approval": the hosts are known again, as
// upstream's host refresh has it, and the installation starts.
func TestReadyWithPreparingHostsRecovers(t *testing.T) {
	for _, preparing := range []string{HostPreparingForInstallation, HostPreparingSuccessful} {
		t.Run(preparing, func(t *testing.T) {
			f := base()
			f.hosts = hostsIn(3, preparing, "")
			states := run(t, hiveextv1beta1.StateReady, &f, hiveextv1beta1.StateInstalling, nil)
			want := []string{hiveextv1beta1.StateReady, hiveextv1beta1.StatePreparingForInstallation, hiveextv1beta1.StateInstalling}
			if !slices.Equal(states, want) {
				t.Errorf("states %v, want %v", states, want)
			}
		})
	}
}

// run steps a cluster as install.go does (hosts move with the cluster's
// next state, the ClusterDeployment is installed with the installed state,
// prepared read back from the conditions written) and returns the states
// it went through.
func run(t *testing.T, state string, f *facts, until string, each func(state string)) []string {
	t.Helper()
	var states []string
	for range 50 {
		next, _ := nextState(state, *f)
		for i := range f.hosts {
			f.hosts[i].state, f.hosts[i].stage = nextHost(next, f.hosts[i])
		}
		if next == hiveextv1beta1.StateInstalled {
			f.cdInstalled = true
		}
		f.prepared = preparedBefore(installConditions(next, *f))
		if len(states) == 0 || states[len(states)-1] != next {
			states = append(states, next)
		}
		state = next
		if each != nil {
			each(state)
		}
		if state == until {
			return states
		}
	}
	t.Fatalf("never reached %q: %v", until, states)
	return nil
}

func TestInstallRun(t *testing.T) {
	f := base()
	f.want.WorkerAgents = 2
	f.hosts = hostsIn(5, HostDiscovering, "")
	late := false
	states := run(t, "", &f, hiveextv1beta1.StateAddingHosts, func(state string) {
		if state == hiveextv1beta1.StateInstalling && !late {
			// A worker boots during the installation: refused until
			// the cluster takes day-2 hosts.
			late = true
			f.hosts = append(f.hosts, host{name: "late", state: HostDiscovering, role: aiv1beta1.HostRoleAutoAssign, approved: true})
		}
	})
	want := []string{hiveextv1beta1.StateInsufficient, hiveextv1beta1.StateReady, hiveextv1beta1.StatePreparingForInstallation, hiveextv1beta1.StateInstalling, hiveextv1beta1.StateFinalizing, hiveextv1beta1.StateInstalled, hiveextv1beta1.StateAddingHosts}
	if !slices.Equal(states, want) {
		t.Errorf("states %v, want %v", states, want)
	}
	for _, h := range f.hosts[:5] {
		if h.state != HostInstalled || h.stage != stageDone {
			t.Errorf("day-1 host %s: %s/%s", h.name, h.state, h.stage)
		}
	}
	if c := installCondition(t, hiveextv1beta1.StateAddingHosts, f, "Completed"); c.Message != "The installation has completed: Cluster is installed" {
		t.Errorf("Completed after a day-1 installation: %q", c.Message)
	}
	// The late worker registered with the move to adding-hosts, and is
	// added.
	if h := f.hosts[5]; h.state != HostKnown {
		t.Errorf("late host in adding-hosts: %s", h.state)
	}
	for range 3 {
		run(t, hiveextv1beta1.StateAddingHosts, &f, hiveextv1beta1.StateAddingHosts, nil)
	}
	if h := f.hosts[5]; h.state != HostAddedToExistingCluster || h.stage != stageDone {
		t.Errorf("late host: %s/%s, want added-to-existing-cluster", h.state, h.stage)
	}
}

// TestFailureAndReset: an injected failure waits for the installation, then
// fails it and its hosts; a release resets both.
func TestFailureAndReset(t *testing.T) {
	f := base()
	f.failure = "boom"
	states := run(t, hiveextv1beta1.StateReady, &f, hiveextv1beta1.StateError, nil)
	if want := []string{hiveextv1beta1.StatePreparingForInstallation, hiveextv1beta1.StateInstalling, hiveextv1beta1.StateError}; !slices.Equal(states, want) {
		t.Errorf("states %v, want %v", states, want)
	}
	for _, h := range f.hosts {
		if h.state != HostError {
			t.Errorf("host %s: %s, want error", h.name, h.state)
		}
	}
	if c := installCondition(t, hiveextv1beta1.StateError, f, "Failed"); c.Message != "The installation failed: boom" {
		t.Errorf("Failed: %q", c.Message)
	}
	f.failure = ""
	if states = run(t, hiveextv1beta1.StateError, &f, hiveextv1beta1.StateReady, nil); states[0] != hiveextv1beta1.StateInsufficient {
		t.Errorf("after the release: %v", states)
	}
	if c := installCondition(t, hiveextv1beta1.StateReady, f, condLastPreparationFailed); c.Reason != reasonPreparationOK {
		t.Errorf("a reset keeps the successful preparation: %q", c.Reason)
	}
}

// TestImportOnlyUnregistered: an installed ClusterDeployment is imported
// only when assisted-service has no cluster for it yet.
func TestImportOnlyUnregistered(t *testing.T) {
	f := base()
	f.cdInstalled = true
	if s, r := nextState("", f); s != hiveextv1beta1.StateAddingHosts || r != ruleImported {
		t.Errorf("new: %q by %q", s, r)
	}
	if c := installCondition(t, hiveextv1beta1.StateAddingHosts, f, "Completed"); c.Message != "The installation has completed: cluster is adding hosts to existing OCP cluster" {
		t.Errorf("imported Completed: %q", c.Message)
	}
	for _, s := range []string{hiveextv1beta1.StateInsufficient, hiveextv1beta1.StateReady} {
		if got, _ := nextState(s, f); got == hiveextv1beta1.StateAddingHosts {
			t.Errorf("from %q: imported", s)
		}
	}
}

// TestRuleConditions: the conditions of the rules that the tables name but
// cannot show, each just met and just missed.
func TestRuleConditions(t *testing.T) {
	with := func(f facts, edit func(*facts)) facts {
		f.hosts = slices.Clone(f.hosts)
		edit(&f)
		return f
	}
	cp3w3 := func(state string, stage aiv1beta1.HostStage) facts {
		f := base()
		f.want.WorkerAgents = 3
		f.hosts = hostsIn(6, state, stage)
		return f
	}
	discovering := func(f *facts) {
		f.hosts = append(f.hosts, host{name: "late", state: HostDiscovering, role: aiv1beta1.HostRoleAutoAssign})
	}
	for _, c := range []struct {
		name, from string
		f          facts
		want       string
	}{
		{"every host prepared", hiveextv1beta1.StatePreparingForInstallation, cp3w3(HostPreparingSuccessful, ""), ruleHostsPrepared},
		{"one host still preparing", hiveextv1beta1.StatePreparingForInstallation, with(cp3w3(HostPreparingSuccessful, ""), func(f *facts) {
			f.hosts[4].state = HostPreparingForInstallation
		}), ruleHostsPreparing},
		{"a refused registration does not count", hiveextv1beta1.StatePreparingForInstallation, with(cp3w3(HostPreparingSuccessful, ""), discovering), ruleHostsPrepared},
		{"every host installed", hiveextv1beta1.StateInstalling, cp3w3(HostInstalled, stageDone), ruleEnoughInstalled},
		{"a control-plane host not installed", hiveextv1beta1.StateInstalling, with(cp3w3(HostInstalled, stageDone), func(f *facts) {
			f.hosts[1].state, f.hosts[1].stage = HostInstallingInProgress, stageRebooting
		}), ruleHostsInstalling},
		{"two of three workers installed", hiveextv1beta1.StateInstalling, with(cp3w3(HostInstalled, stageDone), func(f *facts) {
			f.hosts[5].state, f.hosts[5].stage = HostInstallingInProgress, stageRebooting
		}), ruleEnoughInstalled},
		{"one of three workers installed", hiveextv1beta1.StateInstalling, with(cp3w3(HostInstalled, stageDone), func(f *facts) {
			for _, i := range []int{4, 5} {
				f.hosts[i].state, f.hosts[i].stage = HostInstallingInProgress, stageRebooting
			}
		}), ruleHostsInstalling},
		{"single node installed", hiveextv1beta1.StateInstalling, facts{want: hiveextv1beta1.ProvisionRequirements{ControlPlaneAgents: 1},
			hosts: hostsIn(1, HostInstalled, stageDone)}, ruleEnoughInstalled},
		{"a worker still installing", hiveextv1beta1.StateFinalizing, with(cp3w3(HostInstalled, stageDone), func(f *facts) {
			f.hosts[5].state, f.hosts[5].stage = HostInstallingInProgress, stageRebooting
		}), ruleFinalizing},
		{"every host done", hiveextv1beta1.StateFinalizing, with(cp3w3(HostInstalled, stageDone), discovering), ruleHostsDone},
		{"two control-plane hosts without an arbiter", hiveextv1beta1.StateInsufficient, facts{want: hiveextv1beta1.ProvisionRequirements{ControlPlaneAgents: 2},
			hosts: hostsIn(2, HostKnown, "")}, ruleValidationsFail},
		{"a single node with a worker", hiveextv1beta1.StateInsufficient, facts{want: hiveextv1beta1.ProvisionRequirements{ControlPlaneAgents: 1, WorkerAgents: 1},
			hosts: hostsIn(2, HostKnown, "")}, ruleValidationsFail},
		{"a host preparing counts as ready to install", hiveextv1beta1.StateInsufficient, with(base(), func(f *facts) {
			f.hosts[0].state = HostPreparingSuccessful
		}), ruleValidationsPass},
		{"an Agent with a spec error", hiveextv1beta1.StateReady, with(base(), func(f *facts) { f.hosts[0].unsynced = true }), ruleRequirementsUnmet},
		{"a failure before installing waits", hiveextv1beta1.StateReady, with(base(), func(f *facts) { f.failure = "boom" }), ruleRequirementsMet},
		{"held in ready still validates", hiveextv1beta1.StateReady, with(base(), func(f *facts) { f.held = true; discovering(f) }), ruleValidationsFail},
	} {
		if _, rule := nextState(c.from, c.f); rule != c.want {
			t.Errorf("%s: from %q by %q, want %q", c.name, c.from, rule, c.want)
		}
	}
}
