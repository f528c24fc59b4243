package mapi2capi

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	capierrors "sigs.k8s.io/cluster-api/api/deprecated/errors" //nolint:staticcheck // CAPI's v1beta1 status block uses it
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
	metal3v1 "github.com/ocp-capi/ocp-capi/internal/consumed/metal3/v1beta1"
)

// Annotations that the Machine API providers put on a Machine.
const (
	// HostAnnotation names the BareMetalHost of a bare-metal machine as
	// <namespace>/<name>. The Machine API's bare-metal actuator and CAPM3
	// use the same key (on the Machine, on the Metal3Machine), and both
	// look the host up by it, in whatever namespace it names.
	HostAnnotation = "metal3.io/BareMetalHost"
	// MAPOResourceIDAnnotation is the Nova server ID MAPO records.
	MAPOResourceIDAnnotation = "openstack-resourceId"
)

// providerAnnotations are provider status on a MAPI Machine: they move to
// the infrastructure machine (the host) or are dropped (the server ID is
// the OpenStackMachine's status.instanceID).
var providerAnnotations = []string{HostAnnotation, MAPOResourceIDAnnotation, MAPIInstanceStateAnnotation}

// DefaultNodeDeletionTimeoutSeconds is what CAPI's Machine webhook sets
// when nodeDeletionTimeoutSeconds is not set.
const DefaultNodeDeletionTimeoutSeconds int32 = 10

// MAPI's machine phases, which CAPI spells the same.
var machinePhases = []string{"Provisioning", "Provisioned", "Running", "Deleting", "Failed"}

// Machine converts the MAPI Machine m into a CAPI Machine of the same name
// in infra.Namespace and its infrastructure machine (an *OpenStackMachine
// or a *Metal3Machine, also of the same name). Both carry, in their
// status, what MAPI's status says (the mirror's part). ownerReferences,
// the pause and the sync bookkeeping are the controller's. On errors both
// objects are nil; warnings are returned either way. m is not changed.
//
// Labels and annotations the providers set from the server (instance type,
// region, zone, instance state, the server ID) are provider status, not
// configuration: they are dropped without a warning.
func Machine(m *mapiv1beta1.Machine, infra Infra) (*clusterv1.Machine, client.Object, []string, field.ErrorList) {
	r := &report{spec: specPath}
	if m == nil {
		return nil, nil, nil, field.ErrorList{field.Required(field.NewPath("machine"), "no Machine to convert")}
	}
	if infra.ClusterName == "" {
		r.fail(field.Required(infraNamePath, "the CAPI Cluster name is unknown"))
	}
	prov := convertProvider(&m.Spec, m.Namespace, infra, r)
	capi := convertMachine(m, infra, r)
	if prov != nil && prov.machineKind == Metal3MachineKind {
		checkHostNamespace(m.Annotations[HostAnnotation], infra.Namespace, r)
	}
	if len(r.errs) > 0 || prov == nil {
		return nil, nil, r.warnings, r.errs
	}

	im := prov.machine
	im.SetName(m.Name)
	im.SetNamespace(infra.Namespace)
	im.SetLabels(map[string]string{clusterv1.ClusterNameLabel: infra.ClusterName})
	providerID := ptr.Deref(m.Spec.ProviderID, "")
	switch t := im.(type) {
	case *infrav1.OpenStackMachine:
		t.Spec.ProviderID = providerID
		t.Status = openStackMachineStatus(m)
	case *metal3v1.Metal3Machine:
		if providerID != "" {
			t.Spec.ProviderID = ptr.To(providerID)
		}
		if host := m.Annotations[HostAnnotation]; host != "" {
			t.SetAnnotations(map[string]string{HostAnnotation: host})
		}
		t.Status = metal3MachineStatus(m)
	}

	ms := &capi.Spec
	ms.InfrastructureRef = clusterv1.ContractVersionedObjectReference{APIGroup: InfrastructureGroup, Kind: prov.machineKind, Name: m.Name}
	ms.FailureDomain = prov.failureDomain
	ms.Bootstrap.DataSecretName = prov.dataSecretName
	return capi, im, r.warnings, nil
}

// convertMachine converts everything of the Machine but the providerSpec.
func convertMachine(m *mapiv1beta1.Machine, infra Infra, r *report) *clusterv1.Machine {
	labels := map[string]string{}
	for k, v := range m.Labels {
		switch k {
		case MAPIInstanceTypeLabel, MAPIRegionLabel, MAPIZoneLabel:
		default:
			labels[k] = v
		}
	}
	annotations := map[string]string{}
	for k, v := range m.Annotations {
		if !slices.Contains(providerAnnotations, k) {
			annotations[k] = v
		}
	}
	spec := &m.Spec
	rejectObjectMeta(&spec.ObjectMeta, r.spec.Child("metadata"), r)
	l := convertLabels(labels, field.NewPath("metadata", "labels"), r)
	l = mergeInto(l, spec.Labels, r.spec.Child("metadata", "labels"), r)
	warnUnsyncedNodeMetadata(spec, r)
	if infra.ClusterName != "" {
		l = mergeInto(l, map[string]string{clusterv1.ClusterNameLabel: infra.ClusterName}, field.NewPath("metadata", "labels"), r)
	}
	a := convertAnnotations(annotations, field.NewPath("metadata", "annotations"), r)
	a = mergeInto(a, spec.Annotations, r.spec.Child("metadata", "annotations"), r)
	a = mergeInto(a, lifecycleHookAnnotations(spec.LifecycleHooks), r.spec.Child("lifecycleHooks"), r)

	capi := &clusterv1.Machine{
		TypeMeta:   metav1.TypeMeta{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine"},
		ObjectMeta: metav1.ObjectMeta{Name: m.Name, Namespace: infra.Namespace, Labels: l, Annotations: emptyToNil(a)},
		Spec: clusterv1.MachineSpec{
			ClusterName: infra.ClusterName,
			ProviderID:  ptr.Deref(spec.ProviderID, ""),
			Taints:      convertTaints(spec, r),
			// CAPI's Machine webhook sets it; set here, it makes no diff.
			Deletion: clusterv1.MachineDeletionSpec{NodeDeletionTimeoutSeconds: ptr.To(DefaultNodeDeletionTimeoutSeconds)},
		},
	}
	capi.Status = machineStatus(m)
	return capi
}

// checkHostNamespace refuses a bare-metal machine whose BareMetalHost
// (the annotation metal3.io/BareMetalHost, <namespace>/<name>) is not in
// the CAPI namespace. CAPM3 takes the annotated host wherever it is, and
// makes the Metal3Machine its controller owner: an ownerReference across
// namespaces, which the garbage collector takes for a missing owner, so
// it would delete the host. CAPM3 itself only ever picks hosts of its own
// namespace. The way out is to run the CAPI side beside the hosts
// (--capi-namespace set to the hosts' namespace).
func checkHostNamespace(host, capiNS string, r *report) {
	ns, _, ok := strings.Cut(host, "/")
	if !ok || ns == capiNS {
		return
	}
	r.fail(field.Invalid(field.NewPath("metadata", "annotations").Key(HostAnnotation), host,
		fmt.Sprintf("the BareMetalHost is in namespace %s, not in the CAPI namespace %s: CAPM3 would own it across namespaces, "+
			"which the garbage collector takes for a missing owner (it would delete the host); run the add-on with --capi-namespace %s",
			ns, capiNS, ns)))
}

// machineStatus is what MAPI's status says that CAPI's has a place for.
//
//nolint:staticcheck // the v1beta1 block is the only place for the failure fields
func machineStatus(m *mapiv1beta1.Machine) clusterv1.MachineStatus {
	st := m.Status
	out := clusterv1.MachineStatus{Addresses: machineAddresses(st.Addresses)}
	if st.NodeRef != nil && st.NodeRef.Name != "" {
		out.NodeRef = clusterv1.MachineNodeReference{Name: st.NodeRef.Name}
	}
	if p := ptr.Deref(st.Phase, ""); slices.Contains(machinePhases, p) {
		out.Phase = p
	}
	if st.ErrorReason != nil || st.ErrorMessage != nil {
		d := &clusterv1.MachineV1Beta1DeprecatedStatus{FailureMessage: CopyPtr(st.ErrorMessage)}
		if st.ErrorReason != nil {
			d.FailureReason = ptr.To(capierrors.MachineStatusError(*st.ErrorReason))
		}
		out.Deprecated = &clusterv1.MachineDeprecatedStatus{V1Beta1: d}
	}
	return out
}

func machineAddresses(in []corev1.NodeAddress) clusterv1.MachineAddresses {
	var out clusterv1.MachineAddresses
	for _, a := range in {
		if a.Address != "" {
			out = append(out, clusterv1.MachineAddress{Type: clusterv1.MachineAddressType(a.Type), Address: a.Address})
		}
	}
	return out
}

// openStackMachineStatus: the server's ID (from the providerID MAPO
// wrote), its state (MAPO's instance-state annotation) and addresses. Not
// provisioned: that is for the OpenStackMachine controller to find out
// when it adopts the server.
func openStackMachineStatus(m *mapiv1beta1.Machine) infrav1.OpenStackMachineStatus {
	var out infrav1.OpenStackMachineStatus
	if id := InstanceIDFromProviderID(ptr.Deref(m.Spec.ProviderID, "")); id != "" {
		out.InstanceID = ptr.To(id)
	}
	if s := m.Annotations[MAPIInstanceStateAnnotation]; s != "" {
		out.InstanceState = ptr.To(infrav1.InstanceState(s))
	}
	out.Addresses = machineAddresses(m.Status.Addresses)
	return out
}

func metal3MachineStatus(m *mapiv1beta1.Machine) metal3v1.Metal3MachineStatus {
	var out metal3v1.Metal3MachineStatus
	for _, a := range m.Status.Addresses {
		if a.Address != "" {
			out.Addresses = append(out.Addresses, metal3v1.MachineAddress{Type: metal3v1.MachineAddressType(a.Type), Address: a.Address})
		}
	}
	return out
}

// InstanceIDFromProviderID is the server ID of an OpenStack providerID
// (openstack://<region>/<id>, MAPO writes openstack:///<id>); "" for any
// other.
func InstanceIDFromProviderID(providerID string) string {
	rest, ok := strings.CutPrefix(providerID, "openstack://")
	if !ok {
		return ""
	}
	_, id, ok := strings.Cut(rest, "/")
	if !ok || id == "" || strings.Contains(id, "/") {
		return ""
	}
	return id
}

func emptyToNil(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}
