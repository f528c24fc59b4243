package envtest

import (
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// WriteCounter counts the mutating requests (all but GET and HEAD) that a
// client sends, by method and resource, and the conflicts among them as
// "409 <method> <resource>" (for a POST, AlreadyExists: nothing was made). Tests use it to hold a controller to its API writes: a
// steady state must write nothing, and benchmarks report writes per object.
// It keeps the first ten requests, with their bodies, for the failure
// message. The zero value is ready; install it with cfg.Wrap(w.Wrap).
type WriteCounter struct {
	n   atomic.Int64
	log atomic.Value // []string

	mu     sync.Mutex
	byKind map[string]int // "PATCH openshiftassistedconfigs/status"
}

// seenBodyLimit bounds the body kept of each of the first requests.
const seenBodyLimit = 4000

// Wrap counts the requests sent through rt; it is a
// rest.Config.WrapTransport.
func (w *WriteCounter) Wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.count(r.Method + " " + ResourceOf(r.URL.Path))
			if w.n.Add(1) <= 10 {
				entry := r.Method + " " + r.URL.Path
				if r.GetBody != nil {
					if body, err := r.GetBody(); err == nil {
						b, _ := io.ReadAll(io.LimitReader(body, seenBodyLimit))
						entry += " " + string(b)
					}
				}
				seen, _ := w.log.Load().([]string)
				// A copy: a slice already handed out by Seen never changes.
				w.log.Store(append(slices.Clone(seen), entry))
			}
		}
		resp, err := rt.RoundTrip(r)
		if err == nil && resp.StatusCode == http.StatusConflict {
			w.count("409 " + r.Method + " " + ResourceOf(r.URL.Path))
		}
		return resp, err
	})
}

func (w *WriteCounter) count(kind string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.byKind == nil {
		w.byKind = map[string]int{}
	}
	w.byKind[kind]++
}

// Load is the number of writes so far.
func (w *WriteCounter) Load() int64 { return w.n.Load() }

// Breakdown is the writes by method and resource, and the conflicts.
func (w *WriteCounter) Breakdown() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return maps.Clone(w.byKind)
}

// Seen is the first ten writes: method, path and body.
func (w *WriteCounter) Seen() []string {
	s, _ := w.log.Load().([]string)
	return s
}

// ResourceOf is the resource, and subresource if any, that an API path
// names ("machines", "machines/status"), so that writes to different
// objects of a kind add up. A path it does not understand is returned as
// it is.
func ResourceOf(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	for i, p := range parts {
		if p == "namespaces" && i+2 < len(parts) {
			rest := parts[i+2:]
			if len(rest) >= 3 {
				return rest[0] + "/" + rest[2]
			}
			return rest[0]
		}
	}
	if len(parts) >= 4 && parts[0] == "apis" {
		return parts[3] // cluster-scoped
	}
	return path
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
