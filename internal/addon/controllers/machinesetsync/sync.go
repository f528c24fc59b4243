package machinesetsync

import (
	"context"
	"errors"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/patch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/ocp-capi/ocp-capi/internal/addon/controllers/write"
	"github.com/ocp-capi/ocp-capi/internal/addon/internal/authority"
	"github.com/ocp-capi/ocp-capi/internal/addon/internal/mapi2capi"
	configv1 "github.com/ocp-capi/ocp-capi/internal/consumed/config/v1"
	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
)

// errCacheBehind is a create that found the object already there: the cache
// has not seen it yet. The request is retried; nothing failed.
var errCacheBehind = errors.New("the object exists but is not in the cache yet")

// reconcileSync brings the mirror and its template in line with ms, which
// is MAPI-authoritative, and reports the outcome. Every write is preceded by
// a comparison, so an object already in sync costs no write.
func (r *Reconciler) reconcileSync(ctx context.Context, ms *mapiv1beta1.MachineSet, mirror *clusterv1.MachineSet) error {
	// The finalizer comes first, so that nothing is created that the
	// deletion of ms would not clean up.
	if err := r.addFinalizer(ctx, ms); err != nil {
		return err
	}
	c, err := r.convert(ctx, ms)
	if err != nil {
		return err
	}
	desired, tmpl, warnings, tk := c.desired, c.tmpl, c.warnings, c.tk

	if mirror != nil && !mirror.DeletionTimestamp.IsZero() {
		// Someone deleted the mirror. Let it go; it is made again once gone.
		return r.releaseMirror(ctx, mirror)
	}
	if mirror == nil {
		if mirror, err = r.createMirror(ctx, ms, desired, true); err != nil {
			return r.fail(ctx, ms, ReasonCreateFailed, "Cannot create the CAPI MachineSet: "+err.Error(), err)
		}
		if reason, err := r.ensureTemplate(ctx, ms.Name, tk, tmpl, mirror); err != nil {
			return r.fail(ctx, ms, reason, err.Error(), err)
		}
	} else {
		// The new template first, so that the mirror never points at a
		// template that does not exist.
		if reason, err := r.ensureTemplate(ctx, ms.Name, tk, tmpl, mirror); err != nil {
			return r.fail(ctx, ms, reason, err.Error(), err)
		}
		if err := r.updateMirror(ctx, mirror, desired); err != nil {
			return r.fail(ctx, ms, ReasonUpdateFailed, "Cannot update the CAPI MachineSet: "+err.Error(), err)
		}
	}
	if err := r.updateMirrorStatus(ctx, ms, mirror, desired); err != nil {
		return r.fail(ctx, ms, ReasonUpdateFailed, "Cannot update the CAPI MachineSet's status: "+err.Error(), err)
	}
	if err := r.cleanupTemplates(ctx, ms.Name, tmpl.GetName(), mirror, false); err != nil {
		return r.fail(ctx, ms, ReasonTemplateFailed, "Cannot clean up the old infrastructure machine templates: "+err.Error(), err)
	}
	return r.setSynchronized(ctx, ms, condition{
		Status: corev1.ConditionTrue, Reason: ReasonSynchronized, Message: synchronizedMessage(warnings), Warnings: warnings,
	})
}

// converted is a MachineSet converted to CAPI.
type converted struct {
	desired  *clusterv1.MachineSet
	tmpl     client.Object
	warnings []string
	tk       templateKind
}

// convert converts ms with the cluster's context; a failure is reported in
// the condition.
func (r *Reconciler) convert(ctx context.Context, ms *mapiv1beta1.MachineSet) (*converted, error) {
	infra, err := r.infra(ctx)
	if err != nil {
		return nil, r.fail(ctx, ms, ReasonInfraUnavailable, "Cannot read the Infrastructure cluster: "+err.Error(), err)
	}
	if infra.ClusterName == "" {
		return nil, r.fail(ctx, ms, ReasonInfraUnavailable,
			"The CAPI Cluster name is unknown: the Infrastructure cluster has no status.infrastructureName; start the controller with --cluster-name",
			errors.New("the CAPI Cluster name is unknown"))
	}
	desired, tmpl, warnings, errs := mapi2capi.MachineSet(ms, infra)
	if len(errs) > 0 {
		return nil, r.refuse(ctx, ms, ReasonConversionFailed, "Cannot convert the MachineSet; fix these fields: "+errs.ToAggregate().Error())
	}
	tk, ok := r.templateKind(desired.Spec.Template.Spec.InfrastructureRef.Kind)
	if !ok {
		kind := desired.Spec.Template.Spec.InfrastructureRef.Kind
		return nil, r.fail(ctx, ms, ReasonTemplateFailed,
			fmt.Sprintf("The %s CRD is not installed (or was installed after this controller started; restart it)", kind),
			fmt.Errorf("the %s CRD is not installed", kind))
	}
	return &converted{desired: desired, tmpl: tmpl, warnings: warnings, tk: tk}, nil
}

// isStale tells whether err only means that the controller acted on an old
// copy of an object: a create that found the object (the cache has not seen
// it yet) or a write refused for an old resourceVersion. A newer version
// exists, so a watch event reconciles again; nothing failed.
func isStale(err error) bool {
	return errors.Is(err, errCacheBehind) || apierrors.IsConflict(err)
}

// fail reports a failed sync in the condition and returns cause, so that the
// request is retried with backoff. A cache that is behind is no failure.
func (r *Reconciler) fail(ctx context.Context, ms *mapiv1beta1.MachineSet, reason, message string, cause error) error {
	if isStale(cause) {
		return cause
	}
	if err := r.setSynchronized(ctx, ms, condition{Status: corev1.ConditionFalse, Reason: reason, Message: message}); err != nil {
		return errors.Join(cause, err)
	}
	return cause
}

// refuse reports in the condition (and its Warning event) that a
// conversion refused the object, and returns authority.ErrRefused: nothing
// to retry until the object changes. A failed write of the condition is
// retried.
func (r *Reconciler) refuse(ctx context.Context, ms *mapiv1beta1.MachineSet, reason, message string) error {
	if err := r.setSynchronized(ctx, ms, condition{Status: corev1.ConditionFalse, Reason: reason, Message: message}); err != nil {
		return err
	}
	return authority.ErrRefused
}

// reconcileNotAuthoritative says in the condition that the controller
// leaves the CAPI side alone.
func (r *Reconciler) reconcileNotAuthoritative(ctx context.Context, ms *mapiv1beta1.MachineSet) error {
	c := condition{Status: corev1.ConditionUnknown, Reason: ReasonNotAuthoritative}
	switch {
	case ms.Status.AuthoritativeAPI == mapiv1beta1.MachineAuthorityMigrating:
		c.Reason = ReasonMigrating
		c.Message = "status.authoritativeAPI is Migrating: authority is being handed over, and the MAPI to CAPI sync leaves the CAPI MachineSet alone until it is done"
	case ms.Status.AuthoritativeAPI != "":
		c.Message = fmt.Sprintf("status.authoritativeAPI is %s: the MAPI to CAPI sync acts only while the Machine API is authoritative, and does not change the CAPI MachineSet", ms.Status.AuthoritativeAPI)
	default:
		c.Message = fmt.Sprintf("spec.authoritativeAPI is %s and status.authoritativeAPI is not set yet: the MAPI to CAPI sync acts only while the Machine API is authoritative, and does not change the CAPI MachineSet", ms.Spec.AuthoritativeAPI)
	}
	return r.setSynchronized(ctx, ms, c)
}

// infra reads the cluster context: the Infrastructure cluster, if its CRD
// is installed, and the --cluster-name override.
func (r *Reconciler) infra(ctx context.Context) (mapi2capi.Infra, error) {
	infra := &configv1.Infrastructure{}
	if err := r.Client.Get(ctx, types.NamespacedName{Name: InfrastructureName}, infra); err != nil {
		if !apierrors.IsNotFound(err) && !meta.IsNoMatchError(err) {
			return mapi2capi.Infra{}, err
		}
		infra = nil
	}
	return mapi2capi.InfraFrom(infra, r.ClusterName, r.CAPINamespace), nil
}

func (r *Reconciler) templateKind(kind string) (templateKind, bool) {
	for _, tk := range r.templateKinds {
		if tk.kind == kind {
			return tk, true
		}
	}
	return templateKind{}, false
}

// addFinalizer puts the sync finalizer on ms. The MAPI MachineSet is
// MAPI's; a locked patch, because a merge patch replaces the whole
// finalizers list that others write too.
func (r *Reconciler) addFinalizer(ctx context.Context, ms *mapiv1beta1.MachineSet) error {
	return write.LockedPatch(ctx, r.Client, ms, func() bool { return controllerutil.AddFinalizer(ms, SyncFinalizer) }, client.FieldOwner(FieldOwner))
}

// createMirror creates the mirror: desired, paused (unless Cluster API is
// to run it from the start), with the sync finalizer and the created-for
// mark.
func (r *Reconciler) createMirror(ctx context.Context, ms *mapiv1beta1.MachineSet, desired *clusterv1.MachineSet, paused bool) (*clusterv1.MachineSet, error) {
	mirror := desired.DeepCopy()
	mirror.Status = clusterv1.MachineSetStatus{}
	mirror.Annotations = authority.MirrorAnnotations(desired.Annotations, CreatedForAnnotation, ms.Name)
	if !paused {
		delete(mirror.Annotations, clusterv1.PausedAnnotation)
	}
	mirror.Finalizers = []string{SyncFinalizer}
	if err := r.Client.Create(ctx, mirror, client.FieldOwner(FieldOwner)); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("CAPI MachineSet %s: %w", mirror.Name, errCacheBehind)
		}
		return nil, err
	}
	r.Recorder.Eventf(ms, mirror, corev1.EventTypeNormal, EventMirrorCreated, "Create", "Created the paused CAPI MachineSet %s/%s", mirror.Namespace, mirror.Name)
	return mirror, nil
}

// updateMirror overwrites the mirror's labels, annotations and spec with
// the conversion's and keeps it paused, if any of them differ. Finalizers
// and ownerReferences of others are kept. A mirror that was not created by
// this controller is overwritten too, but never marked as created by it.
//
// A locked patch, not CAPI's patch helper: CAPI adds its finalizer to the paused mirror too (a merge patch replaces the list whole), and the answer's generation is what updateMirrorStatus reports.
func (r *Reconciler) updateMirror(ctx context.Context, mirror, desired *clusterv1.MachineSet) error {
	want, err := roundTrip(desired)
	if err != nil {
		return err
	}
	wantAnnotations := authority.MirrorAnnotations(want.Annotations, CreatedForAnnotation, mirror.Annotations[CreatedForAnnotation])
	return write.LockedPatch(ctx, r.Client, mirror, func() bool {
		if equalMaps(mirror.Labels, want.Labels) && equalMaps(mirror.Annotations, wantAnnotations) &&
			controllerutil.ContainsFinalizer(mirror, SyncFinalizer) && apiequality.Semantic.DeepEqual(mirror.Spec, want.Spec) {
			return false
		}
		mirror.Labels = want.Labels
		mirror.Annotations = wantAnnotations
		mirror.Spec = want.Spec
		controllerutil.AddFinalizer(mirror, SyncFinalizer)
		return true
	}, client.FieldOwner(FieldOwner))
}

// updateMirrorStatus copies the status fields MAPI knows into the mirror,
// once MAPI's status describes its current generation. CAPI's own fields
// (conditions, upToDateReplicas) are left alone: the patch helper writes
// only the fields that changed, and no condition.
func (r *Reconciler) updateMirrorStatus(ctx context.Context, ms *mapiv1beta1.MachineSet, mirror, desired *clusterv1.MachineSet) error {
	if ms.Status.ObservedGeneration != ms.Generation {
		return nil
	}
	helper, err := patch.NewHelper(mirror, client.WithFieldOwner(r.Client, FieldOwner))
	if err != nil {
		return err
	}
	d, st := desired.Status, &mirror.Status
	st.Selector, st.Replicas, st.ReadyReplicas, st.AvailableReplicas = d.Selector, d.Replicas, d.ReadyReplicas, d.AvailableReplicas
	copyDeprecatedStatus(st, &d)
	// status.observedGeneration becomes the mirror's generation.
	return helper.Patch(ctx, mirror, patch.WithStatusObservedGeneration{})
}

// releaseMirror lets a mirror that is being deleted go: it drops the sync
// finalizer and, since a paused mirror is never reconciled by CAPI, CAPI's.
func (r *Reconciler) releaseMirror(ctx context.Context, mirror *clusterv1.MachineSet) error {
	finalizers := []string{SyncFinalizer}
	if isPaused(mirror) {
		finalizers = append(finalizers, clusterv1.MachineSetFinalizer)
	}
	return r.removeFinalizers(ctx, mirror, finalizers...)
}

// copyDeprecatedStatus copies the fields of CAPI's v1beta1 status block
// that MAPI knows from src to dst, keeping the rest (CAPI's conditions).
//
//nolint:staticcheck // these fields are deprecated in CAPI, yet MAPI has them
func copyDeprecatedStatus(dst, src *clusterv1.MachineSetStatus) {
	if dst.Deprecated == nil {
		dst.Deprecated = &clusterv1.MachineSetDeprecatedStatus{}
	}
	if dst.Deprecated.V1Beta1 == nil {
		dst.Deprecated.V1Beta1 = &clusterv1.MachineSetV1Beta1DeprecatedStatus{}
	}
	d, s := dst.Deprecated.V1Beta1, src.Deprecated.V1Beta1
	d.FullyLabeledReplicas, d.ReadyReplicas, d.AvailableReplicas = s.FullyLabeledReplicas, s.ReadyReplicas, s.AvailableReplicas
	d.FailureReason, d.FailureMessage = s.FailureReason, s.FailureMessage
}

func isPaused(o client.Object) bool {
	_, ok := o.GetAnnotations()[clusterv1.PausedAnnotation]
	return ok
}

// equalMaps treats nil and empty alike.
func equalMaps(a, b map[string]string) bool {
	return len(a) == len(b) && maps.Equal(a, b)
}
