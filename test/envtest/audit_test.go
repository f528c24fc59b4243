package envtest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
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
	writeAuditLog(t, path, events...)
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

func writeAuditLog(t *testing.T, path string, events ...AuditEvent) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
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
}

func TestNewAuditOff(t *testing.T) {
	t.Setenv(AuditEnv, "")
	opts := Options{}
	a, err := NewAudit("off", &opts)
	if err != nil || a != nil || a.On() || opts.AuditLogPath != "" {
		t.Fatalf("not auditing: %v, %v, %q", a, err, opts.AuditLogPath)
	}
	cfg := &rest.Config{UserAgent: "u"}
	mo := ctrl.Options{}
	if got := a.Manager(cfg, "audited", &mo); got != cfg || cfg.UserAgent != "u" || mo.Cache.SyncPeriod != nil {
		t.Fatalf("not auditing, the manager changed: %q, %v", got.UserAgent, mo.Cache.SyncPeriod)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestAudit(t *testing.T) {
	t.Setenv(AuditEnv, "1")
	opts := Options{}
	a, err := NewAudit("unit", &opts)
	if err != nil || !a.On() {
		t.Fatalf("auditing: %v, %v", a, err)
	}
	if opts.AuditLogPath != a.Log || filepath.Dir(a.Log) == os.TempDir() {
		t.Fatalf("the log %q in its own directory, the option %q", a.Log, opts.AuditLogPath)
	}

	cfg := &rest.Config{UserAgent: "u"}
	mo := ctrl.Options{}
	got := a.Manager(cfg, "audited", &mo)
	if got.UserAgent != "audited" || cfg.UserAgent != "u" {
		t.Fatalf("user agent %q, the original's %q", got.UserAgent, cfg.UserAgent)
	}
	if mo.Cache.SyncPeriod == nil || *mo.Cache.SyncPeriod != AuditSyncPeriod {
		t.Fatalf("sync period %v", mo.Cache.SyncPeriod)
	}

	// The install: a write of "audited", a read of "reader".
	start := time.Now()
	writeAuditLog(t, a.Log, auditEvent("patch", "audited", "machines", start.Add(-20*time.Second)),
		auditEvent("get", "reader", "machines", start.Add(-20*time.Second)))
	if err := a.CheckWrites(start.Add(-time.Minute), "audited"); err != nil {
		t.Fatal(err)
	}
	if err := a.CheckWrites(start.Add(-time.Minute), "audited", "reader"); err == nil || !strings.Contains(err.Error(), "reader") {
		t.Fatalf("reader wrote nothing: %v", err)
	}
	if err := a.CheckWrites(start, "audited"); err == nil {
		t.Fatal("no write since start")
	}
	if d, err := a.Settle(15*time.Second, time.Minute, ByAgent("audited")); err != nil || d > time.Minute {
		t.Fatalf("settled: %s, %v", d, err)
	}

	// The window holds what was logged between its ends.
	r := a.begin()
	in := time.Now()
	writeAuditLog(t, a.Log, auditEvent("update", "audited", "machines", in),
		auditEvent("list", "audited", "machines", in), auditEvent("update", "other", "leases", in))
	if err := a.end(r, ByAgent("audited")); err != nil {
		t.Fatal(err)
	}
	if len(r.Events) != 3 || r.Tally.Writes["update machines ns/x by  (audited)"] != 1 ||
		r.Tally.Reads["list machines by audited"] != 1 || r.Tally.OthersWrites["update leases"] != 1 {
		t.Fatalf("window: %d events, %+v", len(r.Events), r.Tally)
	}

	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Dir(a.Log)); !os.IsNotExist(err) {
		t.Fatalf("the log's directory is left: %v", err)
	}
}

func TestAuditResultReport(t *testing.T) {
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := &AuditResult{
		From: from, To: from.Add(2 * time.Minute),
		Before: map[string]float64{"a": 1, "b": 2},
		After:  map[string]float64{"a": 4, "b": 2},
		Events: make([]AuditEvent, 7),
		Tally: AuditTally{
			Writes:       map[string]int{"patch x": 2},
			Reads:        map[string]int{"get y by m": 3, "list y by m": 1},
			OthersWrites: map[string]int{"update leases": 5},
		},
	}
	if got := r.Idle("a", "b", "c"); !slices.Equal(got, []string{"b", "c"}) {
		t.Fatalf("idle: %v", got)
	}
	want := "steady-state audit (unit) over 2m0s (--sync-period 1m0s), 1 object: 7 API requests in the audit log\n" +
		"reconciles per controller: a 3; b 0;\n" +
		"API writes by the manager: 2 map[patch x:2]\n" +
		"API reads by the manager: 4 map[get y by m:3 list y by m:1]\n" +
		"writes not audited (other clients; the API server's own, its identity Leases): map[update leases:5]\n" +
		"extra\n"
	if got := r.Report("unit", "the manager", "1 object", "extra"); got != want {
		t.Fatalf("report:\n%s\nwant:\n%s", got, want)
	}
}
