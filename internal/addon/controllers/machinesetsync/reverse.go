package machinesetsync

import (
	"context"
	"fmt"
	"maps"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/ocp-capi/ocp-capi/internal/addon/controllers/write"
	"github.com/ocp-capi/ocp-capi/internal/addon/internal/capi2mapi"
	"github.com/ocp-capi/ocp-capi/internal/addon/internal/mapi2capi"
	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
	"github.com/ocp-capi/ocp-capi/internal/jsonfields"
)

// Reasons of the Synchronized condition while Cluster API is
// authoritative (upstream's names).
const (
	// ReasonReverseConversionFailed (False): the CAPI MachineSet or its
	// template has something the Machine API cannot express; the message
	// names each field by its path in the CAPI object.
	ReasonReverseConversionFailed = "FailedToConvertCAPIMachineSetToMAPI"
	// ReasonMAPIUpdateFailed (False): the API server refused the update of
	// the MAPI MachineSet.
	ReasonMAPIUpdateFailed = "FailedToUpdateMAPIMachineSet"
)

// EventMAPIMachineSetDeleted: the CAPI MachineSet, which was
// authoritative, is gone, and so is its MAPI mirror.
const EventMAPIMachineSetDeleted = "MAPIMachineSetDeleted"

// reconcileFromCAPI keeps ms, whose CAPI MachineSet (mirror) Cluster API
// runs, a mirror of it: spec, labels and annotations through capi2mapi,
// and the status CAPI reports. The MAPI spec is written only when the
// MAPI MachineSet no longer converts into the CAPI one (its form may
// differ from the one capi2mapi writes; its meaning may not).
func (r *Reconciler) reconcileFromCAPI(ctx context.Context, ms *mapiv1beta1.MachineSet, mirror *clusterv1.MachineSet) error {
	if mirror == nil || !mirror.DeletionTimestamp.IsZero() {
		if ms.Status.SynchronizedAPI == "" && mirror == nil {
			// Created with Cluster API authoritative: the first sync
			// makes the CAPI MachineSet, which Cluster API runs at once.
			return r.reconcileInitial(ctx, ms)
		}
		return r.deleteMAPIMirror(ctx, ms, mirror)
	}
	if err := r.addFinalizer(ctx, ms); err != nil {
		return err
	}
	fwd, err := r.infra(ctx)
	if err != nil {
		return r.fail(ctx, ms, ReasonInfraUnavailable, "Cannot read the Infrastructure cluster: "+err.Error(), err)
	}
	tmpl, err := r.mirrorTemplate(ctx, mirror)
	if err != nil {
		return r.fail(ctx, ms, ReasonInfraUnavailable, err.Error(), err)
	}
	desired, warnings, errs := capi2mapi.MachineSet(mirror, tmpl, capi2mapi.InfraOf(fwd, r.MAPINamespace))
	if len(errs) > 0 {
		return r.refuse(ctx, ms, ReasonReverseConversionFailed, "Cannot convert the CAPI MachineSet back to the Machine API; fix these fields: "+errs.ToAggregate().Error())
	}
	if !mirrors(ms, mirror, tmpl, fwd) {
		if err := r.updateMAPISpec(ctx, ms, desired); err != nil {
			return r.fail(ctx, ms, ReasonMAPIUpdateFailed, "Cannot update the MAPI MachineSet: "+err.Error(), err)
		}
	}
	if err := r.updateMAPIStatus(ctx, ms, desired, mirror); err != nil {
		return r.fail(ctx, ms, ReasonMAPIUpdateFailed, "Cannot update the MAPI MachineSet's status: "+err.Error(), err)
	}
	return r.setSynchronized(ctx, ms, condition{
		Status: corev1.ConditionTrue, Reason: ReasonSynchronized, Message: synchronizedMessage(warnings), Warnings: warnings,
		SourceAPI: mapiv1beta1.SynchronizedAPIClusterAPI, SourceGen: mirror.Generation,
	})
}

// reconcileInitial makes the CAPI MachineSet of a MAPI MachineSet created
// with Cluster API authoritative: not paused (upstream bug #299).
func (r *Reconciler) reconcileInitial(ctx context.Context, ms *mapiv1beta1.MachineSet) error {
	if err := r.addFinalizer(ctx, ms); err != nil {
		return err
	}
	c, err := r.convert(ctx, ms)
	if err != nil {
		return err
	}
	mirror, err := r.createMirror(ctx, ms, c.desired, false)
	if err != nil {
		return r.fail(ctx, ms, ReasonCreateFailed, "Cannot create the CAPI MachineSet: "+err.Error(), err)
	}
	if reason, err := r.ensureTemplate(ctx, ms.Name, c.tk, c.tmpl, mirror); err != nil {
		return r.fail(ctx, ms, reason, err.Error(), err)
	}
	return r.setSynchronized(ctx, ms, condition{
		Status: corev1.ConditionTrue, Reason: ReasonSynchronized, Message: synchronizedMessage(c.warnings), Warnings: c.warnings,
	})
}

// mirrorTemplate reads the template the CAPI MachineSet points at.
func (r *Reconciler) mirrorTemplate(ctx context.Context, mirror *clusterv1.MachineSet) (client.Object, error) {
	ref := mirror.Spec.Template.Spec.InfrastructureRef
	tk, ok := r.templateKind(ref.Kind)
	if !ok || ref.APIGroup != mapi2capi.InfrastructureGroup {
		return nil, fmt.Errorf("the CAPI MachineSet's infrastructureRef names a %s (%s), which the sync does not convert or whose CRD is not installed", ref.Kind, ref.APIGroup)
	}
	tmpl := tk.newObj()
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: r.CAPINamespace, Name: ref.Name}, tmpl); err != nil {
		return nil, fmt.Errorf("cannot read the %s %s of the CAPI MachineSet: %w", ref.Kind, ref.Name, err)
	}
	return tmpl, nil
}

// mirrors tells whether ms, converted as the forward sync converts it,
// gives the CAPI MachineSet and template there are: then it already says
// what they say, whatever its form. The template's name is not compared
// (a user may point the MachineSet at a template of another name), nor the
// sync's and CAPI's own annotations.
func mirrors(ms *mapiv1beta1.MachineSet, mirror *clusterv1.MachineSet, tmpl client.Object, fwd mapi2capi.Infra) bool {
	want, wantTmpl, _, errs := mapi2capi.MachineSet(ms, fwd)
	if len(errs) > 0 {
		return false
	}
	got := mirror.DeepCopy()
	want.Spec.Template.Spec.InfrastructureRef.Name = got.Spec.Template.Spec.InfrastructureRef.Name
	wantSpec, err := roundTrip(&want.Spec)
	if err != nil {
		return false
	}
	same, err := jsonfields.Same(templateSpec(wantTmpl), templateSpec(tmpl))
	return err == nil && same && apiequality.Semantic.DeepEqual(*wantSpec, got.Spec) &&
		equalMaps(want.Labels, got.Labels) && equalMaps(userAnnotations(want.Annotations), userAnnotations(got.Annotations))
}

// userAnnotations drops the pause and the sync's marks.
func userAnnotations(in map[string]string) map[string]string {
	out := maps.Clone(in)
	delete(out, clusterv1.PausedAnnotation)
	for k := range out {
		if strings.HasPrefix(k, "sync.machine.openshift.io/") {
			delete(out, k)
		}
	}
	return out
}

// updateMAPISpec writes desired's labels, annotations and spec to ms,
// keeping the user's choice of authority (both authoritativeAPI fields).
// The object is MAPI's: a merge patch that carries the resourceVersion,
// since its finalizers and other writers' fields are not ours to replace.
func (r *Reconciler) updateMAPISpec(ctx context.Context, ms *mapiv1beta1.MachineSet, desired *mapiv1beta1.MachineSet) error {
	want := desired.DeepCopy()
	want.Spec.AuthoritativeAPI = ms.Spec.AuthoritativeAPI
	want.Spec.Template.Spec.AuthoritativeAPI = ms.Spec.Template.Spec.AuthoritativeAPI
	wantSpec, err := roundTrip(&want.Spec)
	if err != nil {
		return err
	}
	return write.LockedPatch(ctx, r.Client, ms, func() bool {
		same, err := jsonfields.Same(ms.Spec, wantSpec)
		if err == nil && same && equalMaps(ms.Labels, want.Labels) && equalMaps(ms.Annotations, want.Annotations) {
			return false
		}
		ms.Labels, ms.Annotations, ms.Spec = want.Labels, want.Annotations, *wantSpec
		return true
	}, client.FieldOwner(FieldOwner))
}

// updateMAPIStatus copies the status CAPI reports into ms, the fields
// MAPI has (observedGeneration once CAPI's status describes its current
// generation). MAPI's own controller is paused; a locked merge patch of
// the changed fields, which leaves the conditions list alone.
func (r *Reconciler) updateMAPIStatus(ctx context.Context, ms *mapiv1beta1.MachineSet, desired *mapiv1beta1.MachineSet, mirror *clusterv1.MachineSet) error {
	d := desired.Status
	return write.LockedStatusPatch(ctx, r.Client, ms, func() bool {
		st := &ms.Status
		before := st.DeepCopy()
		st.Replicas, st.ReadyReplicas, st.AvailableReplicas, st.FullyLabeledReplicas = d.Replicas, d.ReadyReplicas, d.AvailableReplicas, d.FullyLabeledReplicas
		st.LabelSelector, st.ErrorReason, st.ErrorMessage = d.LabelSelector, d.ErrorReason, d.ErrorMessage
		if mirror.Status.ObservedGeneration == mirror.Generation {
			st.ObservedGeneration = ms.Generation
		}
		return !apiequality.Semantic.DeepEqual(before, st)
	}, client.FieldOwner(FieldOwner))
}

// deleteMAPIMirror deletes ms, whose authoritative CAPI MachineSet is gone
// (or going): a mirror of nothing. Its machines go with their CAPI ones.
func (r *Reconciler) deleteMAPIMirror(ctx context.Context, ms *mapiv1beta1.MachineSet, mirror *clusterv1.MachineSet) error {
	if mirror != nil {
		// The CAPI MachineSet is being deleted by Cluster API; the sync's
		// finalizer must not hold it.
		if err := r.removeFinalizers(ctx, mirror, SyncFinalizer); err != nil {
			return err
		}
	}
	uid := ms.UID
	if err := r.Client.Delete(ctx, ms, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
		return err
	}
	r.Recorder.Eventf(ms, nil, corev1.EventTypeNormal, EventMAPIMachineSetDeleted, "Delete",
		"The authoritative CAPI MachineSet %s/%s is gone; its MAPI mirror is deleted", r.CAPINamespace, ms.Name)
	if controllerutil.ContainsFinalizer(ms, SyncFinalizer) {
		return r.removeFinalizers(ctx, ms, SyncFinalizer)
	}
	return nil
}
