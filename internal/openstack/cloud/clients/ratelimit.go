package clients

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// rateGate honours Retry-After across reconciles and objects: once an
// endpoint answers 429 (or 503) with Retry-After, every request of this
// identity to that endpoint is answered locally with 429 until the time
// is up, without reaching OpenStack. Without it, the status write of the
// object that hit the limit would trigger an immediate reconcile, and
// every other object would keep calling the rate-limited API.
type rateGate struct {
	next http.RoundTripper
	now  func() time.Time

	mu    sync.Mutex
	until map[string]time.Time // by host
}

func newRateGate(next http.RoundTripper) *rateGate {
	return &rateGate{next: next, now: time.Now, until: map[string]time.Time{}}
}

func (g *rateGate) RoundTrip(req *http.Request) (*http.Response, error) {
	host := req.URL.Host
	g.mu.Lock()
	until, blocked := g.until[host]
	g.mu.Unlock()
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
			g.mu.Lock()
			if t := g.now().Add(d); t.After(g.until[host]) {
				g.until[host] = t
			}
			g.mu.Unlock()
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
