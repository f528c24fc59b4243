package manager

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-logr/logr"
)

// The guard's own rules: which answers it gives without asking the API
// server, and how long it reuses an answer. That the reviews themselves work
// against a real API server is checked with the real binaries in
// test/managers (checkMetrics).
func TestMetricsGuard(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	reviews := 0
	answer, answerErr := http.StatusOK, error(nil)
	g := &metricsGuard{
		review: func(_ *http.Request, token string) (int, error) {
			reviews++
			if token == "" {
				t.Fatal("the guard asked about an empty token")
			}
			return answer, answerErr
		},
		decisions: map[[32]byte]metricsDecision{},
		now:       func() time.Time { return now },
	}
	h, err := g.filter(logr.Discard(), http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("metrics"))
	}))
	if err != nil {
		t.Fatal(err)
	}
	get := func(authorization string) int {
		r := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		if authorization != "" {
			r.Header.Set("Authorization", authorization)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code == http.StatusOK && w.Body.String() != "metrics" {
			t.Fatalf("200 without the metrics: %q", w.Body.String())
		}
		if w.Code != http.StatusOK && w.Body.String() == "metrics" {
			t.Fatalf("%d with the metrics", w.Code)
		}
		return w.Code
	}
	step := func(what string, authorization string, wantCode, wantReviews int) {
		t.Helper()
		if code := get(authorization); code != wantCode || reviews != wantReviews {
			t.Errorf("%s: %d after %d reviews, want %d after %d", what, code, reviews, wantCode, wantReviews)
		}
	}

	step("no header", "", http.StatusUnauthorized, 0)
	step("basic auth", "Basic dXNlcjpwYXNz", http.StatusUnauthorized, 0)
	step("empty bearer", "Bearer  ", http.StatusUnauthorized, 0)

	step("first request", "Bearer a", http.StatusOK, 1)
	step("same token, cached", "bearer a", http.StatusOK, 1)
	now = now.Add(metricsAllowedTTL - time.Second)
	step("still cached", "Bearer a", http.StatusOK, 1)
	now = now.Add(time.Second)
	answer = http.StatusForbidden
	step("allowed answer expired", "Bearer a", http.StatusForbidden, 2)
	now = now.Add(metricsDeniedTTL - time.Second)
	step("refusal cached", "Bearer a", http.StatusForbidden, 2)
	answer = http.StatusOK
	now = now.Add(time.Second)
	step("refusal expired", "Bearer a", http.StatusOK, 3)

	answer = http.StatusUnauthorized
	step("another token", "Bearer b", http.StatusUnauthorized, 4)

	answerErr = errors.New("API server unreachable")
	step("review fails", "Bearer c", http.StatusInternalServerError, 5)
	step("failure not cached", "Bearer c", http.StatusInternalServerError, 6)
	answerErr, answer = nil, http.StatusOK
	step("review works again", "Bearer c", http.StatusOK, 7)
}

// The cache stays bounded however many tokens come.
func TestMetricsGuardCacheBounded(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	g := &metricsGuard{
		review:    func(*http.Request, string) (int, error) { return http.StatusForbidden, nil },
		decisions: map[[32]byte]metricsDecision{},
		now:       func() time.Time { return now },
	}
	for i := range 3 * metricsCacheSize {
		r := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		if _, err := g.decide(r, string(rune('a'+i%26))+time.Duration(i).String()); err != nil {
			t.Fatal(err)
		}
		if n := len(g.decisions); n > metricsCacheSize {
			t.Fatalf("%d decisions kept, at most %d", n, metricsCacheSize)
		}
		if i%100 == 0 {
			now = now.Add(metricsDeniedTTL) // some expire on the way
		}
	}
}
