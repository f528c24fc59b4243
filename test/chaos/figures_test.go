package chaos

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

func TestSpread(t *testing.T) {
	for _, tt := range []struct {
		in   []time.Duration
		want string
	}{
		{nil, "-"},
		{[]time.Duration{1234 * time.Millisecond}, "1.2s median (max 1.2s)"},
		{[]time.Duration{9 * time.Second, time.Second, 3 * time.Second}, "3s median (max 9s)"},
	} {
		in := append([]time.Duration(nil), tt.in...)
		if got := Spread(tt.in); got != tt.want {
			t.Errorf("Spread(%v) = %q, want %q", in, got, tt.want)
		}
		for i := range in {
			if in[i] != tt.in[i] {
				t.Errorf("Spread reordered its argument: %v", tt.in)
			}
		}
	}
}

func TestLoadAverage(t *testing.T) {
	got := LoadAverage()
	if _, err := os.Stat("/proc/loadavg"); err != nil {
		if got != "unknown" {
			t.Errorf("LoadAverage() = %q without /proc/loadavg", got)
		}
		return
	}
	if !regexp.MustCompile(`^[0-9.]+ [0-9.]+ [0-9.]+$`).MatchString(got) {
		t.Errorf("LoadAverage() = %q, want three numbers", got)
	}
}

func TestTail(t *testing.T) {
	p := filepath.Join(t.TempDir(), "log")
	if err := os.WriteFile(p, []byte("a\nb\nc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for n, want := range map[int]string{1: "c", 2: "b\nc", 5: "a\nb\nc"} {
		if got := Tail(p, n); got != want {
			t.Errorf("Tail(%d) = %q, want %q", n, got, want)
		}
	}
	if got := Tail(filepath.Join(t.TempDir(), "none"), 3); got != "" {
		t.Errorf("Tail of a missing file = %q, want \"\"", got)
	}
}
