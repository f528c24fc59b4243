package envtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"
)

// LoopGuard catches self-triggering reconcile loops. It sits in the
// transport of the controllers' rest.Config (Environment.ControllerConfig),
// attributes every write (all but GET and HEAD) to the object it changes,
// and flags an object that receives more than Max writes within any Window:
// a controller converges in a few writes per object, a loop (a status write
// whose own watch event undoes it, say) makes hundreds. The tests' own
// client does not pass through it, so only controller writes count.
//
// A write the server refuses with a conflict is counted apart and not
// against Max: it changes nothing, so no watch event follows it and it
// cannot feed a loop, and its retries are paced by the workqueue's backoff.
// Two controllers that patch one object's status from the same cached copy
// make such conflicts; the summary shows how many.
//
// Events are not counted: the recorder aggregates them on its own, and an
// event is no object a controller manages. See docs/testing.md.
type LoopGuard struct {
	// Window and Max: more than Max writes to one object within Window is
	// a loop. Defaults: DefaultLoopWindow, DefaultLoopMax.
	Window time.Duration
	Max    int

	now func() time.Time // for tests; time.Now otherwise

	mu        sync.Mutex
	objects   map[string]*objectWrites
	baseline  map[string]float64 // reconcile counts when the guard was made
	reconcile func() map[string]float64
}

// DefaultLoopWindow and DefaultLoopMax: 40 writes to one object within 5 s.
// The busiest legitimate sequence measured in these suites is 27 writes to
// one OpenStackCluster within 3 s: its API load balancer created, put in
// ERROR and created again on the fake cloud, whose Octavia applies each
// step by the next request, each step one status write of conditions and
// one of the rest (CAPI's patch helper writes them apart). The storms this
// guard exists for wrote an object 300–450 times in 5 s.
const (
	DefaultLoopWindow = 5 * time.Second
	DefaultLoopMax    = 40
)

// loopSamples is how many requests (with bodies) are kept per object for
// the failure message.
const loopSamples = 6

type objectWrites struct {
	total int
	// conflicts are the writes refused with 409 Conflict; not in total.
	conflicts int
	recent    []time.Time // writes within the window, oldest first
	peak      int         // most writes seen within one window
	// first are the object's first requests, last the latest ones.
	first, last []string
	tripped     bool
	// atTrip are the requests that led to the trip.
	atTrip []string
}

// LoopViolation is an object written more than Max times within Window.
type LoopViolation struct {
	Object string
	// Peak is the most writes within one window; Total all writes;
	// Conflicts the writes refused with a conflict, counted apart.
	Peak, Total, Conflicts int
	// First are the first requests to the object, Recent the ones just
	// before it tripped, each "METHOD path body".
	First, Recent []string
}

// NewLoopGuard returns a guard with the default limits that reports
// reconciles counted from now on.
func NewLoopGuard() *LoopGuard {
	return &LoopGuard{reconcile: ReconcileCounts, baseline: ReconcileCounts()}
}

// Wrap routes the requests sent through rt past the guard; it is a
// rest.Config.WrapTransport.
func (g *LoopGuard) Wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			return rt.RoundTrip(r)
		}
		resp, err := rt.RoundTrip(r)
		g.record(r, err == nil && resp.StatusCode == http.StatusConflict)
		return resp, err
	})
}

// WrapConfig returns a copy of cfg whose requests pass the guard.
func (g *LoopGuard) WrapConfig(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Wrap(g.Wrap)
	return c
}

// record counts r, a write; conflict means the server refused it with a
// conflict.
func (g *LoopGuard) record(r *http.Request, conflict bool) {
	var body []byte
	if r.GetBody != nil {
		if rc, err := r.GetBody(); err == nil {
			body, _ = io.ReadAll(io.LimitReader(rc, seenBodyLimit))
			_ = rc.Close()
		}
	}
	key, ok := ObjectOf(r.Method, r.URL.Path, body)
	if !ok {
		return
	}
	entry := r.Method + " " + r.URL.Path
	if len(body) > 0 {
		entry += " " + string(body)
	}
	if conflict {
		entry += " -> 409 Conflict"
	}
	now := time.Now
	if g.now != nil {
		now = g.now
	}
	t := now()
	window, limit := g.limits()

	g.mu.Lock()
	defer g.mu.Unlock()
	if g.objects == nil {
		g.objects = map[string]*objectWrites{}
	}
	o := g.objects[key]
	if o == nil {
		o = &objectWrites{}
		g.objects[key] = o
	}
	if len(o.first) < loopSamples {
		o.first = append(o.first, entry)
	}
	o.last = append(o.last, entry)
	if len(o.last) > loopSamples {
		o.last = o.last[len(o.last)-loopSamples:]
	}
	if conflict {
		o.conflicts++
		return
	}
	o.total++
	o.recent = append(o.recent, t)
	cut := 0
	for cut < len(o.recent) && t.Sub(o.recent[cut]) >= window {
		cut++
	}
	o.recent = o.recent[cut:]
	o.peak = max(o.peak, len(o.recent))
	if len(o.recent) > limit && !o.tripped {
		o.tripped = true
		o.atTrip = slices.Clone(o.last)
	}
}

func (g *LoopGuard) limits() (time.Duration, int) {
	w, m := g.Window, g.Max
	if w <= 0 {
		w = DefaultLoopWindow
	}
	if m <= 0 {
		m = DefaultLoopMax
	}
	return w, m
}

// Violations are the objects that were written more than Max times within
// Window, sorted by name.
func (g *LoopGuard) Violations() []LoopViolation {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []LoopViolation
	for k, o := range g.objects {
		if o.tripped {
			out = append(out, LoopViolation{Object: k, Peak: o.peak, Total: o.total, Conflicts: o.conflicts,
				First: slices.Clone(o.first), Recent: slices.Clone(o.atTrip)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Object < out[j].Object })
	return out
}

// ErrorReporter is the part of testing.TB that Check uses (the package
// does not import testing; see T).
type ErrorReporter interface {
	Helper()
	Error(args ...any)
}

// Check fails t for every object written in a loop so far.
func (g *LoopGuard) Check(t ErrorReporter) {
	t.Helper()
	for _, v := range g.Violations() {
		t.Error(g.describe(v))
	}
}

func (g *LoopGuard) describe(v LoopViolation) string {
	window, limit := g.limits()
	var b strings.Builder
	fmt.Fprintf(&b, "reconcile loop: %s was written %d times within %s by the controllers (limit %d; %d writes in all, %d more refused with a conflict).\n",
		v.Object, v.Peak, window, limit, v.Total, v.Conflicts)
	b.WriteString("  first requests:\n")
	for _, s := range v.First {
		b.WriteString("    " + s + "\n")
	}
	b.WriteString("  requests before the limit was passed:\n")
	for _, s := range v.Recent {
		b.WriteString("    " + s + "\n")
	}
	return b.String()
}

// Summary is one line on what the controllers wrote and how often they
// reconciled: per controller, its reconciles and, when its kind is among
// the objects written, reconciles per object of that kind.
func (g *LoopGuard) Summary() string {
	g.mu.Lock()
	objects, writes, conflicts, peak, peakObj := 0, 0, 0, 0, ""
	byResource := map[string]int{}
	for k, o := range g.objects {
		objects++
		writes += o.total
		conflicts += o.conflicts
		if o.peak > peak || (o.peak == peak && k < peakObj) {
			peak, peakObj = o.peak, k
		}
		res, _, _ := strings.Cut(k, " ")
		res, _, _ = strings.Cut(res, ".")
		byResource[res]++
	}
	g.mu.Unlock()
	window, _ := g.limits()

	var counts map[string]float64
	if g.reconcile != nil {
		counts = g.reconcile()
	}
	names := make([]string, 0, len(counts))
	for n := range counts {
		if counts[n]-g.baseline[n] > 0 {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	parts := make([]string, 0, len(names))
	for _, n := range names {
		r := counts[n] - g.baseline[n]
		if k := objectsOfController(n, byResource); k > 0 {
			parts = append(parts, fmt.Sprintf("%s %.0f (%.1f/object, %d objects)", n, r, r/float64(k), k))
		} else {
			parts = append(parts, fmt.Sprintf("%s %.0f", n, r))
		}
	}
	s := fmt.Sprintf("loop guard: controllers wrote %d objects %d times", objects, writes)
	if conflicts > 0 {
		s += fmt.Sprintf(" (%d more refused with a conflict)", conflicts)
	}
	s += fmt.Sprintf(", at most %d times within %s", peak, window)
	if peakObj != "" {
		s += " (" + peakObj + ")"
	}
	if len(parts) > 0 {
		s += "; reconciles: " + strings.Join(parts, ", ")
	}
	return s
}

// objectsOfController is the number of objects written of the kind a
// controller is named after ("openstackserver" reconciles
// "openstackservers"); 0 when no resource matches.
func objectsOfController(controller string, byResource map[string]int) int {
	c := strings.ReplaceAll(strings.ToLower(controller), "-", "")
	for _, plural := range []string{c + "s", c + "es"} {
		if n := byResource[plural]; n > 0 {
			return n
		}
	}
	return 0
}

// Finish is for TestMain: it prints the summary and every violation, and
// turns a passing run into a failing one when there was a loop.
func (g *LoopGuard) Finish(code int) int {
	fmt.Println(g.Summary())
	vs := g.Violations()
	for _, v := range vs {
		fmt.Fprintln(os.Stderr, "FAIL:", g.describe(v))
	}
	if len(vs) > 0 && code == 0 {
		return 1
	}
	return code
}

// ObjectOf names the object a write changes, "<resource>.<group>
// <namespace>/<name>" (core resources have no group, cluster-scoped ones
// no namespace), from the request path and, for a create, the body's
// metadata. A create with generateName counts against
// "<generateName>*". Subresources (status, scale) count against their
// object. ok is false for paths that name no object of a kind a
// controller manages: events and non-resource paths.
func ObjectOf(method, path string, body []byte) (key string, ok bool) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	var group string
	var rest []string
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		rest = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		group, rest = parts[1], parts[3:]
	default:
		return "", false
	}
	ns := ""
	switch {
	case len(rest) == 2 && rest[0] == "namespaces",
		len(rest) == 3 && rest[0] == "namespaces" && (rest[2] == "status" || rest[2] == "finalize"):
		// The namespace itself, or its status or finalize subresource.
		rest = rest[:2]
	case len(rest) >= 3 && rest[0] == "namespaces":
		ns, rest = rest[1], rest[2:]
	}
	if len(rest) == 0 {
		return "", false
	}
	res := rest[0]
	if res == "events" {
		return "", false
	}
	if group != "" {
		res += "." + group
	}
	name := ""
	switch {
	case len(rest) >= 2:
		name = rest[1]
	case method == http.MethodPost:
		var m struct {
			Metadata struct{ Name, GenerateName string }
		}
		if json.Unmarshal(body, &m) == nil {
			name = m.Metadata.Name
			if name == "" && m.Metadata.GenerateName != "" {
				name = m.Metadata.GenerateName + "*"
			}
		}
		if name == "" {
			name = "(create)"
		}
	default:
		// DELETE of a collection.
		name = "(collection)"
	}
	if ns != "" {
		name = ns + "/" + name
	}
	return res + " " + name, true
}
