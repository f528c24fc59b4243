package osbuild

import (
	"reflect"
	"strings"
	"testing"
)

func img(c string) string { return "registry.example.com:5000/mco/os@sha256:" + strings.Repeat(c, 64) }

// TestHistoryPush: newest first, one entry per ID and image, at most keep;
// what falls off is returned for pruning.
func TestHistoryPush(t *testing.T) {
	var h History
	h, dropped := h.Push(HistoryEntry{ID: "a", Image: img("a"), Config: "rendered-a"}, 2)
	if len(h) != 1 || dropped != nil {
		t.Fatalf("first push: %v %v", h, dropped)
	}
	h, _ = h.Push(HistoryEntry{ID: "b", Image: img("b"), Config: "rendered-b"}, 2)
	h, dropped = h.Push(HistoryEntry{ID: "c", Image: img("c"), Config: "rendered-c"}, 2)
	if got := []string{h[0].ID, h[1].ID}; !reflect.DeepEqual(got, []string{"c", "b"}) || len(dropped) != 1 || dropped[0].ID != "a" {
		t.Errorf("after c: %v, dropped %v", h, dropped)
	}
	// Publishing b again (reuse) moves it first and drops nothing.
	h, dropped = h.Push(HistoryEntry{ID: "b", Image: img("b"), Config: "rendered-b2"}, 2)
	if h[0].Config != "rendered-b2" || len(h) != 2 || dropped != nil {
		t.Errorf("reuse of b: %v, dropped %v", h, dropped)
	}
	// A forced rebuild of b pushes a new image for its ID: the old image
	// falls off, to be pruned.
	h, dropped = h.Push(HistoryEntry{ID: "b", Image: img("e"), Config: "rendered-b2", PushSecret: "push"}, 2)
	if h[0].Image != img("e") || len(h) != 2 || h[1].ID != "c" || len(dropped) != 1 || dropped[0].Image != img("b") {
		t.Errorf("rebuild of b: %v, dropped %v", h, dropped)
	}
	// Round trip through the annotation; garbage reads as empty.
	if got := ParseHistory(h.String()); !reflect.DeepEqual(got, h) {
		t.Errorf("round trip: %v", got)
	}
	if ParseHistory("{not json") != nil || History(nil).String() != "" {
		t.Error("garbage or empty history")
	}
	if h.Find("b") == nil || h.Find("a") != nil {
		t.Error("Find")
	}
}

func TestParseDigestedImageAndCredentials(t *testing.T) {
	ref, err := ParseDigestedImage(img("d"))
	if err != nil || ref.Registry != "registry.example.com:5000" || ref.Repository != "mco/os" || ref.String() != img("d") {
		t.Errorf("ParseDigestedImage = %+v, %v", ref, err)
	}
	for _, bad := range []string{"mco/os@sha256:" + strings.Repeat("d", 64), "registry.example.com/os:tag", "registry.example.com/os@sha256:12"} {
		if _, err := ParseDigestedImage(bad); err == nil {
			t.Errorf("ParseDigestedImage(%q) accepted", bad)
		}
	}
	cfg := []byte(`{"auths":{"https://registry.example.com:5000/v2/":{"auth":"dXNlcjpwYXNz"},"quay.io":{"username":"u","password":"p"}}}`)
	if c, ok := CredentialsFor(cfg, "registry.example.com:5000"); !ok || c != (Credentials{"user", "pass"}) {
		t.Errorf("auth entry: %+v %v", c, ok)
	}
	if c, ok := CredentialsFor(cfg, "quay.io"); !ok || c != (Credentials{"u", "p"}) {
		t.Errorf("username entry: %+v %v", c, ok)
	}
	if _, ok := CredentialsFor(cfg, "other.io"); ok {
		t.Error("no entry for other.io")
	}
}
