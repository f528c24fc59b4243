package authority

import "testing"

// TestDecide: one row per rule of docs/addon/migration.md ("Rules").
func TestDecide(t *testing.T) {
	synced := func(api API) State {
		return State{Spec: ClusterAPI, Status: api, SynchronizedAPI: api, Synchronized: true, CAPIExists: true}
	}
	tests := []struct {
		name   string
		state  State
		step   Step
		target API
		reset  bool
		reason string
		true_  bool
	}{
		{name: "first visit: status is spec", state: State{Spec: ClusterAPI}, step: SetStatus, target: ClusterAPI, true_: true, reason: ReasonReached},
		{name: "first visit, spec empty: MachineAPI", state: State{}, step: SetStatus, target: MachineAPI, true_: true, reason: ReasonReached},
		{name: "steady MachineAPI", state: State{Spec: MachineAPI, Status: MachineAPI, CAPIPauseRequested: true}, step: Done, true_: true, reason: ReasonReached},
		{name: "steady ClusterAPI", state: State{Spec: ClusterAPI, Status: ClusterAPI, CAPIExists: true}, step: Done, true_: true, reason: ReasonReached},
		{name: "ClusterAPI with a pause left: unpause", state: State{Spec: ClusterAPI, Status: ClusterAPI, CAPIExists: true, CAPIPauseRequested: true}, step: UnpauseCAPI, true_: true, reason: ReasonReached},

		{name: "to CAPI, out of sync: wait", state: func() State { s := synced(MachineAPI); s.Synchronized = false; return s }(), step: Wait, reason: ReasonWaitingForSync},
		{name: "to CAPI, synchronized from the wrong side: wait", state: func() State { s := synced(MachineAPI); s.SynchronizedAPI = ClusterAPI; return s }(), step: Wait, reason: ReasonWaitingForSync},
		{name: "to CAPI, no CAPI object: wait", state: func() State { s := synced(MachineAPI); s.CAPIExists = false; return s }(), step: Wait, reason: ReasonWaitingForPartner},
		{name: "to CAPI, the sync catching up: wait quietly", state: func() State { s := synced(MachineAPI); s.Synchronized, s.SyncCatchingUp = false, true; return s }(), step: Wait, reason: ReasonWaitingForSync},
		{name: "to CAPI, in sync: Migrating", state: synced(MachineAPI), step: StartMigration, reason: ReasonMigrating},
		{name: "to CAPI, Migrating, MAPI not paused: wait", state: func() State { s := synced(MachineAPI); s.Status = Migrating; return s }(), step: Wait, reason: ReasonWaitingForPause},
		{name: "to CAPI, Migrating, MAPI paused: hand over", state: func() State { s := synced(MachineAPI); s.Status = Migrating; s.MAPIPaused = true; return s }(), step: Handover, target: ClusterAPI, reset: true, true_: true, reason: ReasonReached},
		{name: "to CAPI, Migrating, CAPI object deleted: back to MachineAPI", state: func() State {
			s := synced(MachineAPI)
			s.Status, s.CAPIExists, s.MAPIPaused = Migrating, false, true
			return s
		}(), step: Handover, target: MachineAPI, reason: ReasonWaitingForPartner},
		{name: "cancel while Migrating to CAPI", state: State{Spec: MachineAPI, Status: Migrating, SynchronizedAPI: MachineAPI, Synchronized: true, CAPIExists: true}, step: Handover, target: MachineAPI, reason: ReasonMigrating},

		{name: "rollback, out of sync: wait, nothing paused", state: State{Spec: MachineAPI, Status: ClusterAPI, SynchronizedAPI: MachineAPI, Synchronized: true, CAPIExists: true}, step: Wait, reason: ReasonWaitingForSync},
		{name: "rollback, in sync: pause CAPI", state: State{Spec: MachineAPI, Status: ClusterAPI, SynchronizedAPI: ClusterAPI, Synchronized: true, CAPIExists: true}, step: PauseCAPI, reason: ReasonPausingOldSide},
		{name: "rollback, pause asked: wait for it", state: State{Spec: MachineAPI, Status: ClusterAPI, SynchronizedAPI: ClusterAPI, Synchronized: true, CAPIExists: true, CAPIPauseRequested: true}, step: Wait, reason: ReasonWaitingForPause},
		{name: "rollback, paused: Migrating", state: State{Spec: MachineAPI, Status: ClusterAPI, SynchronizedAPI: ClusterAPI, Synchronized: true, CAPIExists: true, CAPIPauseRequested: true, CAPIPaused: true}, step: StartMigration, reason: ReasonMigrating},
		{name: "rollback, Migrating: hand over", state: State{Spec: MachineAPI, Status: Migrating, SynchronizedAPI: ClusterAPI, Synchronized: true, CAPIExists: true, CAPIPauseRequested: true, CAPIPaused: true}, step: Handover, target: MachineAPI, reset: true, true_: true, reason: ReasonReached},
		{name: "rollback, Migrating, pause removed by someone: pause again", state: State{Spec: MachineAPI, Status: Migrating, SynchronizedAPI: ClusterAPI, CAPIExists: true}, step: PauseCAPI, reason: ReasonPausingOldSide},
		{name: "cancel of a rollback: back to ClusterAPI (unpaused next)", state: State{Spec: ClusterAPI, Status: Migrating, SynchronizedAPI: ClusterAPI, CAPIExists: true, CAPIPauseRequested: true, CAPIPaused: true}, step: Handover, target: ClusterAPI, reason: ReasonMigrating},
		{name: "Migrating without synchronizedAPI: from the other side than spec", state: State{Spec: ClusterAPI, Status: Migrating, CAPIExists: true, MAPIPaused: true}, step: Handover, target: ClusterAPI, reset: true, true_: true, reason: ReasonReached},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Decide(tt.state)
			if d.Step != tt.step || d.Target != tt.target || d.ResetSync != tt.reset {
				t.Errorf("step %v target %q reset %v, want %v %q %v", d.Step, d.Target, d.ResetSync, tt.step, tt.target, tt.reset)
			}
			if d.Condition.True != tt.true_ || d.Condition.Reason != tt.reason || d.Condition.Message == "" {
				t.Errorf("condition %+v, want true=%v reason %s", d.Condition, tt.true_, tt.reason)
			}
		})
	}
}

// TestNeverBothUnpaused walks every state and checks the invariants the
// decisions keep: a step that unpauses CAPI happens only while status
// names ClusterAPI (the Machine API operator is paused then), a handover
// to ClusterAPI only after the MAPI side said Paused (or back to where the
// switch came from, where CAPI was never unpaused), a handover to
// MachineAPI only with CAPI paused (or a cancel of a switch to CAPI, which
// never unpaused it); and from every state with both sides paused, setting
// spec back to where the switch came from leads to a step forward.
func TestNeverBothUnpaused(t *testing.T) {
	apis := []API{"", MachineAPI, ClusterAPI, Migrating}
	for _, spec := range []API{MachineAPI, ClusterAPI} {
		for _, status := range apis {
			for _, from := range []API{"", MachineAPI, ClusterAPI} {
				for mask := range 64 {
					s := State{Spec: spec, Status: status, SynchronizedAPI: from,
						Synchronized: mask&1 != 0, CAPIExists: mask&2 != 0, MAPIPaused: mask&4 != 0,
						CAPIPauseRequested: mask&8 != 0, CAPIPaused: mask&16 != 0 && mask&8 != 0}
					d := Decide(s)
					switch {
					case d.Step == UnpauseCAPI && s.Status != ClusterAPI:
						t.Errorf("%+v: unpauses CAPI while status is %q", s, s.Status)
					case d.Step == Handover && d.Target == ClusterAPI && s.Status == Migrating && from != ClusterAPI && (from != "" || spec != MachineAPI) && !s.MAPIPaused:
						t.Errorf("%+v: hands over to CAPI before MAPI said Paused", s)
					case d.Step == Handover && d.Target == MachineAPI && from == ClusterAPI && !s.CAPIPaused:
						t.Errorf("%+v: hands over to MAPI before CAPI said Paused", s)
					}
					if s.Status == Migrating && from != "" {
						back := s
						back.Spec = from
						if d := Decide(back); d.Step != Handover || d.Target != from {
							t.Errorf("%+v: going back to %s gives %v %q, want a handover to it", back, from, d.Step, d.Target)
						}
					}
				}
			}
		}
	}
}

// TestActing: status wins once set (Migrating included); before that, spec;
// a resource from before the migration fields is MachineAPI's.
func TestActing(t *testing.T) {
	for _, tc := range []struct{ status, spec, want API }{
		{"", "", MachineAPI},
		{"", ClusterAPI, ClusterAPI},
		{"", MachineAPI, MachineAPI},
		{MachineAPI, ClusterAPI, MachineAPI},
		{Migrating, ClusterAPI, Migrating},
		{ClusterAPI, MachineAPI, ClusterAPI},
	} {
		if got := Acting(tc.status, tc.spec); got != tc.want {
			t.Errorf("Acting(status %q, spec %q) = %q, want %q", tc.status, tc.spec, got, tc.want)
		}
	}
}
