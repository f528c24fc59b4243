// Package chaos is what the storm scenarios of `make chaos` share: the
// result row each scenario appends to the file the target names, the one
// summary table the target prints from those rows, and the tally of the
// steps that the kills of a kill storm hit.
package chaos

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ResultsEnv names the file the scenarios append their rows to; unset, a
// scenario records nothing (it was run alone).
const ResultsEnv = "OCP_CAPI_CHAOS_RESULTS"

// Row is one scenario's line of the summary table.
type Row struct {
	// Scenario is the name `make chaos` expects (e.g. "kill storm").
	Scenario string `json:"scenario"`
	// Faults says what was injected and how often.
	Faults string `json:"faults"`
	// Objects says what was created and deleted.
	Objects string `json:"objects"`
	// Converge is the time from the last fault to every object Ready (and
	// from delete to gone).
	Converge string `json:"converge"`
	// Duplicates and Leftovers are counted through the API the resources
	// live in (OpenStack's, or the Kubernetes API server's).
	Duplicates int `json:"duplicates"`
	Leftovers  int `json:"leftovers"`
	// Result is "pass" or "FAIL".
	Result string `json:"result"`
	// Notes carries the scenario's other figures.
	Notes string `json:"notes,omitempty"`
}

// Record appends r to the file named by $OCP_CAPI_CHAOS_RESULTS, if set.
func Record(r Row) error {
	path := os.Getenv(ResultsEnv)
	if path == "" {
		return nil
	}
	return AppendRow(path, r)
}

// AppendRow appends r to path as one JSON line.
func AppendRow(path string, r Row) error {
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(data, '\n')); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// ReadRows reads the rows of path; a missing file is no rows.
func ReadRows(path string) ([]Row, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	var rows []Row
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for n := 1; sc.Scan(); n++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var r Row
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		rows = append(rows, r)
	}
	return rows, sc.Err()
}

// Table is the Markdown summary of rows. Every scenario in expect that
// has no row gets one that says so (it crashed or timed out before
// writing it), so a missing scenario cannot pass unnoticed; rows of other
// scenarios follow, in the order written.
func Table(rows []Row, expect []string) string {
	var b strings.Builder
	b.WriteString("| scenario | faults | objects | converge | duplicates | leftovers | result | notes |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	line := func(r Row) {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %d | %d | %s | %s |\n", cell(r.Scenario), cell(r.Faults), cell(r.Objects),
			cell(r.Converge), r.Duplicates, r.Leftovers, cell(r.Result), cell(r.Notes))
	}
	done := map[int]bool{}
	for _, s := range expect {
		found := false
		for i, r := range rows {
			if r.Scenario == s {
				line(r)
				done[i], found = true, true
			}
		}
		if !found {
			fmt.Fprintf(&b, "| %s | | | | | | **no result** | did not write its row (crashed or timed out); see its log |\n", cell(s))
		}
	}
	for i, r := range rows {
		if !done[i] {
			line(r)
		}
	}
	return b.String()
}

// Passed says whether every expected scenario wrote rows and all of them
// passed.
func Passed(rows []Row, expect []string) bool {
	for _, s := range expect {
		found := false
		for _, r := range rows {
			if r.Scenario == s {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	for _, r := range rows {
		if r.Result != "pass" {
			return false
		}
	}
	return true
}

func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}

// Steps counts, per step, the kills that hit an object in that step.
type Steps map[string]int

// Add counts one kill that found objects in the given steps; a step
// named twice (two machines in the same step) counts once.
func (s Steps) Add(steps ...string) {
	seen := map[string]bool{}
	for _, st := range steps {
		if !seen[st] {
			seen[st] = true
			s[st]++
		}
	}
}

// String lists the steps, most hit first, then by name.
func (s Steps) String() string {
	names := make([]string, 0, len(s))
	for n := range s {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		if s[names[i]] != s[names[j]] {
			return s[names[i]] > s[names[j]]
		}
		return names[i] < names[j]
	})
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s ×%d", n, s[n])
	}
	return strings.Join(parts, "; ")
}

var digits = regexp.MustCompile(`[0-9]+`)

// CreateStep is the step an object being created is at: the first of its
// step conditions (in order) that is not True, with its reason, or "done"
// when all are. An object with no condition yet is "not reconciled".
func CreateStep(kind string, conds []metav1.Condition, order []string) string {
	if len(conds) == 0 {
		return kind + ": not reconciled"
	}
	for _, typ := range order {
		c := findCondition(conds, typ)
		switch {
		case c == nil:
			return kind + ": " + typ + " not set"
		case c.Status != metav1.ConditionTrue:
			return kind + ": " + typ + " " + c.Reason
		}
	}
	return kind + ": done"
}

// DeleteStep is the step an object being deleted is at: its Deleting
// condition's message, numbers replaced by N so that "waiting for 3
// OpenStackMachine(s)" and "waiting for 2 ..." are one step.
func DeleteStep(kind string, conds []metav1.Condition) string {
	c := findCondition(conds, "Deleting")
	if c == nil || c.Status != metav1.ConditionTrue {
		return kind + ": deletion not started"
	}
	msg := c.Message
	if msg == "" {
		msg = c.Reason
	}
	return kind + ": " + digits.ReplaceAllString(msg, "N")
}

func findCondition(conds []metav1.Condition, typ string) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == typ {
			return &conds[i]
		}
	}
	return nil
}

// OpenStackStep is the step a kill hit as OpenStack shows it, which runs
// ahead of the conditions (they are written when a pass ends, and a
// killed pass writes none): while creating, the first resource of order
// that does not exist yet, then the servers; while deleting, the servers
// while any is left, then the first resource of order, last first, that
// still exists.
func OpenStackStep(deleting bool, present map[string]int, order []string, servers, wantServers int) string {
	if !deleting {
		for _, r := range order {
			if present[r] == 0 {
				return "OpenStack: creating " + r
			}
		}
		if servers < wantServers {
			return "OpenStack: creating servers"
		}
		return "OpenStack: all created"
	}
	if servers > 0 {
		return "OpenStack: deleting servers"
	}
	for i := len(order) - 1; i >= 0; i-- {
		if present[order[i]] > 0 {
			return "OpenStack: deleting " + order[i]
		}
	}
	return "OpenStack: all deleted"
}
