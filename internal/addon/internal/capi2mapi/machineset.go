package capi2mapi

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/addon/internal/mapi2capi"
	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
	metal3v1 "github.com/ocp-capi/ocp-capi/internal/consumed/metal3/v1beta1"
)

var (
	specPath        = field.NewPath("spec")
	machineSpecPath = specPath.Child("template", "spec")
)

// MachineSet converts the CAPI MachineSet ms, whose infrastructureRef is
// tmpl (an *OpenStackMachineTemplate or a *Metal3MachineTemplate), into the
// MAPI MachineSet that mirrors it, in infra.MAPINamespace, with the status
// CAPI reports (observedGeneration left to the caller, who knows MAPI's
// generation). spec.authoritativeAPI is left empty: it is the user's. On
// errors the MachineSet is nil. ms and tmpl are not changed.
func MachineSet(ms *clusterv1.MachineSet, tmpl client.Object, infra Infra) (*mapiv1beta1.MachineSet, []string, field.ErrorList) {
	r := &report{}
	if ms == nil || tmpl == nil {
		return nil, nil, field.ErrorList{field.Required(field.NewPath("machineSet"), "no MachineSet or template to convert")}
	}
	out := &mapiv1beta1.MachineSet{
		TypeMeta: metav1.TypeMeta{APIVersion: mapiv1beta1.GroupVersion.String(), Kind: "MachineSet"},
		ObjectMeta: metav1.ObjectMeta{
			Name: ms.Name, Namespace: infra.MAPINamespace,
			Labels: convertLabels(ms.Labels), Annotations: convertAnnotations(ms.Annotations),
		},
	}
	spec := &out.Spec
	spec.Replicas = mapi2capi.CopyPtr(ms.Spec.Replicas)
	spec.DeletePolicy = string(ms.Spec.Deletion.Order)
	spec.Selector = selector(&ms.Spec.Selector)
	ts := &ms.Spec.Template.Spec
	spec.MinReadySeconds = ptr.Deref(ts.MinReadySeconds, 0)
	if ms.Spec.MachineNaming.Template != "" {
		r.fail(field.Forbidden(specPath.Child("machineNaming", "template"), "MAPI names machines <MachineSet>-<random>; it has no naming template"))
	}

	var node mapiv1beta1.ObjectMeta
	var hooks mapiv1beta1.LifecycleHooks
	spec.Template.Labels, spec.Template.Annotations, node, hooks = machineMetadata(ms.Spec.Template.Labels, ms.Spec.Template.Annotations)
	spec.Template.Spec = mapiv1beta1.MachineSpec{ObjectMeta: node, LifecycleHooks: hooks}
	machineSpecChecks(ts, machineSpecPath, r)
	spec.Template.Spec.Taints = convertTaints(ts.Taints, machineSpecPath.Child("taints"), r)
	in := providerInput{failureDomain: ts.FailureDomain, dataSecretName: ts.Bootstrap.DataSecretName,
		dataSecretPath: machineSpecPath.Child("bootstrap", "dataSecretName")}
	spec.Template.Spec.ProviderSpec = templateProviderSpec(tmpl, ts.InfrastructureRef, in, machineSpecPath.Child("infrastructureRef"), infra, r)

	out.Status = machineSetStatus(ms, &spec.Selector)
	if len(r.errs) > 0 {
		return nil, r.warnings, r.errs
	}
	return out, r.warnings, nil
}

// machineSpecChecks fails on the fields of a CAPI machine (template) that
// MAPI has no place for.
func machineSpecChecks(s *clusterv1.MachineSpec, p *field.Path, r *report) {
	if s.Version != "" {
		r.fail(field.Forbidden(p.Child("version"), "MAPI machines have no Kubernetes version: the cluster's decides"))
	}
	if len(s.ReadinessGates) > 0 {
		r.fail(field.Forbidden(p.Child("readinessGates"), "MAPI machines have no readiness gates"))
	}
	if s.Bootstrap.ConfigRef.IsDefined() {
		r.fail(field.Forbidden(p.Child("bootstrap", "configRef"), "MAPI machines boot from a user data Secret, not a bootstrap provider"))
	}
	d := s.Deletion
	if d.NodeDrainTimeoutSeconds != nil {
		r.fail(field.Forbidden(p.Child("deletion", "nodeDrainTimeoutSeconds"), "MAPI drains without a timeout"))
	}
	if d.NodeVolumeDetachTimeoutSeconds != nil {
		r.fail(field.Forbidden(p.Child("deletion", "nodeVolumeDetachTimeoutSeconds"), "MAPI waits for volumes without a timeout"))
	}
	if t := d.NodeDeletionTimeoutSeconds; t != nil && *t != mapi2capi.DefaultNodeDeletionTimeoutSeconds {
		r.fail(field.Invalid(p.Child("deletion", "nodeDeletionTimeoutSeconds"), *t, "MAPI deletes the Node with CAPI's default timeout (10 s) only"))
	}
}

// templateProviderSpec is the providerSpec of the template tmpl, which ref
// (at p) must name.
func templateProviderSpec(tmpl client.Object, ref clusterv1.ContractVersionedObjectReference, in providerInput, p *field.Path, infra Infra, r *report) mapiv1beta1.ProviderSpec {
	var ps any
	switch t := tmpl.(type) {
	case *infrav1.OpenStackMachineTemplate:
		checkRef(ref, mapi2capi.OpenStackMachineTemplateKind, t.Name, p, r)
		ps = openStackProviderSpec(&t.Spec.Template.Spec, in, field.NewPath(mapi2capi.OpenStackMachineTemplateKind, "spec", "template", "spec"), infra, r)
	case *metal3v1.Metal3MachineTemplate:
		checkRef(ref, mapi2capi.Metal3MachineTemplateKind, t.Name, p, r)
		ps = bareMetalProviderSpec(&t.Spec.Template.Spec, in, field.NewPath(mapi2capi.Metal3MachineTemplateKind, "spec", "template", "spec"), r)
	default:
		r.fail(field.NotSupported(p.Child("kind"), ref.Kind, []string{mapi2capi.OpenStackMachineTemplateKind, mapi2capi.Metal3MachineTemplateKind}))
		return mapiv1beta1.ProviderSpec{}
	}
	return rawProviderSpec(ps, p, r)
}

func checkRef(ref clusterv1.ContractVersionedObjectReference, kind, name string, p *field.Path, r *report) {
	if ref.Kind != kind || ref.Name != name || ref.APIGroup != mapi2capi.InfrastructureGroup {
		r.fail(field.Invalid(p, ref.Kind+" "+ref.Name, "does not name the "+kind+" "+name+" given"))
	}
}

// rawProviderSpec encodes a providerSpec as the MAPI object stores it.
func rawProviderSpec(ps any, p *field.Path, r *report) mapiv1beta1.ProviderSpec {
	raw, err := json.Marshal(ps)
	if err != nil {
		r.fail(field.InternalError(p, err))
		return mapiv1beta1.ProviderSpec{}
	}
	return mapiv1beta1.ProviderSpec{Value: &runtime.RawExtension{Raw: raw}}
}

// selector translates the matchLabels as labels are translated.
func selector(in *metav1.LabelSelector) metav1.LabelSelector {
	out := *in.DeepCopy()
	out.MatchLabels = convertLabels(in.MatchLabels)
	return out
}

// machineSetStatus is what CAPI's status says that MAPI's has a place for.
//
//nolint:staticcheck // CAPI's v1beta1 block is where fullyLabeledReplicas and the failure fields are
func machineSetStatus(ms *clusterv1.MachineSet, sel *metav1.LabelSelector) mapiv1beta1.MachineSetStatus {
	st := ms.Status
	out := mapiv1beta1.MachineSetStatus{
		Replicas:          ptr.Deref(st.Replicas, 0),
		ReadyReplicas:     ptr.Deref(st.ReadyReplicas, 0),
		AvailableReplicas: ptr.Deref(st.AvailableReplicas, 0),
	}
	if s, err := metav1.LabelSelectorAsSelector(sel); err == nil {
		out.LabelSelector = s.String()
	}
	if d := st.Deprecated; d != nil && d.V1Beta1 != nil {
		out.FullyLabeledReplicas = d.V1Beta1.FullyLabeledReplicas
		out.ErrorMessage = mapi2capi.CopyPtr(d.V1Beta1.FailureMessage)
		if d.V1Beta1.FailureReason != nil {
			out.ErrorReason = ptr.To(mapiv1beta1.MachineSetStatusError(*d.V1Beta1.FailureReason))
		}
	}
	return out
}
