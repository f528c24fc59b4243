package machinesync

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/cluster-api/util/annotations"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/ocp-capi/ocp-capi/internal/addon/controllers/write"
	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
)

// reconcileMAPIDeletion handles a MAPI Machine being deleted. The
// authoritative side deletes the machine's resources, then the mirror
// goes:
//
//   - Machine API authoritative: once the Machine API's actuator is done
//     (its finalizer gone), the paused CAPI objects are deleted and let go;
//   - Cluster API authoritative: the CAPI Machine is deleted, and once
//     Cluster API has deleted it (and its server or host), the MAPI
//     Machine's finalizers go, the Machine API operator's included (it is
//     paused, and would never remove it);
//   - Migrating: nothing moves until the handover is done.
func (r *Reconciler) reconcileMAPIDeletion(ctx context.Context, s *scope) error {
	m := s.mapi
	if !controllerutil.ContainsFinalizer(m, SyncFinalizer) {
		return nil
	}
	switch Authority(m) {
	case mapiv1beta1.MachineAuthorityMachineAPI:
		if controllerutil.ContainsFinalizer(m, mapiv1beta1.MachineFinalizer) {
			return nil // the actuator is still deleting the instance
		}
		if err := r.deleteCAPIMirror(ctx, s); err != nil {
			return err
		}
		return write.RemoveFinalizers(ctx, r.Client, m, FieldOwner, SyncFinalizer)
	case mapiv1beta1.MachineAuthorityClusterAPI:
		if s.capi != nil {
			return r.deleteCAPIMachine(ctx, s)
		}
		return write.RemoveFinalizers(ctx, r.Client, m, FieldOwner, SyncFinalizer, mapiv1beta1.MachineFinalizer)
	}
	return r.setSynchronized(ctx, m, migratingCondition())
}

// deleteCAPIMirror deletes the paused CAPI side of a MAPI-authoritative
// machine and lets it go. A CAPI Machine that is not paused is Cluster
// API's to delete: only the sync's finalizer goes.
func (r *Reconciler) deleteCAPIMirror(ctx context.Context, s *scope) error {
	if s.capi == nil {
		return r.releaseCAPI(ctx, s)
	}
	if !annotations.HasPaused(s.capi) {
		return write.RemoveFinalizers(ctx, r.Client, s.capi, FieldOwner, SyncFinalizer)
	}
	if s.capi.DeletionTimestamp.IsZero() {
		uid := s.capi.UID
		if err := r.Client.Delete(ctx, s.capi, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
			return err
		}
		r.Recorder.Eventf(s.mapi, s.capi, corev1.EventTypeNormal, EventDeleted, "Delete", "Deleted the paused CAPI Machine %s/%s", s.capi.Namespace, s.capi.Name)
	}
	return r.releaseCAPI(ctx, s)
}

// deleteCAPIMachine deletes the authoritative CAPI Machine of a MAPI
// Machine being deleted; Cluster API deletes its resources. The sync's
// finalizer must not hold it.
func (r *Reconciler) deleteCAPIMachine(ctx context.Context, s *scope) error {
	if s.capi.DeletionTimestamp.IsZero() {
		uid := s.capi.UID
		if err := r.Client.Delete(ctx, s.capi, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
			return err
		}
		r.Recorder.Eventf(s.mapi, s.capi, corev1.EventTypeNormal, EventDeleted, "Delete", "Deleted the CAPI Machine %s/%s, which Cluster API runs", s.capi.Namespace, s.capi.Name)
	}
	return write.RemoveFinalizers(ctx, r.Client, s.capi, FieldOwner, SyncFinalizer)
}

// reconcileCAPIGone: a Cluster API-authoritative MAPI Machine whose CAPI
// Machine is being deleted (Cluster API deletes the resources: the sync's
// finalizer must not hold it), or is gone: then its mirror goes, with the
// finalizers nobody else would remove.
func (r *Reconciler) reconcileCAPIGone(ctx context.Context, s *scope) error {
	if s.capi != nil {
		return write.RemoveFinalizers(ctx, r.Client, s.capi, FieldOwner, SyncFinalizer)
	}
	m := s.mapi
	if m.DeletionTimestamp.IsZero() {
		uid := m.UID
		if err := r.Client.Delete(ctx, m, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
			return err
		}
		r.Recorder.Eventf(m, nil, corev1.EventTypeNormal, EventDeleted, "Delete", "The CAPI Machine %s/%s is gone; its MAPI mirror is deleted", r.CAPINamespace, m.Name)
	}
	return write.RemoveFinalizers(ctx, r.Client, m, FieldOwner, SyncFinalizer, mapiv1beta1.MachineFinalizer)
}

// reconcileNoMAPI handles a CAPI Machine without a MAPI one: a mirror the
// sync made whose MAPI Machine vanished (deleted and let go), or a machine
// a CAPI MachineSet made after Cluster API became authoritative, which
// gets its MAPI mirror.
func (r *Reconciler) reconcileNoMAPI(ctx context.Context, s *scope) error {
	c := s.capi
	switch {
	case c == nil:
		return nil
	case !c.DeletionTimestamp.IsZero():
		return r.releaseCAPIIfMirror(ctx, s)
	case annotations.HasPaused(c) && c.Annotations[CreatedForAnnotation] == s.name:
		// A paused mirror of nothing: nothing runs it.
		return r.deleteCAPIMirror(ctx, s)
	case annotations.HasPaused(c):
		return nil
	}
	return r.createMAPIMirror(ctx, s)
}

// releaseCAPIIfMirror lets a deleted CAPI Machine go: all its finalizers
// when it is the sync's paused mirror, else only the sync's.
func (r *Reconciler) releaseCAPIIfMirror(ctx context.Context, s *scope) error {
	if annotations.HasPaused(s.capi) && s.capi.Annotations[CreatedForAnnotation] == s.name {
		return r.releaseCAPI(ctx, s)
	}
	return write.RemoveFinalizers(ctx, r.Client, s.capi, FieldOwner, SyncFinalizer)
}
