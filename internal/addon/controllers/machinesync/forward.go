package machinesync

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/annotations"
	"sigs.k8s.io/cluster-api/util/labels/format"
	"sigs.k8s.io/cluster-api/util/patch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/addon/controllers/write"
	"github.com/ocp-capi/ocp-capi/internal/addon/internal/authority"
	"github.com/ocp-capi/ocp-capi/internal/addon/internal/mapi2capi"
	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
	metal3v1 "github.com/ocp-capi/ocp-capi/internal/consumed/metal3/v1beta1"
)

// reconcileForward makes the CAPI Machine and infrastructure machine of a
// MAPI-authoritative Machine, keeps them paused and mirrors into them its
// spec and status. Every write follows a comparison: a Machine in sync
// costs none.
func (r *Reconciler) reconcileForward(ctx context.Context, s *scope) error {
	m := s.mapi
	if err := write.LockedPatch(ctx, r.Client, m, func() bool { return controllerutil.AddFinalizer(m, SyncFinalizer) }, client.FieldOwner(FieldOwner)); err != nil {
		return err
	}
	if s.capi != nil && !s.capi.DeletionTimestamp.IsZero() {
		// Someone deleted the mirror: let it go (it is paused, so nothing
		// is deleted in the cloud); it is made again once gone.
		return r.releaseCAPI(ctx, s)
	}
	fwd, err := r.context(ctx)
	if err != nil {
		return r.fail(ctx, m, ReasonInfraUnavailable, "Cannot read the Infrastructure cluster: "+err.Error(), err)
	}
	desired, im, warnings, errs := mapi2capi.Machine(m, fwd)
	if len(errs) > 0 {
		return r.refuse(ctx, m, ReasonConversionFailed, "Cannot convert the Machine; fix these fields: "+errs.ToAggregate().Error())
	}
	if waiting, err := r.ownCAPI(ctx, m, desired); err != nil || waiting {
		return err
	}
	if err := r.ensureCAPIMachine(ctx, s, desired); err != nil {
		return r.fail(ctx, m, ReasonCAPIWriteFailed, "Cannot write the CAPI Machine: "+err.Error(), err)
	}
	if err := r.ensureInfraMachine(ctx, s, im); err != nil {
		return r.fail(ctx, m, ReasonCAPIWriteFailed, "Cannot write the infrastructure machine: "+err.Error(), err)
	}
	if err := r.pauseServer(ctx, s); err != nil {
		return r.fail(ctx, m, ReasonCAPIWriteFailed, "Cannot pause the OpenStackServer: "+err.Error(), err)
	}
	if err := r.returnHost(ctx, s); err != nil {
		return r.fail(ctx, m, ReasonCAPIWriteFailed, "Cannot give the BareMetalHost back to the MAPI Machine: "+err.Error(), err)
	}
	if err := r.mirrorCAPIStatus(ctx, s, desired, im); err != nil {
		return r.fail(ctx, m, ReasonCAPIWriteFailed, "Cannot write the status of the CAPI side: "+err.Error(), err)
	}
	return r.setSynchronized(ctx, m, synced(mapiv1beta1.SynchronizedAPIMachineAPI, m.Generation, warnings))
}

// ownCAPI makes desired owned by the CAPI MachineSet of the name of m's
// MachineSet. waiting: that MachineSet does not exist yet (the MachineSet
// sync makes it; its event brings the Machine back).
func (r *Reconciler) ownCAPI(ctx context.Context, m *mapiv1beta1.Machine, desired *clusterv1.Machine) (waiting bool, err error) {
	msName, ok := machineSetOwner(m.OwnerReferences, mapiv1beta1.GroupVersion.Group)
	if !ok {
		return false, nil
	}
	ms := &clusterv1.MachineSet{}
	found, err := r.get(ctx, r.CAPINamespace, msName, ms)
	if err != nil {
		return false, err
	}
	if !found {
		return true, r.setSynchronized(ctx, m, condition{Status: corev1.ConditionUnknown, Reason: ReasonWaitingForMachineSet,
			Message: fmt.Sprintf("Waiting for the CAPI MachineSet %s/%s, which will own the CAPI Machine", r.CAPINamespace, msName)})
	}
	desired.OwnerReferences = []metav1.OwnerReference{ownerRef(clusterv1.GroupVersion.String(), "MachineSet", ms)}
	desired.Labels[clusterv1.MachineSetNameLabel] = format.MustFormatValue(msName)
	return false, nil
}

// ensureCAPIMachine creates the CAPI Machine, paused, or brings its
// metadata and spec in line with desired. CAPI writes its finalizer and
// labels on it too: a merge patch that carries the resourceVersion.
func (r *Reconciler) ensureCAPIMachine(ctx context.Context, s *scope, desired *clusterv1.Machine) error {
	if s.capi == nil {
		c := desired.DeepCopy()
		c.Status = clusterv1.MachineStatus{}
		c.Annotations = authority.MirrorAnnotations(c.Annotations, CreatedForAnnotation, s.name)
		c.Finalizers = []string{SyncFinalizer}
		if err := r.Client.Create(ctx, c, client.FieldOwner(FieldOwner)); err != nil {
			if apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("CAPI Machine %s: %w", c.Name, errCacheBehind)
			}
			return err
		}
		r.Recorder.Eventf(s.mapi, c, corev1.EventTypeNormal, EventCreated, "Create", "Created the paused CAPI Machine %s/%s", c.Namespace, c.Name)
		s.capi = c
		return nil
	}
	c := s.capi
	wantLabels := keepCAPIKeys(desired.Labels, c.Labels)
	wantAnnotations := authority.MirrorAnnotations(keepCAPIKeys(desired.Annotations, c.Annotations), CreatedForAnnotation, c.Annotations[CreatedForAnnotation])
	return write.LockedPatch(ctx, r.Client, c, func() bool {
		if maps.Equal(c.Labels, wantLabels) && maps.Equal(c.Annotations, wantAnnotations) && sameJSON(c.Spec, desired.Spec) &&
			slices.Equal(c.OwnerReferences, mergeRefs(c.OwnerReferences, desired.OwnerReferences)) && controllerutil.ContainsFinalizer(c, SyncFinalizer) {
			return false
		}
		c.Labels, c.Annotations, c.Spec = wantLabels, wantAnnotations, desired.Spec
		c.OwnerReferences = mergeRefs(c.OwnerReferences, desired.OwnerReferences)
		controllerutil.AddFinalizer(c, SyncFinalizer)
		return true
	}, client.FieldOwner(FieldOwner))
}

// ensureInfraMachine creates the infrastructure machine, paused and owned
// by the CAPI Machine, or keeps it so. Its spec is written once: it is
// immutable, as a running MAPI machine's providerSpec is not applied to
// its server either. Others write its finalizers and labels: a locked
// merge patch.
func (r *Reconciler) ensureInfraMachine(ctx context.Context, s *scope, im client.Object) error {
	ref := ownerRef(clusterv1.GroupVersion.String(), "Machine", s.capi)
	if s.infra == nil {
		obj := im.DeepCopyObject().(client.Object)
		clearStatus(obj)
		obj.SetAnnotations(authority.MirrorAnnotations(obj.GetAnnotations(), CreatedForAnnotation, s.name))
		obj.SetOwnerReferences([]metav1.OwnerReference{ref})
		if err := r.Client.Create(ctx, obj, client.FieldOwner(FieldOwner)); err != nil {
			if apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("%s %s: %w", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), errCacheBehind)
			}
			return err
		}
		s.infra = obj
		return nil
	}
	cur := s.infra
	wantLabels := keepCAPIKeys(im.GetLabels(), cur.GetLabels())
	wantAnnotations := authority.MirrorAnnotations(keepCAPIKeys(im.GetAnnotations(), cur.GetAnnotations()), CreatedForAnnotation, cur.GetAnnotations()[CreatedForAnnotation])
	wantRefs := mergeRefs(cur.GetOwnerReferences(), []metav1.OwnerReference{ref})
	return write.LockedPatch(ctx, r.Client, cur, func() bool {
		changed := fillProviderID(cur, im)
		if maps.Equal(cur.GetLabels(), wantLabels) && maps.Equal(cur.GetAnnotations(), wantAnnotations) && slices.Equal(cur.GetOwnerReferences(), wantRefs) {
			return changed
		}
		cur.SetLabels(wantLabels)
		cur.SetAnnotations(wantAnnotations)
		cur.SetOwnerReferences(wantRefs)
		return true
	}, client.FieldOwner(FieldOwner))
}

// fillProviderID sets the providerID of cur from want while cur has none.
func fillProviderID(cur, want client.Object) bool {
	switch c := cur.(type) {
	case *infrav1.OpenStackMachine:
		if w := want.(*infrav1.OpenStackMachine).Spec.ProviderID; c.Spec.ProviderID == "" && w != "" {
			c.Spec.ProviderID = w
			return true
		}
	case *metal3v1.Metal3Machine:
		if w := want.(*metal3v1.Metal3Machine).Spec.ProviderID; c.Spec.ProviderID == nil && w != nil {
			c.Spec.ProviderID = w
			return true
		}
	}
	return false
}

// pauseServer keeps the OpenStackServer of a mirrored machine paused: it
// exists once Cluster API ran the machine, and would act on its own.
func (r *Reconciler) pauseServer(ctx context.Context, s *scope) error {
	oss := s.server
	if oss == nil || annotations.HasPaused(oss) || !oss.DeletionTimestamp.IsZero() {
		return nil
	}
	base := oss.DeepCopy()
	annotations.AddAnnotations(oss, map[string]string{clusterv1.PausedAnnotation: ""})
	// One annotation key: a merge patch touches nothing else.
	return client.IgnoreNotFound(r.Client.Patch(ctx, oss, client.MergeFrom(base), client.FieldOwner(FieldOwner)))
}

// mirrorCAPIStatus copies into the CAPI Machine and infrastructure machine
// the status MAPI reports. Only this controller writes their status while
// they are paused: CAPI's patch helper, which writes the changed fields and
// no condition.
func (r *Reconciler) mirrorCAPIStatus(ctx context.Context, s *scope, desired *clusterv1.Machine, im client.Object) error {
	c := s.capi
	h, err := patch.NewHelper(c, r.Client)
	if err != nil {
		return err
	}
	d := desired.Status
	c.Status.Addresses, c.Status.NodeRef, c.Status.Phase, c.Status.Deprecated = d.Addresses, d.NodeRef, d.Phase, d.Deprecated
	if err := h.Patch(ctx, c); err != nil {
		return err
	}
	h, err = patch.NewHelper(s.infra, r.Client)
	if err != nil {
		return err
	}
	switch t := s.infra.(type) {
	case *infrav1.OpenStackMachine:
		w := im.(*infrav1.OpenStackMachine).Status
		t.Status.InstanceID, t.Status.InstanceState, t.Status.Addresses = w.InstanceID, w.InstanceState, w.Addresses
	case *metal3v1.Metal3Machine:
		t.Status.Addresses = im.(*metal3v1.Metal3Machine).Status.Addresses
	}
	return h.Patch(ctx, s.infra)
}

// releaseCAPI lets the CAPI side of a mirror go: it drops the sync's and,
// since paused objects are never reconciled, their controllers' finalizers.
// Nothing is deleted in the cloud: the objects are paused.
func (r *Reconciler) releaseCAPI(ctx context.Context, s *scope) error {
	if s.capi != nil {
		fs := []string{SyncFinalizer}
		if annotations.HasPaused(s.capi) {
			fs = append(fs, clusterv1.MachineFinalizer)
		}
		if err := write.RemoveFinalizers(ctx, r.Client, s.capi, FieldOwner, fs...); err != nil {
			return err
		}
	}
	// The host must not go with the Metal3Machine (its owner, once CAPM3
	// ran it).
	if err := r.returnHost(ctx, s); err != nil {
		return err
	}
	for _, o := range s.partners() {
		if !annotations.HasPaused(o) {
			continue
		}
		if err := r.deletePaused(ctx, o); err != nil {
			return err
		}
	}
	return nil
}

// deletePaused deletes a paused object of the CAPI side and drops its
// finalizers (its controller, paused, would never).
func (r *Reconciler) deletePaused(ctx context.Context, o client.Object) error {
	if o.GetDeletionTimestamp().IsZero() {
		uid := o.GetUID()
		if err := r.Client.Delete(ctx, o, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	return write.RemoveFinalizers(ctx, r.Client, o, FieldOwner, o.GetFinalizers()...)
}

// keepCAPIKeys is want plus the keys of have in CAPI's own domain
// (bookkeeping CAPI wrote), but delete-machine, which is the user's.
func keepCAPIKeys(want, have map[string]string) map[string]string {
	out := maps.Clone(want)
	if out == nil {
		out = map[string]string{}
	}
	for k, v := range have {
		if strings.HasPrefix(k, capiDomain) && k != clusterv1.DeleteMachineAnnotation && k != clusterv1.PausedAnnotation {
			if _, ok := out[k]; !ok {
				out[k] = v
			}
		}
	}
	return out
}

// mergeRefs replaces the MachineSet (or Machine) controller reference of
// have by want's, keeping other owners.
func mergeRefs(have, want []metav1.OwnerReference) []metav1.OwnerReference {
	var out []metav1.OwnerReference
	for _, h := range have {
		replaced := false
		for _, w := range want {
			if h.Kind == w.Kind && h.APIVersion == w.APIVersion {
				replaced = true
			}
		}
		if !replaced {
			out = append(out, h)
		}
	}
	out = append(out, want...)
	if apiequality.Semantic.DeepEqual(out, have) {
		return have
	}
	return out
}

func clearStatus(o client.Object) {
	switch t := o.(type) {
	case *infrav1.OpenStackMachine:
		t.Status = infrav1.OpenStackMachineStatus{}
	case *metal3v1.Metal3Machine:
		t.Status = metal3v1.Metal3MachineStatus{}
	}
}
