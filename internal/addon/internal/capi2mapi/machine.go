package capi2mapi

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/addon/internal/mapi2capi"
	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
	metal3v1 "github.com/ocp-capi/ocp-capi/internal/consumed/metal3/v1beta1"
)

// CAPI's machine phases and MAPI's for them; the others (Pending, Unknown)
// have no MAPI phase.
var machinePhases = map[string]string{
	"Provisioning": "Provisioning", "Provisioned": "Provisioned", "Running": "Running",
	"Deleting": "Deleting", "Deleted": "Deleting", "Failed": "Failed",
}

// Machine converts the CAPI Machine m, whose infrastructureRef is im (an
// *OpenStackMachine or a *Metal3Machine), into the MAPI Machine that
// mirrors it, in infra.MAPINamespace: spec and status, and the provider's
// labels and annotations MAPO or the bare-metal actuator would set
// (instance type, zone, instance state, the server ID, the host).
// ownerReferences and spec.authoritativeAPI are the caller's. On errors the
// Machine is nil. m and im are not changed.
func Machine(m *clusterv1.Machine, im client.Object, infra Infra) (*mapiv1beta1.Machine, []string, field.ErrorList) {
	r := &report{}
	if m == nil || im == nil {
		return nil, nil, field.ErrorList{field.Required(field.NewPath("machine"), "no Machine or infrastructure machine to convert")}
	}
	labels, annotations, node, hooks := machineMetadata(m.Labels, m.Annotations)
	out := &mapiv1beta1.Machine{
		TypeMeta:   metav1.TypeMeta{APIVersion: mapiv1beta1.GroupVersion.String(), Kind: "Machine"},
		ObjectMeta: metav1.ObjectMeta{Name: m.Name, Namespace: infra.MAPINamespace, Labels: labels, Annotations: annotations},
		Spec:       mapiv1beta1.MachineSpec{ObjectMeta: node, LifecycleHooks: hooks},
	}
	machineSpecChecks(&m.Spec, specPath, r)
	out.Spec.Taints = convertTaints(m.Spec.Taints, specPath.Child("taints"), r)
	if m.Spec.ProviderID != "" {
		out.Spec.ProviderID = ptr.To(m.Spec.ProviderID)
	}
	in := providerInput{failureDomain: m.Spec.FailureDomain, dataSecretName: m.Spec.Bootstrap.DataSecretName,
		dataSecretPath: specPath.Child("bootstrap", "dataSecretName")}
	refPath := specPath.Child("infrastructureRef")
	var ps any
	switch t := im.(type) {
	case *infrav1.OpenStackMachine:
		checkRef(m.Spec.InfrastructureRef, mapi2capi.OpenStackMachineKind, t.Name, refPath, r)
		ps = openStackProviderSpec(&t.Spec, in, field.NewPath(mapi2capi.OpenStackMachineKind, "spec"), infra, r)
		if f := t.Spec.Flavor.Filter; f != nil && f.Name != nil {
			setKey(&out.Labels, mapi2capi.MAPIInstanceTypeLabel, *f.Name)
		}
		if s := t.Status.InstanceState; s != nil && *s != "" {
			setKey(&out.Annotations, mapi2capi.MAPIInstanceStateAnnotation, string(*s))
		}
		if id := ptr.Deref(t.Status.InstanceID, ""); id != "" {
			setKey(&out.Annotations, mapi2capi.MAPOResourceIDAnnotation, id)
		}
	case *metal3v1.Metal3Machine:
		checkRef(m.Spec.InfrastructureRef, mapi2capi.Metal3MachineKind, t.Name, refPath, r)
		ps = bareMetalProviderSpec(&t.Spec, in, field.NewPath(mapi2capi.Metal3MachineKind, "spec"), r)
		if host := t.Annotations[mapi2capi.HostAnnotation]; host != "" {
			setKey(&out.Annotations, mapi2capi.HostAnnotation, host)
		}
	default:
		r.fail(field.NotSupported(refPath.Child("kind"), m.Spec.InfrastructureRef.Kind, []string{mapi2capi.OpenStackMachineKind, mapi2capi.Metal3MachineKind}))
	}
	if ps != nil {
		out.Spec.ProviderSpec = rawProviderSpec(ps, refPath, r)
	}
	if m.Spec.FailureDomain != "" {
		setKey(&out.Labels, mapi2capi.MAPIZoneLabel, m.Spec.FailureDomain)
	}
	out.Status = machineStatus(m)
	if len(r.errs) > 0 {
		return nil, r.warnings, r.errs
	}
	return out, r.warnings, nil
}

func setKey(m *map[string]string, k, v string) {
	if *m == nil {
		*m = map[string]string{}
	}
	(*m)[k] = v
}

// machineStatus is what CAPI's status says that MAPI's has a place for.
//
//nolint:staticcheck // CAPI's v1beta1 block is where the failure fields are
func machineStatus(m *clusterv1.Machine) mapiv1beta1.MachineStatus {
	st := m.Status
	var out mapiv1beta1.MachineStatus
	if st.NodeRef.IsDefined() {
		out.NodeRef = &corev1.ObjectReference{Kind: "Node", Name: st.NodeRef.Name}
	}
	for _, a := range st.Addresses {
		out.Addresses = append(out.Addresses, corev1.NodeAddress{Type: corev1.NodeAddressType(a.Type), Address: a.Address})
	}
	if p, ok := machinePhases[st.Phase]; ok {
		out.Phase = ptr.To(p)
	}
	if d := st.Deprecated; d != nil && d.V1Beta1 != nil {
		out.ErrorMessage = mapi2capi.CopyPtr(d.V1Beta1.FailureMessage)
		if d.V1Beta1.FailureReason != nil {
			out.ErrorReason = ptr.To(mapiv1beta1.MachineStatusError(*d.V1Beta1.FailureReason))
		}
	}
	return out
}
