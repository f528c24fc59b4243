/*
Copyright 2026 The ocp-capi Authors.

SPDX-License-Identifier: Apache-2.0
*/

package v1beta1

import "testing"

// TestStateNames: the states are assisted-service's names, as
// docs/controlplane.md's table and docs/assisted-simulator.md spell them.
func TestStateNames(t *testing.T) {
	for got, want := range map[string]string{
		StateInsufficient:             "insufficient",
		StatePendingForInput:          "pending-for-input",
		StateReady:                    "ready",
		StatePreparingForInstallation: "preparing-for-installation",
		StateInstalling:               "installing",
		StateInstallingPendingUser:    "installing-pending-user-action",
		StateFinalizing:               "finalizing",
		StateInstalled:                "installed",
		StateAddingHosts:              "adding-hosts",
		StateError:                    "error",
		StateCancelled:                "cancelled",
	} {
		if got != want {
			t.Errorf("state constant %q, want %q", got, want)
		}
	}
}
