package clients

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// rateGate honours Retry-After across reconciles, objects and identities:
// once an endpoint answers 429 (or 503) with Retry-After, every request of
// the process to that endpoint (host), whatever identity makes it, is
// answered locally with 429 until the time is up, without reaching
// OpenStack. Without it, the status write of the object that hit the limit
// would trigger an immediate reconcile, and every other object would keep
// calling the rate-limited API. The holds are per host, not per identity:
// a rate limiter in front of OpenStack commonly counts by client address,
// which all identities of the manager share (docs/reliability.md, Storms).
type rateGate struct {
	next  http.RoundTripper
	now   func() time.Time
	holds *retryHolds
}

// retryHolds are the Retry-After times by host, shared by every gate of a
// Factory.
type retryHolds struct {
	mu    sync.Mutex
	until map[string]time.Time
}

func newRetryHolds() *retryHolds { return &retryHolds{until: map[string]time.Time{}} }

func newRateGate(next http.RoundTripper, holds *retryHolds) *rateGate {
	return &rateGate{next: next, now: time.Now, holds: holds}
}

func (g *rateGate) RoundTrip(req *http.Request) (*http.Response, error) {
	host := req.URL.Host
	h := g.holds
	h.mu.Lock()
	until, blocked := h.until[host]
	h.mu.Unlock()
	if blocked {
		if wait := until.Sub(g.now()); wait > 0 {
			if req.Body != nil {
				_ = req.Body.Close()
			}
			return synthetic429(req, wait), nil
		}
	}
	resp, err := g.next.RoundTrip(req)
	if err != nil || resp == nil {
		return resp, err
	}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		if d := retryAfter(resp.Header); d > 0 {
			h.mu.Lock()
			if t := g.now().Add(d); t.After(h.until[host]) {
				h.until[host] = t
			}
			h.mu.Unlock()
		}
	}
	return resp, nil
}

// synthetic429 is the local answer while an endpoint is rate limited.
func synthetic429(req *http.Request, wait time.Duration) *http.Response {
	secs := int((wait + time.Second - 1) / time.Second)
	body := `{"message": "rate limited by OpenStack; waiting for Retry-After before calling again"}`
	h := http.Header{}
	h.Set("Retry-After", strconv.Itoa(secs))
	h.Set("Content-Type", "application/json")
	return &http.Response{
		StatusCode:    http.StatusTooManyRequests,
		Status:        "429 Too Many Requests",
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h,
		Body:          io.NopCloser(bytes.NewReader([]byte(body))),
		ContentLength: int64(len(body)),
		Request:       req,
	}
}
