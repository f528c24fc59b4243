/*
Copyright 2026 The ocp-capi Authors.

SPDX-License-Identifier: Apache-2.0
*/

package consumed_test

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	machinev1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
)

// TestAuthorityTransitionRules: the API server (with upstream's CRDs, or
// ours, which carry the same rules) enforces the authority switch's rules
// that the migration controller relies on: no direct MachineAPI↔ClusterAPI
// move, authoritativeAPI never removed once set, and synchronizedGeneration
// removed or lowered only in the write that leaves Migrating.
func TestAuthorityTransitionRules(t *testing.T) {
	e := testEnv(t)
	ctx := context.Background()
	ns, err := e.NewNamespace(ctx, "consumed-authority")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("MachineSet CRD from %s", e.CRDSources()["machinesets.machine.openshift.io"])
	ms := &machinev1beta1.MachineSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "rules"}}
	if err := e.Client.Create(ctx, ms); err != nil {
		t.Fatal(err)
	}
	// status merge patches, with the outcome the CRD's rules give.
	steps := []struct {
		patch   string
		refused string // substring of the refusal; empty: accepted
	}{
		{`{"status":{"authoritativeAPI":"MachineAPI","synchronizedAPI":"MachineAPI","synchronizedGeneration":3}}`, ""},
		{`{"status":{"authoritativeAPI":"ClusterAPI"}}`, "must transition through Migrating"},
		{`{"status":{"authoritativeAPI":null}}`, "may not be removed once set"},
		{`{"status":{"synchronizedGeneration":2}}`, "must not decrease"},
		{`{"status":{"authoritativeAPI":"Migrating"}}`, ""},
		{`{"status":{"synchronizedGeneration":null}}`, "must not decrease"},
		{`{"status":{"authoritativeAPI":"ClusterAPI","synchronizedGeneration":null}}`, ""},
		{`{"status":{"authoritativeAPI":"MachineAPI"}}`, "must transition through Migrating"},
		{`{"status":{"authoritativeAPI":"Migrating"}}`, ""},
		// A cancel: back to where it came from.
		{`{"status":{"authoritativeAPI":"ClusterAPI"}}`, ""},
	}
	for i, s := range steps {
		err := e.Client.Status().Patch(ctx, ms, client.RawPatch(types.MergePatchType, []byte(s.patch)))
		switch {
		case s.refused == "" && err != nil:
			t.Fatalf("step %d %s: refused: %v", i, s.patch, err)
		case s.refused != "" && err == nil:
			t.Fatalf("step %d %s: accepted, want refused with %q", i, s.patch, s.refused)
		case s.refused != "" && (!apierrors.IsInvalid(err) || !strings.Contains(err.Error(), s.refused)):
			t.Fatalf("step %d %s: refused with %v, want %q", i, s.patch, err, s.refused)
		}
	}
}
