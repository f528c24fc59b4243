package machinesetsync

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
)

// reconcileDelete handles a MAPI MachineSet being deleted. If the Machine
// API is authoritative, its mirror and the templates the controller created
// for it are deleted; otherwise Cluster API runs the CAPI side and only the
// sync finalizers go. The MAPI finalizer goes last, and nothing waits on
// objects that are already gone.
func (r *Reconciler) reconcileDelete(ctx context.Context, ms *mapiv1beta1.MachineSet, mirror *clusterv1.MachineSet) error {
	if !controllerutil.ContainsFinalizer(ms, SyncFinalizer) {
		return nil
	}
	if Authority(ms) == mapiv1beta1.MachineAuthorityMachineAPI {
		if err := r.deleteMirror(ctx, ms, mirror); err != nil {
			return err
		}
		if err := r.cleanupTemplates(ctx, ms.Name, "", ms, true); err != nil {
			return err
		}
	} else if mirror != nil {
		if err := r.removeFinalizers(ctx, mirror, SyncFinalizer); err != nil {
			return err
		}
	}
	return r.removeFinalizers(ctx, ms, SyncFinalizer)
}

// reconcileOrphan handles what is left when the MAPI MachineSet is gone: a
// mirror with the sync finalizer, and templates the controller created. A
// paused mirror the controller created is deleted with its templates; any
// other mirror (Cluster API is authoritative, or it is not the
// controller's) only loses the sync finalizer.
func (r *Reconciler) reconcileOrphan(ctx context.Context, name string, mirror *clusterv1.MachineSet) error {
	if mirror == nil {
		return r.cleanupTemplates(ctx, name, "", nil, true)
	}
	if !controllerutil.ContainsFinalizer(mirror, SyncFinalizer) {
		return nil
	}
	ours := mirror.Annotations[CreatedForAnnotation] == name && isPaused(mirror)
	if !ours && mirror.DeletionTimestamp.IsZero() {
		return r.removeFinalizers(ctx, mirror, SyncFinalizer)
	}
	if err := r.deleteMirror(ctx, mirror, mirror); err != nil {
		return err
	}
	return r.cleanupTemplates(ctx, name, "", nil, true)
}

// deleteMirror deletes the mirror, if any, and lets it go (releaseMirror).
func (r *Reconciler) deleteMirror(ctx context.Context, regarding client.Object, mirror *clusterv1.MachineSet) error {
	if mirror == nil {
		return nil
	}
	if mirror.DeletionTimestamp.IsZero() {
		uid := mirror.UID
		if err := r.Client.Delete(ctx, mirror, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
			return err
		}
		r.Recorder.Eventf(regarding, mirror, corev1.EventTypeNormal, EventMirrorDeleted, "Delete", "Deleted the CAPI MachineSet %s/%s", mirror.Namespace, mirror.Name)
	}
	return r.releaseMirror(ctx, mirror)
}

// removeFinalizers drops finalizers from o with a JSON patch that tests
// each entry before removing it: it needs no resourceVersion (the object may
// have changed since it was read, for example by being deleted) and never
// touches other finalizers.
func (r *Reconciler) removeFinalizers(ctx context.Context, o client.Object, finalizers ...string) error {
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
	return client.IgnoreNotFound(r.Client.Patch(ctx, o, client.RawPatch(types.JSONPatchType, data), client.FieldOwner(FieldOwner)))
}
