package clients

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// TestRateGateSharedAcrossIdentities: a 429 with Retry-After that one
// identity's client receives holds every client of the factory (another
// identity's too) off that host until the time is up; another host is not
// held.
func TestRateGateSharedAcrossIdentities(t *testing.T) {
	var calls atomic.Int32
	limited := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		calls.Add(1)
		w.Header().Set("Retry-After", "30")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer limited.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	defer other.Close()

	holds := newRetryHolds()
	a := &http.Client{Transport: newRateGate(http.DefaultTransport, holds)}
	b := &http.Client{Transport: newRateGate(http.DefaultTransport, holds)}
	get := func(c *http.Client, url string) int {
		t.Helper()
		resp, err := c.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	if code := get(a, limited.URL); code != http.StatusTooManyRequests || calls.Load() != 1 {
		t.Fatalf("first request: %d, %d calls", code, calls.Load())
	}
	// The other identity's request is answered locally.
	if code := get(b, limited.URL); code != http.StatusTooManyRequests || calls.Load() != 1 {
		t.Fatalf("other identity while held: %d, %d calls reached the server", code, calls.Load())
	}
	if code := get(b, other.URL); code != http.StatusOK {
		t.Fatalf("another host: %d", code)
	}
}
