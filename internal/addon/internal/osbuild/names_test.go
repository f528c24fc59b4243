package osbuild

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

func TestPoolLabelValue(t *testing.T) {
	long := strings.Repeat("a", 64)
	tests := []struct {
		pool, want string
	}{
		{"worker", "worker"},
		{"infra.example", "infra.example"},
		{long, "pool-" + hash(long)[:32]},
	}
	for _, tt := range tests {
		if got := PoolLabelValue(tt.pool); got != tt.want {
			t.Errorf("PoolLabelValue(%q) = %q, want %q", tt.pool, got, tt.want)
		}
	}
}

func TestNamesFor(t *testing.T) {
	tests := []struct {
		pool, id string
		want     Names
	}{
		{"worker", "0123456789abcdef", Names{
			Stem: "worker-0123456789abcdef", Build: "build-worker-0123456789abcdef", Inputs: "mc-worker-0123456789abcdef"}},
		{"infra.dc1", "0123456789abcdef", Names{
			Stem: "infra-dc1-0123456789abcdef", Build: "build-infra-dc1-0123456789abcdef", Inputs: "mc-infra-dc1-0123456789abcdef"}},
		// Truncated to 40 characters; a trailing dash is trimmed.
		{strings.Repeat("p", 39) + "-x", "0123456789abcdef", Names{
			Stem:   strings.Repeat("p", 39) + "-0123456789abcdef",
			Build:  "build-" + strings.Repeat("p", 39) + "-0123456789abcdef",
			Inputs: "mc-" + strings.Repeat("p", 39) + "-0123456789abcdef"}},
	}
	for _, tt := range tests {
		if got := NamesFor(tt.pool, tt.id); got != tt.want {
			t.Errorf("NamesFor(%q) = %+v, want %+v", tt.pool, got, tt.want)
		}
	}
}

// FuzzNamesFor: whatever the pool name, the names are valid object names
// and label values (Job names end up in a label).
func FuzzNamesFor(f *testing.F) {
	for _, s := range []string{"worker", "a", strings.Repeat("x.y-", 60), "infra.example.com", "-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, pool string) {
		if len(validation.IsDNS1123Subdomain(pool)) > 0 {
			return // not a possible pool name: nothing to check
		}
		id := Inputs{Pool: pool}.ID()
		n := NamesFor(pool, id)
		for _, name := range []string{n.Build, n.Inputs} {
			if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
				t.Fatalf("%q: %v", name, errs)
			}
			if errs := validation.IsValidLabelValue(name); len(errs) > 0 {
				t.Fatalf("%q is not a label value: %v", name, errs)
			}
		}
		if !strings.HasSuffix(n.Stem, id) {
			t.Fatalf("stem %q does not end with the id %q", n.Stem, id)
		}
		if errs := validation.IsValidLabelValue(PoolLabelValue(pool)); len(errs) > 0 {
			t.Fatalf("PoolLabelValue(%q): %v", pool, errs)
		}
	})
}
