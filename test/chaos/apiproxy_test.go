package chaos

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

func TestIsStatusWriteAndWatch(t *testing.T) {
	for _, tc := range []struct {
		method, path string
		want         bool
	}{
		{"PUT", "/apis/infrastructure.cluster.x-k8s.io/v1beta2/namespaces/a/openstackclusters/c/status", true},
		{"PATCH", "/api/v1/namespaces/a/pods/p/status", true},
		{"PATCH", "/api/v1/namespaces/a/pods/p/status/", true},
		{"GET", "/api/v1/namespaces/a/pods/p/status", false},
		{"PUT", "/api/v1/namespaces/a/pods/p", false},
		{"PATCH", "/api/v1/namespaces/a/configmaps/status", false}, // a ConfigMap named status: no subresource
		{"POST", "/api/v1/namespaces/a/pods/p/status", false},
	} {
		if got := IsStatusWrite(tc.method, tc.path); got != tc.want {
			t.Errorf("IsStatusWrite(%s %s) = %v, want %v", tc.method, tc.path, got, tc.want)
		}
	}
	for q, want := range map[string]bool{"watch=true": true, "watch=1": true, "watch=false": false, "": false, "labelSelector=watch": false} {
		if got := IsWatch(&url.URL{RawQuery: q}); got != want {
			t.Errorf("IsWatch(%q) = %v, want %v", q, got, want)
		}
	}
}

// TestAPIProxyFaults runs the proxy in front of a stand-in server: every
// status write is answered 409 as the API server would (client-go reads
// it as a conflict), other requests pass, a watch is cut after its life,
// and an outage refuses connections, then serves again.
func TestAPIProxyFaults(t *testing.T) {
	var forwarded []string
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		forwarded = append(forwarded, r.Method+" "+r.URL.Path)
		if IsWatch(r.URL) {
			w.WriteHeader(http.StatusOK)
			for {
				if _, err := fmt.Fprintln(w, `{"type":"BOOKMARK"}`); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
					return
				case <-time.After(20 * time.Millisecond):
				}
			}
		}
		fmt.Fprint(w, "{}")
	}))
	defer backend.Close()
	p, err := NewAPIProxy(&rest.Config{Host: backend.URL}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer closeProxy(t, p)
	p.SetFaults(1, 100*time.Millisecond, 200*time.Millisecond)

	do := func(method, path string) (*http.Response, error) {
		req, _ := http.NewRequest(method, p.URL()+path, strings.NewReader("{}"))
		return http.DefaultClient.Do(req)
	}
	resp, err := do("PUT", "/apis/infrastructure.cluster.x-k8s.io/v1beta2/namespaces/ns/openstackclusters/c1/status")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	var st metav1.Status
	if err := json.Unmarshal(body, &st); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusConflict || !apierrors.IsConflict(&apierrors.StatusError{ErrStatus: st}) ||
		st.Details == nil || st.Details.Name != "c1" || st.Details.Group != "infrastructure.cluster.x-k8s.io" || st.Details.Kind != "openstackclusters" {
		t.Errorf("want a Conflict Status naming the object, got %d %s", resp.StatusCode, body)
	}
	if len(forwarded) != 0 {
		t.Errorf("a refused write must not reach the server: %v", forwarded)
	}
	resp, err = do("PUT", "/api/v1/namespaces/ns/configmaps/c")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("a plain write passes: %v %v", resp, err)
	}
	_ = resp.Body.Close()

	// A watch is cut after its life (100-200 ms), not left open.
	start := time.Now()
	resp, err = do("GET", "/api/v1/namespaces/ns/configmaps?watch=true")
	if err != nil {
		t.Fatal(err)
	}
	events := 0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		events++
	}
	_ = resp.Body.Close()
	if d := time.Since(start); d > 5*time.Second || events == 0 {
		t.Errorf("the watch streamed %d events and ended after %s", events, d)
	}
	waitFor(t, func() bool { return p.Stats().WatchesCut == 1 })

	// An outage refuses connections while it lasts.
	done := make(chan error, 1)
	go func() { done <- p.Outage(500 * time.Millisecond) }()
	waitFor(t, func() bool {
		_, err := do("GET", "/api/v1/namespaces")
		return err != nil
	})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	resp, err = do("GET", "/api/v1/namespaces")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("after the outage the proxy serves again: %v %v", resp, err)
	}
	_ = resp.Body.Close()

	s := p.Stats()
	if s.StatusWrites != 1 || s.Conflicts != 1 || s.Watches != 1 || s.WatchesCut != 1 || s.Outages != 1 {
		t.Errorf("stats %+v", s)
	}
}

// TestAPIProxyConflictRate: a share p of status writes is refused.
func TestAPIProxyConflictRate(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "{}") }))
	defer backend.Close()
	p, err := NewAPIProxy(&rest.Config{Host: backend.URL}, 7)
	if err != nil {
		t.Fatal(err)
	}
	defer closeProxy(t, p)
	p.SetFaults(0.25, 0, 0)
	for range 400 {
		req, _ := http.NewRequestWithContext(context.Background(), "PATCH", p.URL()+"/api/v1/namespaces/a/pods/x/status", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
	}
	if s := p.Stats(); s.StatusWrites != 400 || s.Conflicts < 60 || s.Conflicts > 140 {
		t.Errorf("25%% of 400 status writes refused, want about 100: %+v", s)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 10 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func closeProxy(t *testing.T, p *APIProxy) {
	t.Helper()
	if err := p.Close(); err != nil {
		t.Error(err)
	}
}
