package mapi2capi

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	configv1 "github.com/ocp-capi/ocp-capi/internal/consumed/config/v1"
	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
	metal3v1 "github.com/ocp-capi/ocp-capi/internal/consumed/metal3/v1beta1"
)

// runningMachine is a Machine of the MachineSet in fixture file, as MAPO
// leaves it once its server runs.
func runningMachine(t *testing.T, file string) *mapiv1beta1.Machine {
	ms := readMachineSet(t, file)
	m := &mapiv1beta1.Machine{
		ObjectMeta: metav1.ObjectMeta{
			Name: ms.Name + "-abcde", Namespace: testMAPINS, Labels: ms.Spec.Template.Labels,
			Annotations: map[string]string{MAPIInstanceStateAnnotation: "ACTIVE", MAPOResourceIDAnnotation: "9f1c0c4e-0000-4000-8000-000000000001"},
		},
		Spec: *ms.Spec.Template.Spec.DeepCopy(),
	}
	m.Labels[MAPIInstanceTypeLabel], m.Labels[MAPIZoneLabel], m.Labels[MAPIRegionLabel] = "m1.xlarge", "nova-az1", "regionOne"
	m.Spec.ProviderID = ptr.To("openstack:///9f1c0c4e-0000-4000-8000-000000000001")
	m.Status = mapiv1beta1.MachineStatus{
		NodeRef:   &corev1.ObjectReference{Kind: "Node", Name: m.Name},
		Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.1.5"}, {Type: corev1.NodeHostName, Address: m.Name}},
		Phase:     ptr.To("Running"),
	}
	return m
}

// TestMachine: a running MAPO machine becomes a CAPI Machine and an
// OpenStackMachine of its name that describe the same server: its
// providerID and ID, the ports, volumes and zone MAPO made, and the status
// MAPI reports. The provider's labels and annotations are status, not
// copied.
func TestMachine(t *testing.T) {
	m := runningMachine(t, "installer-rootvolume.yaml")
	capi, im, warnings, errs := Machine(m, testInfra())
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	checkReport(t, warnings, errs, []string{"spec.providerSpec.value.networks[0].subnets[0]"}, nil)
	osm, ok := im.(*infrav1.OpenStackMachine)
	if !ok {
		t.Fatalf("infrastructure machine %T", im)
	}
	if osm.Name != m.Name || osm.Namespace != testCAPINS || capi.Name != m.Name {
		t.Errorf("names %s/%s, %s", osm.Namespace, osm.Name, capi.Name)
	}
	wantRef := clusterv1.ContractVersionedObjectReference{APIGroup: InfrastructureGroup, Kind: OpenStackMachineKind, Name: m.Name}
	if diff := cmp.Diff(wantRef, capi.Spec.InfrastructureRef); diff != "" {
		t.Errorf("infrastructureRef:\n%s", diff)
	}
	if capi.Spec.ProviderID != *m.Spec.ProviderID || osm.Spec.ProviderID != *m.Spec.ProviderID {
		t.Errorf("providerID %q %q", capi.Spec.ProviderID, osm.Spec.ProviderID)
	}
	if capi.Spec.FailureDomain != "nova-az1" || ptr.Deref(capi.Spec.Bootstrap.DataSecretName, "") != "worker-user-data" {
		t.Errorf("failureDomain %q, dataSecretName %v", capi.Spec.FailureDomain, capi.Spec.Bootstrap.DataSecretName)
	}
	for _, k := range []string{MAPIInstanceTypeLabel, MAPIZoneLabel, MAPIRegionLabel} {
		if _, ok := capi.Labels[k]; ok {
			t.Errorf("provider label %s copied", k)
		}
	}
	if _, ok := capi.Annotations[MAPIInstanceStateAnnotation]; ok {
		t.Errorf("instance state copied to the Machine: %v", capi.Annotations)
	}
	if capi.Labels["node-role.kubernetes.io/worker"] != "" || capi.Labels[clusterv1.ClusterNameLabel] != testCluster {
		t.Errorf("labels %v", capi.Labels)
	}
	wantStatus := clusterv1.MachineStatus{
		NodeRef:   clusterv1.MachineNodeReference{Name: m.Name},
		Addresses: clusterv1.MachineAddresses{{Type: clusterv1.MachineInternalIP, Address: "10.0.1.5"}, {Type: clusterv1.MachineHostName, Address: m.Name}},
		Phase:     "Running",
	}
	if diff := cmp.Diff(wantStatus, capi.Status); diff != "" {
		t.Errorf("Machine status (-want +got):\n%s", diff)
	}
	if ptr.Deref(osm.Status.InstanceID, "") != "9f1c0c4e-0000-4000-8000-000000000001" || ptr.Deref(osm.Status.InstanceState, "") != "ACTIVE" || len(osm.Status.Addresses) != 2 {
		t.Errorf("OpenStackMachine status %+v", osm.Status)
	}
	if osm.Status.Initialization != nil {
		t.Errorf("the mirror says provisioned; the OpenStackMachine controller finds that out when it adopts the server")
	}
	if osm.Spec.RootVolume == nil || osm.Spec.RootVolume.AvailabilityZone == nil || osm.Spec.RootVolume.AvailabilityZone.From != infrav1.VolumeAZFromMachine {
		t.Errorf("root volume %+v", osm.Spec.RootVolume)
	}
	if ptr.Deref(capi.Spec.Deletion.NodeDeletionTimeoutSeconds, 0) != DefaultNodeDeletionTimeoutSeconds {
		t.Errorf("nodeDeletionTimeoutSeconds %v: CAPI's webhook would set 10", capi.Spec.Deletion.NodeDeletionTimeoutSeconds)
	}
}

// TestMachineBareMetal: the host of a bare-metal machine is named on the
// Metal3Machine with the key both actuators look it up by. The CAPI side
// runs beside the hosts (--capi-namespace openshift-machine-api).
func TestMachineBareMetal(t *testing.T) {
	m := bareMetalMachine(t, "openshift-machine-api/host-3")
	infra := testInfra()
	infra.Platform = configv1.BareMetalPlatformType
	infra.Namespace = testMAPINS
	capi, im, _, errs := Machine(m, infra)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	m3m, ok := im.(*metal3v1.Metal3Machine)
	if !ok {
		t.Fatalf("%T", im)
	}
	if m3m.Annotations[HostAnnotation] != "openshift-machine-api/host-3" || ptr.Deref(m3m.Spec.ProviderID, "") != *m.Spec.ProviderID {
		t.Errorf("Metal3Machine %v %v", m3m.Annotations, m3m.Spec.ProviderID)
	}
	if m3m.Namespace != testMAPINS {
		t.Errorf("Metal3Machine in %s", m3m.Namespace)
	}
	if _, ok := capi.Annotations[HostAnnotation]; ok {
		t.Errorf("host annotation on the CAPI Machine")
	}
	if capi.Spec.InfrastructureRef.Kind != Metal3MachineKind {
		t.Errorf("ref %+v", capi.Spec.InfrastructureRef)
	}
}

// TestMachineBareMetalHostElsewhere: a host outside the CAPI namespace is
// refused at the annotation's path (CAPM3 would own it across namespaces,
// and the garbage collector would delete it); the message names the way
// out.
func TestMachineBareMetalHostElsewhere(t *testing.T) {
	infra := testInfra() // CAPI namespace openshift-cluster-api
	_, _, _, errs := Machine(bareMetalMachine(t, "openshift-machine-api/host-3"), infra)
	if len(errs) != 1 || errs[0].Field != "metadata.annotations[metal3.io/BareMetalHost]" ||
		!strings.Contains(errs[0].Detail, "--capi-namespace openshift-machine-api") {
		t.Fatalf("errors %v", errs)
	}
	// A host in the CAPI namespace (one Cluster API chose) is fine, and so
	// is a machine with no host yet.
	for _, host := range []string{testCAPINS + "/host-9", ""} {
		if _, _, _, errs := Machine(bareMetalMachine(t, host), infra); len(errs) > 0 {
			t.Errorf("host %q: %v", host, errs)
		}
	}
}

func bareMetalMachine(t *testing.T, host string) *mapiv1beta1.Machine {
	t.Helper()
	m := &mapiv1beta1.Machine{
		ObjectMeta: metav1.ObjectMeta{Name: "ocp-worker-0-x", Namespace: testMAPINS},
		Spec:       mapiv1beta1.MachineSpec{ProviderID: ptr.To("baremetalhost:///openshift-machine-api/host-3/uid")},
	}
	if host != "" {
		m.Annotations = map[string]string{HostAnnotation: host}
	}
	m.Spec.ProviderSpec = testMachineSet(t, `{"kind":"BareMetalMachineProviderSpec","image":{"url":"u","checksum":"c"},"userData":{"name":"worker-user-data-managed"}}`).Spec.Template.Spec.ProviderSpec
	return m
}

func TestInstanceIDFromProviderID(t *testing.T) {
	for in, want := range map[string]string{
		"openstack:///abc": "abc", "openstack://regionOne/abc": "abc", "openstack://": "", "aws:///x/y": "", "openstack:///a/b": "",
	} {
		if got := InstanceIDFromProviderID(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}
