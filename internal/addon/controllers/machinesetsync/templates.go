package machinesetsync

import (
	"context"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/addon/controllers/write"
	"github.com/ocp-capi/ocp-capi/internal/addon/internal/mapi2capi"
	metal3v1 "github.com/ocp-capi/ocp-capi/internal/consumed/metal3/v1beta1"
	"github.com/ocp-capi/ocp-capi/internal/jsonfields"
)

// ensureTemplate makes sure the template the conversion produced exists
// and, if the controller created it, carries the lookup label and an
// ownerReference to the mirror. A template of that name that the controller
// did not create is used as is if its spec matches, and never changed. On
// failure it returns the condition reason.
func (r *Reconciler) ensureTemplate(ctx context.Context, msName string, tk templateKind, tmpl client.Object, mirror *clusterv1.MachineSet) (string, error) {
	existing := tk.newObj()
	err := r.Client.Get(ctx, client.ObjectKeyFromObject(tmpl), existing)
	if apierrors.IsNotFound(err) {
		obj, ok := tmpl.DeepCopyObject().(client.Object)
		if !ok {
			return ReasonTemplateFailed, fmt.Errorf("cannot copy the template %s", tmpl.GetName())
		}
		obj.SetLabels(templateLabels(obj.GetLabels(), msName))
		obj.SetAnnotations(map[string]string{CreatedForAnnotation: msName})
		obj.SetOwnerReferences([]metav1.OwnerReference{mirrorRef(mirror)})
		if err := r.Client.Create(ctx, obj, client.FieldOwner(FieldOwner)); err != nil {
			if apierrors.IsAlreadyExists(err) {
				return ReasonTemplateFailed, fmt.Errorf("%s %s: %w", tk.kind, obj.GetName(), errCacheBehind)
			}
			return ReasonTemplateFailed, fmt.Errorf("cannot create the %s %s: %w", tk.kind, obj.GetName(), err)
		}
		r.Recorder.Eventf(mirror, obj, corev1.EventTypeNormal, EventTemplateCreated, "Create", "Created the %s %s", tk.kind, obj.GetName())
		return "", nil
	}
	if err != nil {
		return ReasonTemplateFailed, fmt.Errorf("cannot read the %s %s: %w", tk.kind, tmpl.GetName(), err)
	}
	if !existing.GetDeletionTimestamp().IsZero() {
		// A template of this name is on its way out (a revert right after
		// its cleanup); it is made again once its deletion event arrives.
		return ReasonTemplateFailed, fmt.Errorf("%s %s is being deleted: %w", tk.kind, existing.GetName(), errCacheBehind)
	}

	// The conversion sets every field the CRDs default, so the stored spec of
	// an unchanged template is exactly the converted one.
	same, err := jsonfields.Same(templateSpec(tmpl), templateSpec(existing))
	if err != nil {
		return ReasonTemplateFailed, err
	}
	ours := existing.GetAnnotations()[CreatedForAnnotation] == msName
	switch {
	case !same && ours:
		return ReasonTemplateConflict, fmt.Errorf("the %s %s was changed after this controller created it; delete it and it is made again", tk.kind, existing.GetName())
	case !same:
		return ReasonTemplateConflict, fmt.Errorf("a %s named %s exists with another spec, and this controller did not create it; delete or rename it", tk.kind, existing.GetName())
	case !ours:
		return "", nil
	}

	labels := templateLabels(existing.GetLabels(), msName)
	refs := withMirrorRef(existing.GetOwnerReferences(), mirror)
	// A locked patch, not CAPI's patch helper: other owners write the ownerReferences list, which a merge patch replaces whole.
	if err := write.LockedPatch(ctx, r.Client, existing, func() bool {
		if equalMaps(labels, existing.GetLabels()) && slices.Equal(refs, existing.GetOwnerReferences()) {
			return false
		}
		existing.SetLabels(labels)
		existing.SetOwnerReferences(refs)
		return true
	}, client.FieldOwner(FieldOwner)); err != nil {
		return ReasonTemplateFailed, fmt.Errorf("cannot update the %s %s: %w", tk.kind, existing.GetName(), err)
	}
	return "", nil
}

// cleanupTemplates handles the templates labelled for MachineSet msName
// other than keep. It removes their ownerReferences to msName's mirror and
// deletes those the controller created once they have no ownerReference
// left, or, with all, whatever their owners (the MachineSet is being
// deleted). A template the controller did not create is never deleted.
func (r *Reconciler) cleanupTemplates(ctx context.Context, msName, keep string, regarding client.Object, all bool) error {
	for _, tk := range r.templateKinds {
		list := tk.newList()
		if err := r.Client.List(ctx, list, client.InNamespace(r.CAPINamespace),
			client.MatchingLabels{MachineSetLabel: mapi2capi.LabelValue(msName)}); err != nil {
			if meta.IsNoMatchError(err) {
				continue
			}
			return err
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return err
		}
		for _, item := range items {
			obj, ok := item.(client.Object)
			if !ok || obj.GetName() == keep || !obj.GetDeletionTimestamp().IsZero() {
				continue
			}
			createdFor := obj.GetAnnotations()[CreatedForAnnotation]
			if createdFor != "" && createdFor != msName {
				continue // another MachineSet's, whose long name shares the label value
			}
			refs := withoutMirrorRefs(obj.GetOwnerReferences(), msName)
			if createdFor == msName && (len(refs) == 0 || all) {
				uid, rv := obj.GetUID(), obj.GetResourceVersion()
				// The preconditions keep a template that gained an owner
				// since it was read.
				if err := r.Client.Delete(ctx, obj, client.Preconditions{UID: &uid, ResourceVersion: &rv}); client.IgnoreNotFound(err) != nil {
					return fmt.Errorf("cannot delete the %s %s: %w", tk.kind, obj.GetName(), err)
				}
				if regarding != nil {
					r.Recorder.Eventf(regarding, obj, corev1.EventTypeNormal, EventTemplateDeleted, "Delete", "Deleted the %s %s", tk.kind, obj.GetName())
				}
				continue
			}
			// Locked, as in ensureTemplate: the ownerReferences list is shared.
			if err := write.LockedPatch(ctx, r.Client, obj, func() bool {
				if len(refs) == len(obj.GetOwnerReferences()) {
					return false
				}
				obj.SetOwnerReferences(refs)
				return true
			}, client.FieldOwner(FieldOwner)); client.IgnoreNotFound(err) != nil {
				return fmt.Errorf("cannot update the ownerReferences of the %s %s: %w", tk.kind, obj.GetName(), err)
			}
		}
	}
	return nil
}

// templateLabels are a template's labels with the lookup label.
func templateLabels(in map[string]string, msName string) map[string]string {
	out := maps.Clone(in)
	if out == nil {
		out = map[string]string{}
	}
	out[MachineSetLabel] = mapi2capi.LabelValue(msName)
	return out
}

// mirrorRef is the ownerReference of a template to the mirror. It is not a
// controller reference and does not block the mirror's deletion (which
// would need rights on machinesets/finalizers).
func mirrorRef(mirror *clusterv1.MachineSet) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: clusterv1.GroupVersion.String(), Kind: "MachineSet", Name: mirror.Name, UID: mirror.UID}
}

// withMirrorRef returns refs with the reference to mirror, replacing any
// reference to an earlier mirror of the same name.
func withMirrorRef(refs []metav1.OwnerReference, mirror *clusterv1.MachineSet) []metav1.OwnerReference {
	want := mirrorRef(mirror)
	out := make([]metav1.OwnerReference, 0, len(refs)+1)
	found := false
	for _, ref := range refs {
		switch {
		case ref.UID == want.UID && ref == want:
			found = true
		case ref.UID == want.UID, isMirrorRef(ref.APIVersion, ref.Kind) && ref.Name == mirror.Name:
			continue // stale: replaced by want
		}
		out = append(out, ref)
	}
	if !found {
		out = append(out, want)
	}
	return out
}

// withoutMirrorRefs drops references to the mirror called msName.
func withoutMirrorRefs(refs []metav1.OwnerReference, msName string) []metav1.OwnerReference {
	var out []metav1.OwnerReference
	for _, ref := range refs {
		if isMirrorRef(ref.APIVersion, ref.Kind) && ref.Name == msName {
			continue
		}
		out = append(out, ref)
	}
	return out
}

// templateSpec is the spec of a template object.
func templateSpec(o client.Object) any {
	switch t := o.(type) {
	case *infrav1.OpenStackMachineTemplate:
		return t.Spec
	case *metal3v1.Metal3MachineTemplate:
		return t.Spec
	}
	return nil
}
