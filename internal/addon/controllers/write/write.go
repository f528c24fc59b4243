// Package write holds the add-on's helper for the one write its two
// reconcilers share: a JSON merge patch that carries the object's
// resourceVersion (an optimistic lock). Each object the add-on writes gets
// one kind of write, chosen by who else writes it; docs/addon/
// machineset-sync.md ("Writes") and docs/addon/build-controller.md
// ("Behaviour details") give the table. In short:
//
//   - fields only the add-on writes, on an object it made (the CAPI
//     mirror's status): CAPI's patch helper (sigs.k8s.io/cluster-api/util/patch);
//   - fields of an object others write too, when a merge patch would
//     replace a list they also write (finalizers, ownerReferences, the MCO's
//     atomic pool conditions), or when the write must not land on an object
//     that changed since it was read (a pool's image): LockedPatch and
//     LockedStatusPatch;
//   - the MAPI MachineSet's Synchronized condition, one entry of a
//     map-keyed list that the migration controller writes too: server-side
//     apply under its own field manager (ApplySynchronized);
//   - finalizers removed from an object that may have changed since it was
//     read: a JSON patch that tests each entry (RemoveFinalizers);
//   - stopping a build, two fields of an object the controller made: one
//     fixed merge patch (osbuild.Backend.Stop).
package write

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
)

// LockedPatch writes the changes mutate makes to obj as a JSON merge patch
// that carries obj's resourceVersion, so that the API server refuses it
// (a conflict) if obj changed since it was read. mutate reports whether it
// changed anything; if not, nothing is written. On success obj holds the
// API server's answer (its new resourceVersion and generation).
func LockedPatch(ctx context.Context, c client.Client, obj client.Object, mutate func() bool, opts ...client.PatchOption) error {
	return locked(obj, mutate, func(p client.Patch) error { return c.Patch(ctx, obj, p, opts...) })
}

// LockedStatusPatch is LockedPatch for the status subresource.
func LockedStatusPatch(ctx context.Context, c client.Client, obj client.Object, mutate func() bool, opts ...client.SubResourcePatchOption) error {
	return locked(obj, mutate, func(p client.Patch) error { return c.Status().Patch(ctx, obj, p, opts...) })
}

func locked(obj client.Object, mutate func() bool, send func(client.Patch) error) error {
	base, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return fmt.Errorf("cannot copy %s", obj.GetName())
	}
	if !mutate() {
		return nil
	}
	return send(client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
}

// RemoveFinalizers drops finalizers from o with a JSON patch that tests
// each entry before removing it: it needs no resourceVersion (the object
// may have changed since it was read, for example by being deleted) and
// never touches other finalizers. An object already gone is no error.
func RemoveFinalizers(ctx context.Context, c client.Client, o client.Object, fieldOwner string, finalizers ...string) error {
	var ops []map[string]any
	fs := o.GetFinalizers()
	for i := len(fs) - 1; i >= 0; i-- {
		if slices.Contains(finalizers, fs[i]) {
			p := fmt.Sprintf("/metadata/finalizers/%d", i)
			ops = append(ops, map[string]any{"op": "test", "path": p, "value": fs[i]}, map[string]any{"op": "remove", "path": p})
		}
	}
	if len(ops) == 0 {
		return nil
	}
	data, err := json.Marshal(ops)
	if err != nil {
		return err
	}
	return client.IgnoreNotFound(c.Patch(ctx, o, client.RawPatch(types.JSONPatchType, data), client.FieldOwner(fieldOwner)))
}

// ApplySynchronized writes c, and gen and api once set, to the status of
// obj, a MAPI Machine or MachineSet of kind, by server-side apply under
// fieldOwner with obj's resourceVersion, and stores the API server's answer
// in obj. An apply because the object is MAPI's and the migration
// controller writes the same fields: conditions is a map-keyed list, so the
// apply owns just this entry. gen and api, once set, are always written, so
// that the field manager never drops them (the CRD refuses dropping
// synchronizedGeneration; the migration controller reads synchronizedAPI);
// zero and empty are left out, as other writers' clients (omitempty) leave
// them out and the CRD would refuse their updates after an explicit zero.
func ApplySynchronized(ctx context.Context, c client.Client, obj client.Object, kind string, cond mapiv1beta1.Condition,
	gen int64, api mapiv1beta1.SynchronizedAPI, fieldOwner string) error {
	entry := map[string]any{"type": string(cond.Type), "status": string(cond.Status), "reason": cond.Reason,
		"lastTransitionTime": cond.LastTransitionTime.UTC().Format(time.RFC3339)}
	if cond.Message != "" {
		entry["message"] = cond.Message
	}
	if cond.Severity != "" {
		entry["severity"] = string(cond.Severity)
	}
	status := map[string]any{"conditions": []any{entry}}
	if gen > 0 {
		status["synchronizedGeneration"] = gen
	}
	if api != "" {
		status["synchronizedAPI"] = string(api)
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": mapiv1beta1.GroupVersion.String(), "kind": kind,
		"metadata": map[string]any{"name": obj.GetName(), "namespace": obj.GetNamespace(), "resourceVersion": obj.GetResourceVersion()},
		"status":   status,
	}}
	if err := c.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(fieldOwner), client.ForceOwnership); err != nil {
		return fmt.Errorf("writing the Synchronized condition: %w", err)
	}
	return runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj)
}
