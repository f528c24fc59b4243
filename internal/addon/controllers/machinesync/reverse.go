package machinesync

import (
	"context"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/ocp-capi/ocp-capi/internal/addon/controllers/write"
	"github.com/ocp-capi/ocp-capi/internal/addon/internal/authority"
	"github.com/ocp-capi/ocp-capi/internal/addon/internal/capi2mapi"
	"github.com/ocp-capi/ocp-capi/internal/addon/internal/mapi2capi"
	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
)

// reconcileReverse keeps a MAPI Machine whose authority is Cluster API a
// mirror of its CAPI Machine and infrastructure machine: spec, the
// providers' labels and annotations, ownerReference and status.
func (r *Reconciler) reconcileReverse(ctx context.Context, s *scope) error {
	m := s.mapi
	if s.capi == nil || !s.capi.DeletionTimestamp.IsZero() {
		return r.reconcileCAPIGone(ctx, s)
	}
	if err := write.LockedPatch(ctx, r.Client, m, func() bool { return controllerutil.AddFinalizer(m, SyncFinalizer) }, client.FieldOwner(FieldOwner)); err != nil {
		return err
	}
	desired, warnings, fwd, err := r.reverse(ctx, s)
	if err != nil {
		return err
	}
	if err := r.updateMAPIMachine(ctx, s, desired, fwd); err != nil {
		return r.fail(ctx, m, ReasonMAPIWriteFailed, "Cannot update the MAPI Machine: "+err.Error(), err)
	}
	if err := r.updateMAPIStatus(ctx, m, desired); err != nil {
		return r.fail(ctx, m, ReasonMAPIWriteFailed, "Cannot update the MAPI Machine's status: "+err.Error(), err)
	}
	return r.setSynchronized(ctx, m, synced(mapiv1beta1.SynchronizedAPIClusterAPI, s.capi.Generation, warnings))
}

// reverse converts the CAPI side of s into the MAPI Machine that mirrors
// it, owned by the MAPI MachineSet of its CAPI MachineSet's name when that
// exists. Failures are reported on s.mapi (when there is one; else a
// refusal is a Warning event on the CAPI Machine).
func (r *Reconciler) reverse(ctx context.Context, s *scope) (*mapiv1beta1.Machine, []string, mapi2capi.Infra, error) {
	fwd, err := r.context(ctx)
	if err != nil {
		return nil, nil, fwd, r.fail(ctx, s.mapi, ReasonInfraUnavailable, "Cannot read the Infrastructure cluster: "+err.Error(), err)
	}
	if s.infra == nil {
		ref := s.capi.Spec.InfrastructureRef
		err := fmt.Errorf("the %s %s/%s of the CAPI Machine does not exist", ref.Kind, r.CAPINamespace, ref.Name)
		return nil, nil, fwd, r.fail(ctx, s.mapi, ReasonInfraUnavailable, err.Error(), err)
	}
	desired, warnings, errs := capi2mapi.Machine(s.capi, s.infra, capi2mapi.InfraOf(fwd, r.MAPINamespace))
	if len(errs) > 0 {
		msg := "Cannot convert the CAPI Machine back to the Machine API; fix these fields: " + errs.ToAggregate().Error()
		if s.mapi == nil {
			r.Recorder.Eventf(s.capi, nil, corev1.EventTypeWarning, ReasonReverseConversionFailed, "Sync", "%s", msg)
			return nil, nil, fwd, authority.ErrRefused
		}
		return nil, nil, fwd, r.refuse(ctx, s.mapi, ReasonReverseConversionFailed, msg)
	}
	if desired.OwnerReferences, err = r.mapiOwner(ctx, s.capi); err != nil {
		return nil, nil, fwd, err
	}
	return desired, warnings, fwd, nil
}

// mapiOwner is the ownerReference to the MAPI MachineSet of the name of
// c's CAPI MachineSet, if both exist.
func (r *Reconciler) mapiOwner(ctx context.Context, c *clusterv1.Machine) ([]metav1.OwnerReference, error) {
	msName, ok := machineSetOwner(c.OwnerReferences, clusterv1.GroupVersion.Group)
	if !ok {
		return nil, nil
	}
	ms := &mapiv1beta1.MachineSet{}
	if found, err := r.get(ctx, r.MAPINamespace, msName, ms); err != nil || !found {
		return nil, err
	}
	return []metav1.OwnerReference{ownerRef(mapiv1beta1.GroupVersion.String(), "MachineSet", ms)}, nil
}

// updateMAPIMachine brings the MAPI Machine's metadata and spec in line
// with desired. The spec is written only when the Machine no longer
// converts into the CAPI one (its form may differ from capi2mapi's; its
// meaning may not); the user's choice of authority and others'
// finalizers stay. The Machine is MAPI's: a locked merge patch.
func (r *Reconciler) updateMAPIMachine(ctx context.Context, s *scope, desired *mapiv1beta1.Machine, fwd mapi2capi.Infra) error {
	m := s.mapi
	specOK := mirrors(m, s.capi, s.infra, fwd)
	wantSpec := desired.Spec.DeepCopy()
	wantSpec.AuthoritativeAPI = m.Spec.AuthoritativeAPI
	wantAnnotations := maps.Clone(desired.Annotations)
	if v, ok := m.Annotations[mapi2capi.LastAppliedAnnotation]; ok {
		if wantAnnotations == nil {
			wantAnnotations = map[string]string{}
		}
		wantAnnotations[mapi2capi.LastAppliedAnnotation] = v
	}
	wantRefs := mergeRefs(m.OwnerReferences, desired.OwnerReferences)
	return write.LockedPatch(ctx, r.Client, m, func() bool {
		if maps.Equal(m.Labels, desired.Labels) && maps.Equal(m.Annotations, wantAnnotations) && slices.Equal(m.OwnerReferences, wantRefs) &&
			(specOK || sameJSON(m.Spec, wantSpec)) {
			return false
		}
		m.Labels, m.Annotations, m.OwnerReferences = desired.Labels, wantAnnotations, wantRefs
		if !specOK {
			m.Spec = *wantSpec
		}
		return true
	}, client.FieldOwner(FieldOwner))
}

// updateMAPIStatus copies the status CAPI reports into the MAPI Machine.
// The Machine API operator is paused for it; a locked merge patch of the
// changed fields, which leaves the conditions list alone.
func (r *Reconciler) updateMAPIStatus(ctx context.Context, m *mapiv1beta1.Machine, desired *mapiv1beta1.Machine) error {
	d := desired.Status
	return write.LockedStatusPatch(ctx, r.Client, m, func() bool {
		st := &m.Status
		before := st.DeepCopy()
		st.NodeRef, st.Addresses, st.Phase, st.ErrorReason, st.ErrorMessage = d.NodeRef, d.Addresses, d.Phase, d.ErrorReason, d.ErrorMessage
		return !apiequality.Semantic.DeepEqual(before, st)
	}, client.FieldOwner(FieldOwner))
}

// createMAPIMirror makes the MAPI Machine of a CAPI Machine that a CAPI
// MachineSet made after Cluster API became authoritative for it (the
// MAPI MachineSet of the same name exists): authority ClusterAPI from the
// start, so that the Machine API operator never acts on it.
func (r *Reconciler) createMAPIMirror(ctx context.Context, s *scope) error {
	// Without a MAPI MachineSet it is a machine of Cluster API alone, which
	// need not convert.
	if owner, err := r.mapiOwner(ctx, s.capi); err != nil || len(owner) == 0 {
		return err
	}
	desired, _, _, err := r.reverse(ctx, s)
	if err != nil {
		return err
	}
	m := desired.DeepCopy()
	m.Status = mapiv1beta1.MachineStatus{}
	m.Spec.AuthoritativeAPI = mapiv1beta1.MachineAuthorityClusterAPI
	m.Finalizers = []string{SyncFinalizer}
	if m.Annotations == nil {
		m.Annotations = map[string]string{}
	}
	m.Annotations[CreatedForAnnotation] = s.name
	if err := r.Client.Create(ctx, m, client.FieldOwner(FieldOwner)); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("MAPI Machine %s: %w", m.Name, errCacheBehind)
		}
		return err
	}
	r.Recorder.Eventf(s.capi, m, corev1.EventTypeNormal, EventCreated, "Create", "Created the MAPI Machine %s/%s that mirrors it", m.Namespace, m.Name)
	return nil
}
