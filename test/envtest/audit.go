package envtest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
)

// auditPolicy records every request once, when its response is complete,
// without bodies.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived", "ResponseStarted"]
rules:
- level: Metadata
`

// AuditEvent is the part of an API server audit event (audit.k8s.io/v1
// Event) the tests read.
type AuditEvent struct {
	Verb       string `json:"verb"`
	RequestURI string `json:"requestURI"`
	UserAgent  string `json:"userAgent"`
	User       struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		APIGroup    string `json:"apiGroup"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	StageTimestamp time.Time `json:"stageTimestamp"`
}

// IsWrite tells whether the request changes something.
func (e AuditEvent) IsWrite() bool {
	switch e.Verb {
	case "create", "update", "patch", "delete", "deletecollection":
		return true
	}
	return false
}

// Resource is "resource" or "resource/subresource", "" for a
// non-resource URL.
func (e AuditEvent) Resource() string {
	if e.ObjectRef == nil {
		return ""
	}
	if e.ObjectRef.Subresource != "" {
		return e.ObjectRef.Resource + "/" + e.ObjectRef.Subresource
	}
	return e.ObjectRef.Resource
}

// ReadAuditLog reads the audit events of the log at path completed in
// [from, to).
func ReadAuditLog(path string, from, to time.Time) ([]AuditEvent, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	var out []AuditEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	for n := 1; sc.Scan(); n++ {
		var e AuditEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, n, err)
		}
		if !e.StageTimestamp.Before(from) && e.StageTimestamp.Before(to) {
			out = append(out, e)
		}
	}
	return out, sc.Err()
}

// AuditTally sorts the requests of an audit window: the audited clients'
// writes (named with their object and user agent) and reads, and the
// other clients' writes.
type AuditTally struct {
	Writes, Reads, OthersWrites map[string]int
}

// TallyAudit sorts events; audited tells the clients under audit.
func TallyAudit(events []AuditEvent, audited func(AuditEvent) bool) AuditTally {
	t := AuditTally{Writes: map[string]int{}, Reads: map[string]int{}, OthersWrites: map[string]int{}}
	for _, e := range events {
		key := e.Verb + " " + e.Resource()
		switch {
		case audited(e) && e.IsWrite():
			name := ""
			if e.ObjectRef != nil {
				name = " " + e.ObjectRef.Namespace + "/" + e.ObjectRef.Name
			}
			t.Writes[key+name+" by "+e.User.Username+" ("+e.UserAgent+")"]++
		case audited(e):
			t.Reads[key+" by "+e.UserAgent]++
		case e.IsWrite():
			t.OthersWrites[key]++
		}
	}
	return t
}

// QuietSince reports whether no audited client wrote in the log's last d.
func QuietSince(path string, d time.Duration, audited func(AuditEvent) bool) (bool, error) {
	now := time.Now()
	events, err := ReadAuditLog(path, now.Add(-d), now)
	if err != nil {
		return false, err
	}
	for _, e := range events {
		if audited(e) && e.IsWrite() {
			return false, nil
		}
	}
	return true, nil
}

// AuditEnv turns on the steady-state audits (make bench-audit): the suite's
// API server writes an audit log, its audited managers run with
// AuditSyncPeriod and user agents of their own, and the suites'
// TestSteadyStateAudit run; make test skips them.
const AuditEnv = "OCP_CAPI_AUDIT"

// AuditSyncPeriod is the audited managers' --sync-period: short, so that
// the window fits in a test; every object is reconciled again in it, as
// after the default 10 minutes.
const AuditSyncPeriod = time.Minute

// AuditWindow is what an audit watches. Each informer's period is 0.9 to
// 1.1 times the sync period, and client-go skips an informer's first
// resync when its handler came after the informer's start: two periods hold
// at least one resync of every informer, and at most three.
const AuditWindow = 2 * AuditSyncPeriod

// Audit is a suite's steady-state audit; nil when AuditEnv is unset.
type Audit struct {
	// Log is the API server's audit log.
	Log string
	dir string
}

// NewAudit returns nil when AuditEnv is unset. Otherwise it makes a
// temporary directory (named after prefix) for the audit log and points
// opts.AuditLogPath at it; Close removes it.
func NewAudit(prefix string, opts *Options) (*Audit, error) {
	if os.Getenv(AuditEnv) == "" {
		return nil, nil
	}
	dir, err := os.MkdirTemp("", prefix+"-audit-")
	if err != nil {
		return nil, err
	}
	a := &Audit{Log: filepath.Join(dir, "audit.log"), dir: dir}
	opts.AuditLogPath = a.Log
	return a, nil
}

// On reports whether the suite audits.
func (a *Audit) On() bool { return a != nil }

// Close removes the audit log.
func (a *Audit) Close() error {
	if a == nil {
		return nil
	}
	return os.RemoveAll(a.dir)
}

// SkipUnlessOn skips a TestSteadyStateAudit that is not asked for.
func (a *Audit) SkipUnlessOn(t interface{ Skipf(string, ...any) }) {
	if !a.On() {
		t.Skipf("a steady-state audit of several minutes: `make bench-audit` runs it (%s=1)", AuditEnv)
	}
}

// Manager makes a manager an audited one: a copy of cfg with the user
// agent agent (the audit log tells its requests from those of the
// stand-ins and the test, which share the process), and AuditSyncPeriod in
// opts. Not auditing, it returns cfg and leaves opts alone.
func (a *Audit) Manager(cfg *rest.Config, agent string, opts *ctrl.Options) *rest.Config {
	if !a.On() {
		return cfg
	}
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = agent
	period := AuditSyncPeriod
	opts.Cache.SyncPeriod = &period
	return cfg
}

// ByAgent tells the requests of the given user agents.
func ByAgent(agents ...string) func(AuditEvent) bool {
	return func(e AuditEvent) bool { return slices.Contains(agents, e.UserAgent) }
}

// CheckWrites fails unless the log holds, since from, a write of each of
// agents: without them a wrong user agent would make the window blind.
func (a *Audit) CheckWrites(from time.Time, agents ...string) error {
	events, err := ReadAuditLog(a.Log, from, time.Now())
	if err != nil {
		return err
	}
	for _, agent := range agents {
		if len(TallyAudit(events, ByAgent(agent)).Writes) == 0 {
			return fmt.Errorf("no write of user agent %s in the audit log since %s", agent, from.Format(time.RFC3339))
		}
	}
	return nil
}

// Settle waits, up to timeout, until no audited client has written for
// quiet, and returns how long that took.
func (a *Audit) Settle(quiet, timeout time.Duration, audited func(AuditEvent) bool) (time.Duration, error) {
	start := time.Now()
	for {
		ok, err := QuietSince(a.Log, quiet, audited)
		if err != nil {
			return 0, err
		}
		if ok {
			return time.Since(start), nil
		}
		if time.Since(start) > timeout {
			return 0, fmt.Errorf("the audited clients still write after %s", timeout)
		}
		time.Sleep(2 * time.Second)
	}
}

// Watch watches window, and returns the reconciles of every controller
// of the process and the audit log's requests in it.
func (a *Audit) Watch(window time.Duration, audited func(AuditEvent) bool) (*AuditResult, error) {
	r := a.begin()
	time.Sleep(window)
	return r, a.end(r, audited)
}

func (a *Audit) begin() *AuditResult {
	return &AuditResult{Before: ReconcileCounts(), From: time.Now()}
}

func (a *Audit) end(r *AuditResult, audited func(AuditEvent) bool) error {
	r.To = time.Now()
	r.After = ReconcileCounts()
	var err error
	if r.Events, err = ReadAuditLog(a.Log, r.From, r.To); err != nil {
		return err
	}
	r.Tally = TallyAudit(r.Events, audited)
	return nil
}

// AuditResult is what an audit saw in its window.
type AuditResult struct {
	From, To time.Time
	// Before and After are ReconcileCounts at the window's ends.
	Before, After map[string]float64
	Events        []AuditEvent
	Tally         AuditTally
}

// Reconciles is the number of reconciles of controller in the window.
func (r *AuditResult) Reconciles(controller string) int {
	return int(r.After[controller] - r.Before[controller])
}

// Idle names the controllers that did not reconcile in the window.
func (r *AuditResult) Idle(controllers ...string) []string {
	var out []string
	for _, c := range controllers {
		if r.Reconciles(c) <= 0 {
			out = append(out, c)
		}
	}
	return out
}

// Report is the audit's figures (docs/reliability.md), one line each:
// what is audited, the audited clients (whose), what the window held
// (subject), and extra lines of the test's own.
func (r *AuditResult) Report(what, whose, subject string, extra ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "steady-state audit (%s) over %s (--sync-period %s), %s: %d API requests in the audit log\n",
		what, r.To.Sub(r.From).Round(time.Second), AuditSyncPeriod, subject, len(r.Events))
	fmt.Fprintf(&b, "reconciles per controller:%s\n", CountsSince(r.Before, r.After))
	fmt.Fprintf(&b, "API writes by %s: %d %v\n", whose, sum(r.Tally.Writes), r.Tally.Writes)
	fmt.Fprintf(&b, "API reads by %s: %d %v\n", whose, sum(r.Tally.Reads), r.Tally.Reads)
	fmt.Fprintf(&b, "writes not audited (other clients; the API server's own, its identity Leases): %v\n", r.Tally.OthersWrites)
	for _, l := range extra {
		b.WriteString(l + "\n")
	}
	return b.String()
}

// PrintAuditReport logs report and prints it under the heading make
// bench-audit picks out of the test's output.
func PrintAuditReport(t interface{ Log(...any) }, report string) {
	t.Log(report)
	fmt.Printf("\nSTEADY-STATE AUDIT\n%s\n", report)
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
