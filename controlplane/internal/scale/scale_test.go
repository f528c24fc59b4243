package scale

import (
	"fmt"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func m(name, fd string, age int, deleting bool) Machine {
	return Machine{Name: name, FailureDomain: fd, Created: t0.Add(time.Duration(age) * time.Minute), Deleting: deleting}
}

func TestFailureDomainForScaleUp(t *testing.T) {
	fds := []string{"a", "b", "c"}
	for _, tc := range []struct {
		name     string
		fds      []string
		machines []Machine
		want     string
	}{
		{"no failure domains", nil, []Machine{m("x", "", 0, false)}, ""},
		{"empty: first", fds, nil, "a"},
		{"spread", fds, []Machine{m("1", "a", 0, false)}, "b"},
		{"spread 2", fds, []Machine{m("1", "a", 0, false), m("2", "b", 1, false)}, "c"},
		{"all equal: first", fds, []Machine{m("1", "a", 0, false), m("2", "b", 1, false), m("3", "c", 2, false)}, "a"},
		{"deleting ones do not count", fds, []Machine{m("1", "a", 0, true), m("2", "b", 1, false), m("3", "c", 2, false)}, "a"},
		{"unknown failure domains do not count", fds, []Machine{m("1", "z", 0, false), m("2", "a", 1, false)}, "b"},
	} {
		if got := FailureDomainForScaleUp(tc.fds, tc.machines); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestMachineToDelete(t *testing.T) {
	for _, tc := range []struct {
		name     string
		machines []Machine
		want     string
	}{
		{"none", nil, ""},
		{"only deleting", []Machine{m("1", "a", 0, true)}, ""},
		{"no failure domains: oldest", []Machine{m("new", "", 5, false), m("old", "", 1, false)}, "old"},
		{"most populated, oldest in it", []Machine{m("a1", "a", 0, false), m("b1", "b", 1, false), m("b2", "b", 3, false), m("c1", "c", 2, false)}, "b1"},
		{"oldest overall is elsewhere", []Machine{m("a1", "a", 0, false), m("b1", "b", 5, false), m("b2", "b", 6, false)}, "b1"},
		{"tie: the group with the oldest", []Machine{m("a1", "a", 4, false), m("b1", "b", 1, false)}, "b1"},
		{"deleting ones do not count", []Machine{m("a1", "a", 0, false), m("a2", "a", 1, true), m("b1", "b", 2, false), m("b2", "b", 3, false)}, "b1"},
		{"same time: by name", []Machine{m("y", "a", 0, false), m("x", "a", 0, false)}, "x"},
	} {
		if got := MachineToDelete(tc.machines); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// FuzzSpreading scales up from nothing to n Machines and down again, and
// checks the spread stays within one Machine between failure domains.
func FuzzSpreading(f *testing.F) {
	f.Add(uint8(3), uint8(5))
	f.Add(uint8(1), uint8(3))
	f.Add(uint8(4), uint8(0))
	f.Fuzz(func(t *testing.T, nfd, n uint8) {
		var fds []string
		for i := range int(nfd % 6) {
			fds = append(fds, fmt.Sprintf("fd-%d", i))
		}
		var machines []Machine
		for i := range int(n % 12) {
			fd := FailureDomainForScaleUp(fds, machines)
			machines = append(machines, m(fmt.Sprintf("m%02d", i), fd, i, false))
			checkSpread(t, fds, machines)
		}
		for len(machines) > 0 {
			victim := MachineToDelete(machines)
			if victim == "" {
				t.Fatal("no machine to delete")
			}
			for i := range machines {
				if machines[i].Name == victim {
					machines = append(machines[:i], machines[i+1:]...)
					break
				}
			}
			checkSpread(t, fds, machines)
		}
	})
}

func checkSpread(t *testing.T, fds []string, machines []Machine) {
	t.Helper()
	if len(fds) == 0 {
		return
	}
	counts := map[string]int{}
	for _, m := range machines {
		counts[m.FailureDomain]++
	}
	lo, hi := len(machines), 0
	for _, fd := range fds {
		lo, hi = min(lo, counts[fd]), max(hi, counts[fd])
	}
	if hi-lo > 1 {
		t.Fatalf("spread %v over %v", counts, fds)
	}
}
