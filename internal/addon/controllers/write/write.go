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
//     apply under its own field manager (machinesetsync/condition.go);
//   - finalizers removed from an object that may have changed since it was
//     read: a JSON patch that tests each entry (machinesetsync/delete.go);
//   - stopping a build, two fields of an object the controller made: one
//     fixed merge patch (osbuild.Backend.Stop).
package write

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"
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
