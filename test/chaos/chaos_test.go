package chaos

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestRowsRoundTripAndTable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.jsonl")
	rows, err := ReadRows(path)
	if err != nil || rows != nil {
		t.Fatalf("a missing file is no rows: %v, %v", rows, err)
	}
	t.Setenv(ResultsEnv, path)
	want := []Row{
		{Scenario: "fault storm", Faults: "45 (19 × 429)", Objects: "1 cluster", Converge: "1m41s", Result: "pass"},
		{Scenario: "kill storm", Faults: "104 SIGKILL", Objects: "1 cluster | 6 machines", Duplicates: 1, Result: "FAIL", Notes: "a\nb"},
		{Scenario: "extra", Result: "pass"},
	}
	for _, r := range want {
		if err := Record(r); err != nil {
			t.Fatal(err)
		}
	}
	got, err := ReadRows(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("read %d rows, wrote %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("row %d: got %+v, want %+v", i, got[i], want[i])
		}
	}

	table := Table(got, []string{"kill storm", "fault storm", "API-server faults"})
	lines := strings.Split(strings.TrimSpace(table), "\n")
	if len(lines) != 2+4 {
		t.Fatalf("want header, separator and 4 rows:\n%s", table)
	}
	// Expected scenarios first, in the order asked, then the others.
	for i, prefix := range []string{"| kill storm |", "| fault storm |", "| API-server faults |", "| extra |"} {
		if !strings.HasPrefix(lines[2+i], prefix) {
			t.Errorf("line %d = %q, want prefix %q", 2+i, lines[2+i], prefix)
		}
	}
	if !strings.Contains(lines[4], "**no result**") {
		t.Errorf("a scenario without a row must say so: %q", lines[4])
	}
	// A | or a newline in a cell must not break the table.
	if strings.Count(lines[2], " | ") != strings.Count(lines[0], " | ") {
		t.Errorf("cells not escaped: %q", lines[2])
	}

	if Passed(got, []string{"fault storm"}) {
		t.Error("a FAIL row must fail the run")
	}
	if Passed(got[:1], []string{"fault storm", "kill storm"}) {
		t.Error("a missing scenario must fail the run")
	}
	if !Passed(got[:1], []string{"fault storm"}) {
		t.Error("all expected rows passed")
	}
}

func TestRecordWithoutFileIsANoop(t *testing.T) {
	t.Setenv(ResultsEnv, "")
	dir := t.TempDir()
	t.Chdir(dir)
	if err := Record(Row{Scenario: "x"}); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("wrote %v", entries)
	}
}

func TestReadRowsRefusesGarbage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r")
	if err := os.WriteFile(path, []byte("{\"scenario\":\"a\"}\nnot json\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadRows(path); err == nil || !strings.Contains(err.Error(), ":2:") {
		t.Errorf("want an error naming line 2, got %v", err)
	}
}

func TestSteps(t *testing.T) {
	s := Steps{}
	s.Add("machine: InstanceReady InstanceBuilding", "machine: InstanceReady InstanceBuilding", "cluster: done")
	s.Add("cluster: done")
	s.Add("server: PortsReady Pending")
	if s["machine: InstanceReady InstanceBuilding"] != 1 {
		t.Errorf("two machines in one step in one kill count once: %v", s)
	}
	if got, want := s.String(), "cluster: done ×2; machine: InstanceReady InstanceBuilding ×1; server: PortsReady Pending ×1"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestCreateAndDeleteStep(t *testing.T) {
	order := []string{"NetworkReady", "APIEndpointReady", "BastionReady"}
	cond := func(typ string, st metav1.ConditionStatus, reason string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: st, Reason: reason}
	}
	for _, tc := range []struct {
		conds []metav1.Condition
		want  string
	}{
		{nil, "cluster: not reconciled"},
		{[]metav1.Condition{cond("Ready", metav1.ConditionFalse, "NotReady")}, "cluster: NetworkReady not set"},
		{[]metav1.Condition{cond("NetworkReady", metav1.ConditionTrue, "Ready"), cond("APIEndpointReady", metav1.ConditionFalse, "LoadBalancerPending")},
			"cluster: APIEndpointReady LoadBalancerPending"},
		{[]metav1.Condition{cond("NetworkReady", metav1.ConditionTrue, "Ready"), cond("APIEndpointReady", metav1.ConditionTrue, "Ready"),
			cond("BastionReady", metav1.ConditionUnknown, "Pending")}, "cluster: BastionReady Pending"},
		{[]metav1.Condition{cond("NetworkReady", metav1.ConditionTrue, ""), cond("APIEndpointReady", metav1.ConditionTrue, ""),
			cond("BastionReady", metav1.ConditionTrue, "")}, "cluster: done"},
	} {
		if got := CreateStep("cluster", tc.conds, order); got != tc.want {
			t.Errorf("CreateStep(%v) = %q, want %q", tc.conds, got, tc.want)
		}
	}

	for _, tc := range []struct {
		conds []metav1.Condition
		want  string
	}{
		{nil, "cluster: deletion not started"},
		{[]metav1.Condition{cond("Deleting", metav1.ConditionFalse, "NotDeleting")}, "cluster: deletion not started"},
		{[]metav1.Condition{{Type: "Deleting", Status: metav1.ConditionTrue, Reason: "Deleting", Message: "waiting for 3 OpenStackMachine(s) to be deleted"}},
			"cluster: waiting for N OpenStackMachine(s) to be deleted"},
		{[]metav1.Condition{cond("Deleting", metav1.ConditionTrue, "DeletionCompleted")}, "cluster: DeletionCompleted"},
	} {
		if got := DeleteStep("cluster", tc.conds); got != tc.want {
			t.Errorf("DeleteStep(%v) = %q, want %q", tc.conds, got, tc.want)
		}
	}
}

func TestOpenStackStep(t *testing.T) {
	order := []string{"network", "router", "load balancer"}
	for _, tc := range []struct {
		deleting      bool
		present       map[string]int
		servers, want int
		step          string
	}{
		{false, nil, 0, 3, "OpenStack: creating network"},
		{false, map[string]int{"network": 1}, 0, 3, "OpenStack: creating router"},
		{false, map[string]int{"network": 1, "router": 1}, 2, 3, "OpenStack: creating load balancer"},
		{false, map[string]int{"network": 1, "router": 1, "load balancer": 1}, 2, 3, "OpenStack: creating servers"},
		{false, map[string]int{"network": 1, "router": 1, "load balancer": 1}, 3, 3, "OpenStack: all created"},
		{true, map[string]int{"network": 1, "router": 1, "load balancer": 1}, 1, 3, "OpenStack: deleting servers"},
		{true, map[string]int{"network": 1, "router": 1, "load balancer": 1}, 0, 3, "OpenStack: deleting load balancer"},
		{true, map[string]int{"network": 1, "router": 0}, 0, 3, "OpenStack: deleting network"},
		{true, map[string]int{}, 0, 3, "OpenStack: all deleted"},
	} {
		if got := OpenStackStep(tc.deleting, tc.present, order, tc.servers, tc.want); got != tc.step {
			t.Errorf("OpenStackStep(%v, %v, %d/%d) = %q, want %q", tc.deleting, tc.present, tc.servers, tc.want, got, tc.step)
		}
	}
}
