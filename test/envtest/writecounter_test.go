package envtest

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestResourceOf(t *testing.T) {
	for path, want := range map[string]string{
		"/api/v1/namespaces/ns1/secrets/s":                                                  "secrets",
		"/api/v1/namespaces/ns1/secrets":                                                    "secrets",
		"/apis/cluster.x-k8s.io/v1beta2/namespaces/ns1/machines/m1/status":                  "machines/status",
		"/apis/bootstrap.cluster.x-k8s.io/v1alpha2/namespaces/n/openshiftassistedconfigs/c": "openshiftassistedconfigs",
		// Cluster-scoped: the resource, without the name.
		"/apis/hive.openshift.io/v1/clusterimagesets/img-4.19":    "clusterimagesets",
		"/apis/apiextensions.k8s.io/v1/customresourcedefinitions": "customresourcedefinitions",
		// A namespace itself is no namespaced object.
		"/api/v1/namespaces/ns1": "/api/v1/namespaces/ns1",
		"/api/v1/nodes/n1":       "/api/v1/nodes/n1",
	} {
		if got := ResourceOf(path); got != want {
			t.Errorf("ResourceOf(%q) = %q, want %q", path, got, want)
		}
	}
}

// TestWriteCounter: reads are not counted, writes are, by method and
// resource, conflicts once more as "409", and the first ten are kept with
// their bodies.
func TestWriteCounter(t *testing.T) {
	w := &WriteCounter{}
	rt := w.Wrap(roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		code := http.StatusOK
		if strings.HasSuffix(r.URL.Path, "/conflict") {
			code = http.StatusConflict
		}
		return &http.Response{StatusCode: code, Body: io.NopCloser(strings.NewReader(""))}, nil
	}))
	send := func(method, path, body string) {
		t.Helper()
		var r *http.Request
		var err error
		if body == "" {
			r, err = http.NewRequest(method, "https://127.0.0.1"+path, nil)
		} else {
			r, err = http.NewRequest(method, "https://127.0.0.1"+path, strings.NewReader(body))
		}
		if err != nil {
			t.Fatal(err)
		}
		resp, err := rt.RoundTrip(r)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
	}
	const machines = "/apis/cluster.x-k8s.io/v1beta2/namespaces/ns/machines/"
	send(http.MethodGet, machines+"m1", "")
	send(http.MethodHead, machines+"m1", "")
	if n := w.Load(); n != 0 {
		t.Fatalf("reads counted as writes: %d (%v)", n, w.Seen())
	}
	send(http.MethodPatch, machines+"m1/status", `{"status":{}}`)
	send(http.MethodPatch, machines+"m2/status", `{"status":{}}`)
	send(http.MethodPut, machines+"conflict", `{}`)
	send(http.MethodDelete, machines+"m3", "")
	if n := w.Load(); n != 4 {
		t.Errorf("Load() = %d, want 4", n)
	}
	want := map[string]int{"PATCH machines/status": 2, "PUT machines": 1, "409 PUT machines": 1, "DELETE machines": 1}
	got := w.Breakdown()
	if len(got) != len(want) {
		t.Errorf("Breakdown() = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("Breakdown()[%q] = %d, want %d (all: %v)", k, got[k], v, got)
		}
	}
	seen := w.Seen()
	if len(seen) != 4 || seen[0] != "PATCH "+machines+`m1/status {"status":{}}` || seen[3] != "DELETE "+machines+"m3" {
		t.Errorf("Seen() = %q", seen)
	}
	for i := range 20 {
		send(http.MethodPost, machines, strings.Repeat("x", i))
	}
	if n, s := w.Load(), w.Seen(); n != 24 || len(s) != 10 {
		t.Errorf("after 24 writes: Load() = %d, len(Seen()) = %d; want 24 and the first 10", n, len(s))
	}
	if len(seen) != 4 {
		t.Errorf("a slice Seen returned changed afterwards: %q", seen)
	}
}
