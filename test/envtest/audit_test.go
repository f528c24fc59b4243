package envtest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func auditEvent(verb, agent, resource string, at time.Time) AuditEvent {
	e := AuditEvent{Verb: verb, UserAgent: agent, StageTimestamp: at}
	e.ObjectRef = &struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		APIGroup    string `json:"apiGroup"`
	}{Resource: resource, Namespace: "ns", Name: "x"}
	return e
}

func TestTallyAuditAndQuietSince(t *testing.T) {
	now := time.Now()
	events := []AuditEvent{
		auditEvent("patch", "audited", "machines", now.Add(-20*time.Second)),
		auditEvent("get", "audited", "machines", now.Add(-time.Second)),
		auditEvent("update", "other", "leases", now.Add(-time.Second)),
	}
	audited := func(e AuditEvent) bool { return e.UserAgent == "audited" }
	tally := TallyAudit(events, audited)
	if len(tally.Writes) != 1 || tally.Writes["patch machines ns/x by  (audited)"] != 1 {
		t.Fatalf("writes: %v", tally.Writes)
	}
	if tally.Reads["get machines by audited"] != 1 || len(tally.Reads) != 1 {
		t.Fatalf("reads: %v", tally.Reads)
	}
	if tally.OthersWrites["update leases"] != 1 || len(tally.OthersWrites) != 1 {
		t.Fatalf("others' writes: %v", tally.OthersWrites)
	}

	path := filepath.Join(t.TempDir(), "audit.log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	enc := json.NewEncoder(f)
	for _, e := range events {
		if err := enc.Encode(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	// The audited write is 20 s old: quiet for 15 s, not for 30 s.
	for d, want := range map[time.Duration]bool{15 * time.Second: true, 30 * time.Second: false} {
		quiet, err := QuietSince(path, d, audited)
		if err != nil || quiet != want {
			t.Fatalf("QuietSince(%s) = %v, %v; want %v", d, quiet, err, want)
		}
	}
}

func TestCountsSince(t *testing.T) {
	got := CountsSince(map[string]float64{"b": 1}, map[string]float64{"b": 4, "a": 2})
	if got != " a 2; b 3;" {
		t.Fatalf("got %q", got)
	}
}
