package machinesetsync

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/ocp-capi/ocp-capi/internal/addon/controllers/write"
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

// removeFinalizers drops finalizers from o (write.RemoveFinalizers).
func (r *Reconciler) removeFinalizers(ctx context.Context, o client.Object, finalizers ...string) error {
	return write.RemoveFinalizers(ctx, r.Client, o, FieldOwner, finalizers...)
}
