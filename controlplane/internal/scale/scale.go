// Package scale decides where a control plane grows and what it sheds: the
// failure domain of the next control-plane Machine, and the Machine to
// delete when there are too many. It is pure: no client, no I/O.
package scale

import (
	"slices"
	"strings"
	"time"
)

// Machine is what the decisions need to know of a control-plane Machine.
type Machine struct {
	Name          string
	FailureDomain string
	Created       time.Time
	Deleting      bool
}

// FailureDomainForScaleUp is the failure domain of the next Machine: of the
// control-plane failure domains, the one with the fewest Machines that are
// not being deleted; ties go to the first in failureDomains (callers pass
// them sorted). "" when there are none.
func FailureDomainForScaleUp(failureDomains []string, machines []Machine) string {
	if len(failureDomains) == 0 {
		return ""
	}
	counts := map[string]int{}
	for _, m := range machines {
		if !m.Deleting {
			counts[m.FailureDomain]++
		}
	}
	best := failureDomains[0]
	for _, fd := range failureDomains[1:] {
		if counts[fd] < counts[best] {
			best = fd
		}
	}
	return best
}

// MachineToDelete is the Machine a scale down deletes: the oldest one of
// the most populated failure domain, so that the rest stays spread. Machines
// are grouped by their failure domain as set (unknown and empty ones form
// groups of their own); of equally populated groups, the one holding the
// oldest Machine goes first. Machines being deleted are not candidates and
// do not count. "" when there is no candidate.
func MachineToDelete(machines []Machine) string {
	groups := map[string][]Machine{}
	for _, m := range machines {
		if !m.Deleting {
			groups[m.FailureDomain] = append(groups[m.FailureDomain], m)
		}
	}
	var pick []Machine
	for _, g := range groups {
		slices.SortFunc(g, olderFirst)
		if pick == nil || len(g) > len(pick) || (len(g) == len(pick) && olderFirst(g[0], pick[0]) < 0) {
			pick = g
		}
	}
	if len(pick) == 0 {
		return ""
	}
	return pick[0].Name
}

// olderFirst orders Machines by creation, then by name.
func olderFirst(a, b Machine) int {
	if c := a.Created.Compare(b.Created); c != 0 {
		return c
	}
	return strings.Compare(a.Name, b.Name)
}
