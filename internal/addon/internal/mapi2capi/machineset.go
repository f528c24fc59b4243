package mapi2capi

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	capierrors "sigs.k8s.io/cluster-api/api/deprecated/errors" //nolint:staticcheck // CAPI's v1beta1 status block uses it
	capilabels "sigs.k8s.io/cluster-api/util/labels"

	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
)

// reservedTaintPrefixes and reservedTaintKeys may not be set on CAPI
// Machines (CAPI's own validation, sigs.k8s.io/cluster-api/internal/util/taints).
var (
	reservedTaintKeys = []string{
		clusterv1.NodeUninitializedTaint.Key, clusterv1.NodeOutdatedRevisionTaint.Key, "node-role.kubernetes.io/master",
	}
	reservedTaintPrefixes = []string{"node.kubernetes.io/", "node.cloudprovider.kubernetes.io/"}
)

// convertMachineSet converts everything of the MachineSet but the
// providerSpec.
func convertMachineSet(ms *mapiv1beta1.MachineSet, infra Infra, r *report) *clusterv1.MachineSet {
	mspec := &ms.Spec.Template.Spec
	capi := &clusterv1.MachineSet{
		TypeMeta: metav1.TypeMeta{APIVersion: clusterv1.GroupVersion.String(), Kind: "MachineSet"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        ms.Name,
			Namespace:   infra.Namespace,
			Labels:      convertLabels(ms.Labels, field.NewPath("metadata", "labels"), r),
			Annotations: convertAnnotations(ms.Annotations, field.NewPath("metadata", "annotations"), r),
		},
		Spec: clusterv1.MachineSetSpec{
			ClusterName: infra.ClusterName,
			// MAPI defaults replicas to 1, as CAPI's webhook does.
			Replicas: ptr.To(ptr.Deref(ms.Spec.Replicas, 1)),
			Deletion: clusterv1.MachineSetDeletionSpec{
				Order: clusterv1.MachineSetDeletionOrder(cmp.Or(ms.Spec.DeletePolicy, string(clusterv1.RandomMachineSetDeletionOrder))),
			},
		},
	}
	if infra.ClusterName != "" {
		if capi.Labels == nil {
			capi.Labels = map[string]string{}
		}
		capi.Labels[clusterv1.ClusterNameLabel] = infra.ClusterName
	}

	sel := ms.Spec.Selector.DeepCopy()
	sel.MatchLabels = convertSelectorLabels(sel.MatchLabels)
	capi.Spec.Selector = *sel

	// Machine labels and annotations: the template's, then the ones MAPI
	// puts on the Node (spec.template.spec.metadata), then lifecycle hooks.
	tmeta := &ms.Spec.Template.ObjectMeta
	rejectObjectMeta(tmeta, templatePath.Child("metadata"), r)
	rejectObjectMeta(&mspec.ObjectMeta, r.spec.Child("metadata"), r)
	tl := convertLabels(tmeta.Labels, templatePath.Child("metadata", "labels"), r)
	tl = mergeInto(tl, mspec.Labels, r.spec.Child("metadata", "labels"), r)
	warnUnsyncedNodeMetadata(mspec, r)
	if infra.ClusterName != "" {
		tl = mergeInto(tl, map[string]string{clusterv1.ClusterNameLabel: infra.ClusterName}, templatePath.Child("metadata", "labels"), r)
	}
	ta := convertAnnotations(tmeta.Annotations, templatePath.Child("metadata", "annotations"), r)
	ta = mergeInto(ta, mspec.Annotations, r.spec.Child("metadata", "annotations"), r)
	ta = mergeInto(ta, lifecycleHookAnnotations(mspec.LifecycleHooks), r.spec.Child("lifecycleHooks"), r)
	capi.Spec.Template.Labels, capi.Spec.Template.Annotations = tl, ta

	if s, err := metav1.LabelSelectorAsSelector(&capi.Spec.Selector); err != nil {
		r.fail(field.Invalid(specPath.Child("selector"), metav1.FormatLabelSelector(&ms.Spec.Selector), err.Error()))
	} else if !s.Matches(labels.Set(tl)) {
		r.fail(field.Invalid(specPath.Child("selector"), s.String(),
			"after conversion the selector does not match the machine template's labels; CAPI requires it to"))
	}

	ts := &capi.Spec.Template.Spec
	ts.ClusterName = infra.ClusterName
	if ms.Spec.MinReadySeconds > 0 {
		ts.MinReadySeconds = ptr.To(ms.Spec.MinReadySeconds)
	}
	if mspec.ProviderID != nil {
		r.fail(field.Forbidden(r.spec.Child("providerID"), "a MachineSet's machines cannot share a providerID"))
	}
	ts.Taints = convertTaints(mspec, r)

	capi.Status = convertStatus(ms, &capi.Spec.Selector)
	return capi
}

// rejectObjectMeta fails on the metadata fields that mean nothing in a
// template: machines are named by their MachineSet.
func rejectObjectMeta(m *mapiv1beta1.ObjectMeta, p *field.Path, r *report) {
	if m.Name != "" {
		r.fail(field.Forbidden(p.Child("name"), "not supported: machines are named after their MachineSet"))
	}
	if m.GenerateName != "" {
		r.fail(field.Forbidden(p.Child("generateName"), "not supported: machines are named after their MachineSet"))
	}
	if m.Namespace != "" {
		r.fail(field.Forbidden(p.Child("namespace"), "not supported: machines live in their MachineSet's namespace"))
	}
	if len(m.OwnerReferences) > 0 {
		r.fail(field.Forbidden(p.Child("ownerReferences"), "not supported: CAPI sets the owners of machines"))
	}
}

// warnUnsyncedNodeMetadata warns about the Node labels and annotations that
// CAPI, unlike MAPI, does not copy from the Machine to the Node by default.
func warnUnsyncedNodeMetadata(mspec *mapiv1beta1.MachineSpec, r *report) {
	synced := capilabels.GetManagedLabels(mspec.Labels)
	for _, k := range slices.Sorted(maps.Keys(mspec.Labels)) {
		if _, ok := synced[k]; !ok {
			r.warn(r.spec.Child("metadata", "labels").Key(k),
				"set on the CAPI Machine, but CAPI copies only node-role.kubernetes.io/, node-restriction.kubernetes.io/ and node.cluster.x-k8s.io/ labels to the Node unless it runs with --additional-sync-machine-labels")
		}
	}
	for _, k := range slices.Sorted(maps.Keys(mspec.Annotations)) {
		domain, _, _ := strings.Cut(k, "/")
		if domain != clusterv1.ManagedNodeAnnotationDomain && !strings.HasSuffix(domain, "."+clusterv1.ManagedNodeAnnotationDomain) {
			r.warn(r.spec.Child("metadata", "annotations").Key(k),
				"set on the CAPI Machine, but CAPI copies only node.cluster.x-k8s.io/ annotations to the Node unless it runs with --additional-sync-machine-annotations")
		}
	}
}

// lifecycleHookAnnotations turns MAPI lifecycle hooks into CAPI's hook
// annotations: <prefix>/<name>: <owner>.
func lifecycleHookAnnotations(h mapiv1beta1.LifecycleHooks) map[string]string {
	out := map[string]string{}
	for _, hook := range h.PreDrain {
		out[clusterv1.PreDrainDeleteHookAnnotationPrefix+"/"+hook.Name] = hook.Owner
	}
	for _, hook := range h.PreTerminate {
		out[clusterv1.PreTerminateDeleteHookAnnotationPrefix+"/"+hook.Name] = hook.Owner
	}
	return out
}

// convertTaints maps MAPI taints to CAPI machine taints. MAPI keeps its
// taints on the Node for the machine's life, which is CAPI's Always
// propagation. CAPI refuses taints unless its MachineTaintPropagation
// feature gate is on; that shows as a failed write, not here.
func convertTaints(mspec *mapiv1beta1.MachineSpec, r *report) []clusterv1.MachineTaint {
	if len(mspec.Taints) == 0 {
		return nil
	}
	out := make([]clusterv1.MachineTaint, 0, len(mspec.Taints))
	for i, t := range mspec.Taints {
		p := r.spec.Child("taints").Index(i)
		if slices.Contains(reservedTaintKeys, t.Key) || slices.ContainsFunc(reservedTaintPrefixes, func(pre string) bool {
			return strings.HasPrefix(t.Key, pre) && t.Key != "node.kubernetes.io/out-of-service"
		}) {
			r.fail(field.Invalid(p.Child("key"), t.Key, "CAPI reserves this taint key for itself or the kubelet"))
			continue
		}
		if t.TimeAdded != nil {
			r.warn(p.Child("timeAdded"), "dropped: CAPI sets taints without a time")
		}
		out = append(out, clusterv1.MachineTaint{Key: t.Key, Value: t.Value, Effect: t.Effect, Propagation: clusterv1.MachineTaintPropagationAlways})
	}
	return out
}

// convertStatus mirrors the MAPI status fields CAPI has a place for. The
// CAPI observedGeneration is the sync controller's to set.
func convertStatus(ms *mapiv1beta1.MachineSet, sel *metav1.LabelSelector) clusterv1.MachineSetStatus {
	st := ms.Status
	out := clusterv1.MachineSetStatus{
		Replicas:          ptr.To(st.Replicas),
		ReadyReplicas:     ptr.To(st.ReadyReplicas),
		AvailableReplicas: ptr.To(st.AvailableReplicas),
		Deprecated:        &clusterv1.MachineSetDeprecatedStatus{V1Beta1: deprecatedStatus(&st)},
	}
	if s, err := metav1.LabelSelectorAsSelector(sel); err == nil {
		out.Selector = s.String()
	}
	return out
}

// deprecatedStatus fills CAPI's v1beta1 status block, the only place
// v1beta2 has for fullyLabeledReplicas and for MAPI's errorReason and
// errorMessage.
//
//nolint:staticcheck // these fields are deprecated in CAPI, yet MAPI has them
func deprecatedStatus(st *mapiv1beta1.MachineSetStatus) *clusterv1.MachineSetV1Beta1DeprecatedStatus {
	out := &clusterv1.MachineSetV1Beta1DeprecatedStatus{
		FullyLabeledReplicas: st.FullyLabeledReplicas,
		ReadyReplicas:        st.ReadyReplicas,
		AvailableReplicas:    st.AvailableReplicas,
	}
	if st.ErrorMessage != nil {
		out.FailureMessage = ptr.To(*st.ErrorMessage)
	}
	if st.ErrorReason != nil {
		out.FailureReason = ptr.To(capierrors.MachineSetStatusError(*st.ErrorReason))
	}
	return out
}
