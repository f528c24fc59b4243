package openstackproxy

import (
	"math"
	"math/rand"
	"net/http"
	"sync"
	"time"
)

// FaultKind is what an injected fault does to a matching request.
type FaultKind string

const (
	// FaultRateLimit answers 429 with a Retry-After header (Fault.RetryAfter, default 1 s)
	// without forwarding.
	FaultRateLimit FaultKind = "rate-limit"
	// FaultUnavailable answers 503 without forwarding (with Retry-After if Fault.RetryAfter is set).
	FaultUnavailable FaultKind = "unavailable"
	// FaultServerError answers 500 without forwarding.
	FaultServerError FaultKind = "server-error"
	// FaultStatus answers Fault.Status without forwarding (e.g. 409, 404, 502).
	FaultStatus FaultKind = "status"
	// FaultDrop closes the client connection (TCP reset) without forwarding and without any
	// response. Note that Go's http.Transport silently retries an idempotent request (GET,
	// HEAD, OPTIONS, or one with an Idempotency-Key) that failed this way on a reused
	// keep-alive connection; use Times to drop the retry too, or expect the retry in Calls.
	FaultDrop FaultKind = "drop"
	// FaultDropAfterForward forwards the request, lets the service act on it, throws the
	// response away and resets the client connection: "the server was created but the client
	// never heard of it".
	FaultDropAfterForward FaultKind = "drop-after-forward"
	// FaultDelay waits Fault.Delay, then forwards the request normally. If the client gives up
	// first, nothing is forwarded.
	FaultDelay FaultKind = "delay"
)

// Fault is a rule for [Proxy.AddFault]. The embedded [Match] selects the requests (Status is
// ignored); Nth, Times and Probability choose which of them get the fault:
//
//   - Nth > 0: the first Nth-1 matching requests pass; the fault starts at the Nth. With
//     Times == 0 only the Nth request gets it.
//   - Times > 0: at most Times requests get the fault (the next Times if Nth is 0).
//   - 0 < Probability < 1: each otherwise eligible request gets the fault with this
//     probability, drawn from a math/rand source seeded with Seed (same seed, same sequence).
//
// With all three zero every matching request gets the fault.
type Fault struct {
	Match
	Kind FaultKind
	// RetryAfter is the Retry-After header of FaultRateLimit (default 1 s) and, if set, of
	// FaultUnavailable; sent in whole seconds, rounded up.
	RetryAfter time.Duration
	// Delay is the wait of FaultDelay.
	Delay time.Duration
	// Status is the status of FaultStatus.
	Status int

	Nth         int
	Times       int
	Probability float64
	Seed        int64
}

// ActiveFault is a fault rule in force; it counts the requests it saw and the faults it injected.
type ActiveFault struct {
	Fault
	mu          *sync.Mutex // the proxy's faultsMu
	seen, fired int
	rng         *rand.Rand
}

// Seen is how many requests matched the rule (and reached it: rules are tried in the order
// they were added and the first one that fires wins).
func (a *ActiveFault) Seen() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.seen
}

// Fired is how many requests got the fault.
func (a *ActiveFault) Fired() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.fired
}

// AddFault puts a fault rule in force and returns it. Rules are tried in the order they were
// added; the first one that fires decides, and later rules do not see that request.
func (p *Proxy) AddFault(f Fault) *ActiveFault {
	a := &ActiveFault{Fault: f, mu: &p.faultsMu, rng: rand.New(rand.NewSource(f.Seed))}
	p.faultsMu.Lock()
	p.faults = append(p.faults, a)
	p.faultsMu.Unlock()
	return a
}

// RemoveFault takes one rule out of force.
func (p *Proxy) RemoveFault(a *ActiveFault) {
	p.faultsMu.Lock()
	defer p.faultsMu.Unlock()
	for i, x := range p.faults {
		if x == a {
			p.faults = append(p.faults[:i:i], p.faults[i+1:]...)
			return
		}
	}
}

// ClearFaults takes every rule out of force.
func (p *Proxy) ClearFaults() {
	p.faultsMu.Lock()
	p.faults = nil
	p.faultsMu.Unlock()
}

// pickFault returns the fault to inject into the request described by c, or nil.
func (p *Proxy) pickFault(c Call) *ActiveFault {
	p.faultsMu.Lock()
	defer p.faultsMu.Unlock()
	for _, a := range p.faults {
		if !a.matches(c.Service, c.Method, c.RawPath, c.Path) {
			continue
		}
		a.seen++
		if a.Nth > 0 && a.seen < a.Nth {
			continue
		}
		limit := a.Times
		if limit == 0 && a.Nth > 0 {
			limit = 1
		}
		if limit > 0 && a.fired >= limit {
			continue
		}
		if a.Probability > 0 && a.Probability < 1 && a.rng.Float64() >= a.Probability {
			continue
		}
		a.fired++
		return a
	}
	return nil
}

func (f *Fault) status() int {
	switch f.Kind {
	case FaultRateLimit:
		return http.StatusTooManyRequests
	case FaultUnavailable:
		return http.StatusServiceUnavailable
	case FaultServerError:
		return http.StatusInternalServerError
	case FaultStatus:
		if f.Status >= 100 && f.Status <= 999 {
			return f.Status
		}
		return http.StatusInternalServerError
	}
	return http.StatusInternalServerError
}

// retryAfterSeconds is the Retry-After value to send, 0 for none.
func (f *Fault) retryAfterSeconds() int {
	switch f.Kind {
	case FaultRateLimit:
		if f.RetryAfter <= 0 {
			return 1
		}
	case FaultUnavailable:
		if f.RetryAfter <= 0 {
			return 0
		}
	default:
		return 0
	}
	return int(math.Ceil(f.RetryAfter.Seconds()))
}
