// Package authority is the state machine of the authority switch between
// the Machine API (MAPI) and Cluster API (CAPI), for a MachineSet or a
// Machine: given what the two sides say, it decides the one next step of
// the migration controller. It is pure (no client, no clock) and names the
// conditions and reasons both the migration and the sync controllers
// write. docs/addon/migration.md describes the states and rules.
//
// The fields (machine.openshift.io/v1beta1, MachineAPIMigration):
//
//   - spec.authoritativeAPI: MachineAPI or ClusterAPI, what the user wants;
//   - status.authoritativeAPI: MachineAPI, ClusterAPI or Migrating, who acts
//     now; the API server allows MachineAPI <-> ClusterAPI only through
//     Migrating, and never removes it once set;
//   - status.synchronizedAPI: the side the non-authoritative one was last
//     synchronized from (written by the sync controllers); during Migrating
//     it is the side the switch comes from, so a request to go back (spec
//     set back to it) is told apart from the switch itself;
//   - status.synchronizedGeneration: the generation of that side the
//     other mirrors; the Synchronized condition says whether it does.
//
// The rules: a switch starts only when the other side mirrors the current
// generation of the authoritative one; the old side is paused and must
// say so before status moves on; the new side is unpaused only after
// status names it. So both sides are never unpaused at once, and every
// state in which both are paused has a way forward: setting spec back to
// status.synchronizedAPI goes back at once.
package authority

import (
	"fmt"

	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
)

// API is an authoritative API.
type API = mapiv1beta1.MachineAuthority

// The values.
const (
	MachineAPI = mapiv1beta1.MachineAuthorityMachineAPI
	ClusterAPI = mapiv1beta1.MachineAuthorityClusterAPI
	Migrating  = mapiv1beta1.MachineAuthorityMigrating
)

// Acting is the API that acts on a resource now: status.authoritativeAPI,
// or, until the migration controller has set it, spec.authoritativeAPI,
// which defaults to MachineAPI.
func Acting(status, spec API) API {
	if status != "" {
		return status
	}
	if spec != "" {
		return spec
	}
	return MachineAPI
}

// State is what the migration controller reads of one resource.
type State struct {
	// Spec is spec.authoritativeAPI ("" is MachineAPI, the default).
	Spec API
	// Status is status.authoritativeAPI ("" until set).
	Status API
	// SynchronizedAPI is status.synchronizedAPI ("" until a sync wrote it).
	SynchronizedAPI API
	// Synchronized: the Synchronized condition is True and
	// synchronizedGeneration is the current generation of the side named
	// by SynchronizedAPI.
	Synchronized bool
	// SyncCatchingUp: the Synchronized condition is True, but for an
	// older generation: the sync has not seen the last change yet (a
	// change of spec.authoritativeAPI is one).
	SyncCatchingUp bool
	// SyncMessage is the Synchronized condition's message, to repeat when
	// the switch waits for it.
	SyncMessage string
	// CAPIExists: the CAPI object (and, for a Machine, its infrastructure
	// machine) exists.
	CAPIExists bool
	// MAPIPaused: the MAPI object's Paused condition is True (the Machine
	// API operator stopped acting on it).
	MAPIPaused bool
	// CAPIPauseRequested: every CAPI object has the pause annotation.
	CAPIPauseRequested bool
	// CAPIPaused: every CAPI object has it and says Paused. A missing CAPI
	// object counts as paused and as asked to pause: nothing acts for it.
	CAPIPaused bool
}

// Step is what the controller does next.
type Step int

// The steps, one per pass.
const (
	// Done: nothing to do; status is spec and the sides are as they
	// should be.
	Done Step = iota
	// Wait: nothing to write but the condition; Reason says for what.
	Wait
	// SetStatus: write status.authoritativeAPI = Target (first visit).
	SetStatus
	// StartMigration: write status.authoritativeAPI = Migrating.
	StartMigration
	// Handover: write status.authoritativeAPI = Target, leaving Migrating;
	// when the source changes, reset the sync status (Synchronized Unknown
	// with ReasonAuthoritativeAPIChanged, synchronizedGeneration removed).
	Handover
	// PauseCAPI: add the pause annotation to every CAPI object.
	PauseCAPI
	// UnpauseCAPI: remove it.
	UnpauseCAPI
)

func (s Step) String() string {
	return [...]string{"Done", "Wait", "SetStatus", "StartMigration", "Handover", "PauseCAPI", "UnpauseCAPI"}[s]
}

// Decision is the next step, and the Migrated condition to report with it.
type Decision struct {
	Step Step
	// Target of SetStatus and Handover.
	Target API
	// ResetSync: the handover changes the source of the sync.
	ResetSync bool
	// Quiet: a Wait whose condition is not written: the sync is about to
	// catch up, or a pause was just asked for (the condition of the step
	// that asked says what runs).
	Quiet bool
	// Condition is the Migrated condition after the step.
	Condition Condition
}

// Condition is the wanted Migrated condition.
type Condition struct {
	// True: status is spec, the switch (if any) is complete.
	True bool
	// Blocked: the switch waits for something that needs a fix (severity
	// Warning), not for progress (severity Info).
	Blocked bool
	Reason  string
	Message string
}

// Decide returns the next step for s.
func Decide(s State) Decision {
	target := s.Spec
	if target == "" {
		target = MachineAPI
	}
	switch s.Status {
	case "":
		// The first visit: status starts where spec says (as the Machine
		// API operator does when no migration controller runs).
		return Decision{Step: SetStatus, Target: target, Condition: reached(target)}
	case target:
		if target == ClusterAPI && s.CAPIPauseRequested {
			// After a handover, or a pause someone else added: the
			// authoritative side runs.
			return Decision{Step: UnpauseCAPI, Condition: reached(target)}
		}
		return Decision{Step: Done, Condition: reached(target)}
	case Migrating:
		return decideMigrating(s, target)
	default:
		return decideSwitch(s, s.Status, target)
	}
}

// decideSwitch: status is source, spec asks for target.
func decideSwitch(s State, source, target API) Decision {
	switch {
	case !s.CAPIExists && target == ClusterAPI:
		return wait(true, ReasonWaitingForPartner,
			"spec.authoritativeAPI is ClusterAPI, but the Cluster API object does not exist yet; the MAPI to CAPI sync makes it")
	case s.SynchronizedAPI == source && !s.Synchronized && s.SyncCatchingUp:
		d := wait(false, ReasonWaitingForSync, "waiting for the sync of the last change")
		d.Quiet = true
		return d
	case s.SynchronizedAPI != source || !s.Synchronized:
		msg := fmt.Sprintf("spec.authoritativeAPI is %s: waiting until the %s side mirrors the current generation of the %s side (Synchronized True, status.synchronizedAPI %s)",
			target, sideName(target), sideName(source), source)
		if s.SyncMessage != "" {
			msg += "; Synchronized says: " + s.SyncMessage
		}
		return wait(true, ReasonWaitingForSync, msg)
	case source == ClusterAPI && !s.CAPIPauseRequested:
		return Decision{Step: PauseCAPI, Condition: progressing(ReasonPausingOldSide, "pausing the Cluster API side before handing authority to the Machine API")}
	case source == ClusterAPI && !s.CAPIPaused:
		return waitForPause("waiting until the Cluster API objects report Paused")
	}
	return Decision{Step: StartMigration, Condition: progressing(ReasonMigrating,
		fmt.Sprintf("handing authority from %s to %s", source, target))}
}

// decideMigrating: status is Migrating; the switch comes from
// synchronizedAPI (or, when no sync ever wrote it, from the other side than
// spec's).
func decideMigrating(s State, target API) Decision {
	from := s.SynchronizedAPI
	if from == "" {
		from = other(target)
	}
	if from == target {
		// Back to where the switch came from: nothing was unpaused yet.
		return Decision{Step: Handover, Target: target, Condition: progressing(ReasonMigrating,
			fmt.Sprintf("spec.authoritativeAPI is %s again: going back", target))}
	}
	switch from {
	case MachineAPI:
		if !s.CAPIExists {
			// The new side went away mid-switch: go back, so that the
			// sync makes it again; the switch is retried then.
			return Decision{Step: Handover, Target: MachineAPI, Condition: Condition{Blocked: true, Reason: ReasonWaitingForPartner,
				Message: "the Cluster API object was deleted during the switch: authority went back to MachineAPI; the switch is retried once the sync has made it again"}}
		}
		if !s.MAPIPaused {
			return waitForPause("waiting until the Machine API object reports Paused (the Machine API operator stops acting on it)")
		}
	case ClusterAPI:
		if !s.CAPIPauseRequested {
			return Decision{Step: PauseCAPI, Condition: progressing(ReasonPausingOldSide, "pausing the Cluster API side")}
		}
		if !s.CAPIPaused {
			return waitForPause("waiting until the Cluster API objects report Paused")
		}
	}
	return Decision{Step: Handover, Target: target, ResetSync: true, Condition: reached(target)}
}

func reached(target API) Condition {
	return Condition{True: true, Reason: ReasonReached, Message: fmt.Sprintf("%s is authoritative, as spec.authoritativeAPI asks", target)}
}

func progressing(reason, msg string) Condition { return Condition{Reason: reason, Message: msg} }

func wait(blocked bool, reason, msg string) Decision {
	return Decision{Step: Wait, Condition: Condition{Blocked: blocked, Reason: reason, Message: msg}}
}

// waitForPause: the pause was asked for in the step before, whose
// condition (Migrating, PausingOldSide) says what runs; the answer comes
// at once from a working controller, so the wait is not written.
func waitForPause(msg string) Decision {
	d := wait(false, ReasonWaitingForPause, msg)
	d.Quiet = true
	return d
}

func other(a API) API {
	if a == ClusterAPI {
		return MachineAPI
	}
	return ClusterAPI
}

func sideName(a API) string {
	if a == ClusterAPI {
		return "Cluster API"
	}
	return "Machine API"
}
