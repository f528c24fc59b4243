package openshiftassistedcontrolplane

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/controllers/external"
	capiconditions "sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/ocp-capi/ocp-capi/api/bootstrap/v1alpha2"
	controlplanev1 "github.com/ocp-capi/ocp-capi/api/controlplane/v1alpha3"
)

// machineSet is what the control plane has made: its Machines, and the
// OpenshiftAssistedConfigs and infrastructure machines made for them.
type machineSet struct {
	machines []*clusterv1.Machine
	configs  map[string]*bootstrapv1.OpenshiftAssistedConfig
	// infra are the infrastructure machines of the kind
	// spec.machineTemplate.infrastructureRef clones, by name; nil when that
	// kind cannot be listed (its CRD is missing). Their metadata is all
	// that is read of them: the cache keeps no more.
	infra map[string]*metav1.PartialObjectMetadata
}

// machineControllerIndex indexes the cached Machines by the name of the
// OpenshiftAssistedControlPlane that controls them: a pass then reads its
// own few Machines, where a label selector alone walks every Machine of
// the namespace (docs/reliability.md, Scale).
const machineControllerIndex = "openshiftassistedcontrolplane.controller"

// machineController is the index function of machineControllerIndex.
func machineController(o client.Object) []string {
	ref := metav1.GetControllerOf(o)
	if ref == nil || ref.Kind != kind {
		return nil
	}
	if gv, err := schema.ParseGroupVersion(ref.APIVersion); err != nil || gv.Group != controlplanev1.GroupVersion.Group {
		return nil
	}
	return []string{ref.Name}
}

// controlPlaneMachines lists the Machines the control plane controls.
func (r *Reconciler) controlPlaneMachines(ctx context.Context, s *scope) ([]*clusterv1.Machine, error) {
	list := &clusterv1.MachineList{}
	if err := r.Client.List(ctx, list, client.InNamespace(s.oacp.Namespace),
		client.MatchingFields{machineControllerIndex: s.oacp.Name},
		client.MatchingLabels{clusterv1.MachineControlPlaneNameLabel: controlPlaneNameLabel(s.oacp.Name)}); err != nil {
		return nil, err
	}
	var out []*clusterv1.Machine
	for i := range list.Items {
		if metav1.IsControlledBy(&list.Items[i], s.oacp) {
			out = append(out, &list.Items[i])
		}
	}
	slices.SortFunc(out, func(a, b *clusterv1.Machine) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// loadMachineSet reads the Machines with their configs and infrastructure
// machines.
func (r *Reconciler) loadMachineSet(ctx context.Context, s *scope, machines []*clusterv1.Machine) (*machineSet, error) {
	ms := &machineSet{machines: machines, configs: map[string]*bootstrapv1.OpenshiftAssistedConfig{}}
	selector := client.MatchingLabels{clusterv1.MachineControlPlaneNameLabel: controlPlaneNameLabel(s.oacp.Name)}
	configs := &bootstrapv1.OpenshiftAssistedConfigList{}
	if err := r.Client.List(ctx, configs, client.InNamespace(s.oacp.Namespace), selector); err != nil {
		return nil, err
	}
	for i := range configs.Items {
		ms.configs[configs.Items[i].Name] = &configs.Items[i]
	}
	gvk, err := r.infraMachineGVK(ctx, s)
	if err != nil {
		return ms, nil //nolint:nilerr // an unknown kind is reported when cloning; nothing to list
	}
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := r.Client.List(ctx, list, client.InNamespace(s.oacp.Namespace), selector); err != nil {
		return nil, err
	}
	ms.infra = map[string]*metav1.PartialObjectMetadata{}
	for i := range list.Items {
		ms.infra[list.Items[i].GetName()] = &list.Items[i]
	}
	return ms, nil
}

// infraMachineGVK is the kind of infrastructure machine the template
// clones into, at the version the template's CRD serves (its contract
// label).
func (r *Reconciler) infraMachineGVK(ctx context.Context, s *scope) (schema.GroupVersionKind, error) {
	ref := s.oacp.Spec.MachineTemplate.InfrastructureRef
	tmpl, err := external.GetObjectFromContractVersionedRef(ctx, r.Client, ref, s.oacp.Namespace)
	if err != nil {
		return schema.GroupVersionKind{}, err
	}
	gvk := tmpl.GroupVersionKind()
	gvk.Kind = strings.TrimSuffix(gvk.Kind, clusterv1.TemplateSuffix)
	return gvk, nil
}

// cleanupOrphans deletes configs and infrastructure machines this control
// plane made for a Machine that does not exist: what a failed or
// interrupted scale up left (CAPI core moves them under their Machine once
// it exists, so ones still owned by the control plane and without a
// Machine are leftovers). The Machine's absence is checked uncached.
func (r *Reconciler) cleanupOrphans(ctx context.Context, s *scope, ms *machineSet) error {
	have := map[string]bool{}
	for _, m := range ms.machines {
		have[m.Name] = true
	}
	candidates := map[string][]client.Object{}
	for name, c := range ms.configs {
		if !have[name] && c.DeletionTimestamp.IsZero() && hasOwner(c, s) {
			candidates[name] = append(candidates[name], c)
		}
	}
	for name, u := range ms.infra {
		if !have[name] && u.GetDeletionTimestamp().IsZero() && hasOwner(u, s) {
			candidates[name] = append(candidates[name], u)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(candidates)) {
		m := &clusterv1.Machine{}
		err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: s.oacp.Namespace, Name: name}, m)
		if err == nil || !apierrors.IsNotFound(err) {
			if err != nil {
				return err
			}
			continue // the Machine exists: the cache lags
		}
		for _, obj := range candidates[name] {
			if err := r.Client.Delete(ctx, obj); client.IgnoreNotFound(err) != nil {
				return fmt.Errorf("deleting %T %s left by an unfinished scale up: %w", obj, obj.GetName(), err)
			}
			r.event(s.oacp, obj, "OrphanDeleted", "Delete", "Deleted %s %s, made for Machine %s which does not exist",
				obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), name)
		}
	}
	return nil
}

// hasOwner tells whether obj carries the control plane's owner reference.
func hasOwner(obj metav1.Object, s *scope) bool {
	return slices.ContainsFunc(obj.GetOwnerReferences(), func(r metav1.OwnerReference) bool { return r.UID == s.oacp.UID })
}

// syncMachines propagates in place what the contract says must not roll
// Machines out (the deletion timeouts, and labels and annotations of
// spec.machineTemplate.metadata: added and changed, never removed), and
// sets each Machine's UpToDate condition.
func (r *Reconciler) syncMachines(ctx context.Context, s *scope, ms *machineSet) error {
	tmpl := s.oacp.Spec.MachineTemplate
	for _, m := range ms.machines {
		if !m.DeletionTimestamp.IsZero() {
			continue
		}
		base := m.DeepCopy()
		labels := mergeLabels(m.Labels, tmpl.ObjectMeta.Labels)
		anns := mergeLabels(m.Annotations, tmpl.ObjectMeta.Annotations)
		if !equality.Semantic.DeepEqual(m.Spec.Deletion, tmpl.Deletion) || !maps.Equal(labels, m.Labels) || !maps.Equal(anns, m.Annotations) {
			m.Spec.Deletion = tmpl.Deletion
			m.Labels, m.Annotations = labels, anns
			// Machines are CAPI core's: a merge patch of what the contract lets the control plane set in place.
			if err := r.Client.Patch(ctx, m, client.MergeFrom(base)); err != nil {
				return fmt.Errorf("updating Machine %s: %w", m.Name, err)
			}
			base = m.DeepCopy()
		}
		capiconditions.Set(m, upToDate(s, m, ms))
		if !equality.Semantic.DeepEqual(base.Status.Conditions, m.Status.Conditions) {
			// CAPI core writes the Machine's other conditions: lock, so
			// that neither write loses the other's.
			err := r.Client.Status().Patch(ctx, m, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
			switch {
			case apierrors.IsConflict(err):
				// The Machine changed since the cache's copy: its update
				// event brings the control plane back, with a fresh copy.
				// Not an error (no backoff, no log); the counters use what
				// is persisted.
				m.Status.Conditions = base.Status.Conditions
				continue
			case err != nil:
				return fmt.Errorf("setting the UpToDate condition of Machine %s: %w", m.Name, err)
			}
		}
	}
	return nil
}

// upToDate is a Machine's UpToDate condition: its config's spec is
// spec.openshiftAssistedConfigSpec and its infrastructure machine was cloned
// from spec.machineTemplate.infrastructureRef. There is no rollout: a
// Machine that is not up to date stays until it is deleted.
func upToDate(s *scope, m *clusterv1.Machine, ms *machineSet) metav1.Condition {
	var why []string
	c := ms.configs[m.Spec.Bootstrap.ConfigRef.Name]
	switch {
	case m.Spec.Bootstrap.ConfigRef.Kind != "OpenshiftAssistedConfig":
		why = append(why, "* its bootstrap config is not an OpenshiftAssistedConfig")
	case c == nil:
		// The config is read from the cache; not there (yet) is no verdict.
	case !sameConfigSpec(c.Spec, s.oacp.Spec.OpenshiftAssistedConfigSpec):
		why = append(why, "* spec.openshiftAssistedConfigSpec changed after the Machine was made")
	}
	ref := s.oacp.Spec.MachineTemplate.InfrastructureRef
	if u := ms.infra[m.Spec.InfrastructureRef.Name]; u != nil && u.GetAnnotations()[clusterv1.TemplateClonedFromNameAnnotation] != ref.Name {
		why = append(why, fmt.Sprintf("* its %s was cloned from %q, not from spec.machineTemplate.infrastructureRef %q",
			u.Kind, u.GetAnnotations()[clusterv1.TemplateClonedFromNameAnnotation], ref.Name))
	}
	if len(why) > 0 {
		return metav1.Condition{Type: clusterv1.MachineUpToDateCondition, Status: metav1.ConditionFalse, Reason: clusterv1.MachineNotUpToDateReason,
			Message: strings.Join(why, "\n") + "\n* no rollout is done: delete the Machine to have it replaced"}
	}
	return metav1.Condition{Type: clusterv1.MachineUpToDateCondition, Status: metav1.ConditionTrue, Reason: clusterv1.MachineUpToDateReason}
}

// sameConfigSpec compares two config specs as their JSON, so that unset,
// null and empty are equal.
func sameConfigSpec(a, b bootstrapv1.OpenshiftAssistedConfigSpec) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(ja) == string(jb)
}

// selectorOf is the Machines' label selector, as status.selector holds it.
func selectorOf(s *scope) string {
	return fmt.Sprintf("%s=%s,%s,%s=%s", clusterv1.ClusterNameLabel, s.clusterName, clusterv1.MachineControlPlaneLabel,
		clusterv1.MachineControlPlaneNameLabel, controlPlaneNameLabel(s.oacp.Name))
}

// deleting tells whether any Machine is being deleted.
func deleting(machines []*clusterv1.Machine) bool {
	return slices.ContainsFunc(machines, func(m *clusterv1.Machine) bool { return !m.DeletionTimestamp.IsZero() })
}
