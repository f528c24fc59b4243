package openstackproxy

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// Call is one request that reached the proxy.
type Call struct {
	Time    time.Time
	Service string // identity, compute, network, volume, image, load-balancer, placement, unknown
	Method  string
	// Path is the path template: every UUID or 32-hex segment (ids, project ids) is "{id}",
	// e.g. "/v2.1/servers/{id}/action" or "/v3/{id}/volumes/detail". No query.
	Path    string
	RawPath string // the request path as sent
	Query   string // the raw query string
	// Status is what the client got: the upstream status, or the injected one; 0 when the
	// connection was dropped or the client went away before an answer.
	Status int
	// UpstreamStatus is the status of the real service; 0 when the request was not forwarded.
	UpstreamStatus int
	Fault          FaultKind // the injected fault, "" if none
	// Duration runs from the arrival of the request to its answer's status line (or the
	// injected fault); the body may still be on its way.
	Duration time.Duration
}

var (
	uuidSegment  = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	hex32Segment = regexp.MustCompile(`^[0-9a-fA-F]{32}$`)
)

// Template replaces every path segment that is a UUID or a 32-hex id by "{id}".
func Template(path string) string {
	segs := strings.Split(path, "/")
	for i, s := range segs {
		if uuidSegment.MatchString(s) || hex32Segment.MatchString(s) {
			segs[i] = "{id}"
		}
	}
	return strings.Join(segs, "/")
}

// Match selects calls (for [Proxy.Count]) or requests (for a [Fault]). Zero fields match
// anything.
type Match struct {
	Service string // canonical service name, e.g. ServiceCompute
	Method  string // HTTP method, case-insensitive
	// Path must equal the path template, e.g. "/v2.1/servers/{id}".
	Path string
	// PathPrefix must prefix the raw path or the path template, e.g. "/v2.0/ports" or
	// "/v2.1/servers/{id}/action".
	PathPrefix string
	// Status must equal Call.Status (Count only; faults ignore it).
	Status int
}

func (m Match) matches(service, method, rawPath, tmpl string) bool {
	if m.Service != "" && m.Service != service {
		return false
	}
	if m.Method != "" && !strings.EqualFold(m.Method, method) {
		return false
	}
	if m.Path != "" && m.Path != tmpl {
		return false
	}
	if m.PathPrefix != "" && !strings.HasPrefix(rawPath, m.PathPrefix) && !strings.HasPrefix(tmpl, m.PathPrefix) {
		return false
	}
	return true
}

// Matches reports whether the call is selected by m.
func (m Match) Matches(c Call) bool {
	if m.Status != 0 && m.Status != c.Status {
		return false
	}
	return m.matches(c.Service, c.Method, c.RawPath, c.Path)
}

func (p *Proxy) record(c Call) {
	p.callsMu.Lock()
	p.calls = append(p.calls, c)
	p.callsMu.Unlock()
}

// Calls returns a copy of the calls recorded since the start or the last [Proxy.Reset], in
// the order they were answered. A call is recorded before the client can see its answer, so a
// test may count as soon as its request returned.
func (p *Proxy) Calls() []Call {
	p.callsMu.Lock()
	defer p.callsMu.Unlock()
	return append([]Call(nil), p.calls...)
}

// Reset forgets the recorded calls (the faults stay).
func (p *Proxy) Reset() {
	p.callsMu.Lock()
	p.calls = nil
	p.callsMu.Unlock()
}

// Count is the number of recorded calls selected by m.
func (p *Proxy) Count(m Match) int {
	return p.CountFunc(m.Matches)
}

// CountFunc is the number of recorded calls for which keep returns true.
func (p *Proxy) CountFunc(keep func(Call) bool) int {
	p.callsMu.Lock()
	defer p.callsMu.Unlock()
	n := 0
	for _, c := range p.calls {
		if keep(c) {
			n++
		}
	}
	return n
}

// CreatesAndDeletes are the calls that create or delete a network, subnet,
// router, security group, load balancer (or listener, pool, monitor,
// member), floating IP, server, port, trunk or volume, as "METHOD path
// template". Tokens, actions, security-group rules and tags are not
// resources of their own.
func CreatesAndDeletes(calls []Call) []string {
	var out []string
	for _, c := range calls {
		if c.Method != "POST" && c.Method != "DELETE" {
			continue
		}
		if c.Service == ServiceIdentity || strings.HasSuffix(c.Path, "/action") ||
			strings.Contains(c.Path, "security-group-rules") || strings.Contains(c.Path, "/tags") {
			continue
		}
		out = append(out, c.Method+" "+c.Path)
	}
	return out
}

// Summary is a table of the recorded calls grouped by service, method and path template,
// with the count and the statuses seen ("0" is a dropped connection), e.g.
//
//	SERVICE  METHOD  PATH                  CALLS  STATUSES
//	compute  GET     /v2.1/flavors/detail  2      200x1 429x1 (rate-limit x1)
//	identity POST    /v3/auth/tokens       1      201x1
//	TOTAL                                  3
func (p *Proxy) Summary() string {
	type key struct{ service, method, path string }
	type agg struct {
		n        int
		statuses map[int]int
		faults   map[FaultKind]int
	}
	groups := map[key]*agg{}
	total := 0
	for _, c := range p.Calls() {
		k := key{c.Service, c.Method, c.Path}
		a := groups[k]
		if a == nil {
			a = &agg{statuses: map[int]int{}, faults: map[FaultKind]int{}}
			groups[k] = a
		}
		a.n++
		a.statuses[c.Status]++
		if c.Fault != "" {
			a.faults[c.Fault]++
		}
		total++
	}
	keys := make([]key, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.service != b.service {
			return a.service < b.service
		}
		if a.path != b.path {
			return a.path < b.path
		}
		return a.method < b.method
	})
	var sb strings.Builder
	tw := tabwriter.NewWriter(&sb, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVICE\tMETHOD\tPATH\tCALLS\tSTATUSES")
	for _, k := range keys {
		a := groups[k]
		codes := make([]int, 0, len(a.statuses))
		for s := range a.statuses {
			codes = append(codes, s)
		}
		sort.Ints(codes)
		var st []string
		for _, s := range codes {
			st = append(st, fmt.Sprintf("%dx%d", s, a.statuses[s]))
		}
		if len(a.faults) > 0 {
			kinds := make([]string, 0, len(a.faults))
			for f, n := range a.faults {
				kinds = append(kinds, fmt.Sprintf("%s x%d", f, n))
			}
			sort.Strings(kinds)
			st = append(st, "("+strings.Join(kinds, ", ")+")")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", k.service, k.method, k.path, a.n, strings.Join(st, " "))
	}
	fmt.Fprintf(tw, "TOTAL\t\t\t%d\t\n", total)
	_ = tw.Flush()
	return sb.String()
}
