package machinesetsync

import (
	"testing"

	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
)

// TestAuthority: status.authoritativeAPI wins over spec (a switch asked for
// but not made yet, or a status the migration controller has not caught up
// with), spec counts only until status is set, and MachineAPI is the
// default. (With the migration controllers running, as in the add-on's
// suite, a status that differs from spec does not last: they start a
// switch at once. So the rule is tested here, on the function Reconcile
// decides by.)
func TestAuthority(t *testing.T) {
	const (
		mapi      = mapiv1beta1.MachineAuthorityMachineAPI
		capi      = mapiv1beta1.MachineAuthorityClusterAPI
		migrating = mapiv1beta1.MachineAuthorityMigrating
	)
	for _, tt := range []struct {
		spec, status, want mapiv1beta1.MachineAuthority
	}{
		{spec: capi, status: mapi, want: mapi},
		{spec: mapi, status: capi, want: capi},
		{spec: capi, status: migrating, want: migrating},
		{spec: capi, want: capi},
		{spec: mapi, want: mapi},
		{want: mapi},
	} {
		ms := &mapiv1beta1.MachineSet{}
		ms.Spec.AuthoritativeAPI, ms.Status.AuthoritativeAPI = tt.spec, tt.status
		if got := Authority(ms); got != tt.want {
			t.Errorf("spec %q, status %q: %q, want %q", tt.spec, tt.status, got, tt.want)
		}
	}
}
