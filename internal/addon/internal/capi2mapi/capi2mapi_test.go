package capi2mapi

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/addon/internal/mapi2capi"
	mapiv1alpha1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1alpha1"
	metal3v1 "github.com/ocp-capi/ocp-capi/internal/consumed/metal3/v1beta1"
)

const (
	netID = "11111111-1111-4111-8111-111111111111"
	sgID  = "55555555-5555-4555-8555-555555555555"
)

// tp is the path of a template field.
func tp(rest string) string { return "OpenStackMachineTemplate.spec.template.spec." + rest }

func baseCAPISpec() infrav1.OpenStackMachineSpec {
	return infrav1.OpenStackMachineSpec{
		Flavor: infrav1.FlavorParam{Filter: &infrav1.FlavorFilter{Name: ptr.To("m1.large")}},
		Image:  infrav1.ImageParam{Filter: &infrav1.ImageFilter{Name: ptr.To("rhcos")}},
	}
}

func convertShell(t *testing.T, mutateMS func(*clusterv1.MachineSet), mutate func(*infrav1.OpenStackMachineSpec)) ([]string, []string) {
	t.Helper()
	ms := capiShell()
	ms.Spec.Template.Spec.Bootstrap.DataSecretName = ptr.To("worker-user-data")
	ms.Spec.Template.Spec.InfrastructureRef = clusterv1.ContractVersionedObjectReference{APIGroup: mapi2capi.InfrastructureGroup, Kind: mapi2capi.OpenStackMachineTemplateKind, Name: "t"}
	tmpl := &infrav1.OpenStackMachineTemplate{ObjectMeta: metav1.ObjectMeta{Name: "t", Namespace: testCAPINS}}
	tmpl.Spec.Template.Spec = baseCAPISpec()
	if mutateMS != nil {
		mutateMS(ms)
	}
	if mutate != nil {
		mutate(&tmpl.Spec.Template.Spec)
	}
	out, warnings, errs := MachineSet(ms, tmpl, toMAPIInfra())
	if len(errs) == 0 && out == nil {
		t.Fatal("no MachineSet and no errors")
	}
	var paths []string
	for _, e := range errs {
		paths = append(paths, e.Field)
	}
	slices.Sort(paths)
	return paths, warnings
}

// TestRefused: what MAPI cannot express is an error at the CAPI field's
// path, never a silent loss (each row is one rule of docs/addon/migration.md,
// "The reverse conversion").
func TestRefused(t *testing.T) {
	tests := []struct {
		name   string
		ms     func(*clusterv1.MachineSet)
		spec   func(*infrav1.OpenStackMachineSpec)
		errors []string
	}{
		{name: "the base converts"},
		{name: "flavor by ID", spec: func(s *infrav1.OpenStackMachineSpec) { s.Flavor = infrav1.FlavorParam{ID: ptr.To(netID)} }, errors: []string{tp("flavor.id")}},
		{name: "image by ID", spec: func(s *infrav1.OpenStackMachineSpec) { s.Image = infrav1.ImageParam{ID: ptr.To(netID)} }, errors: []string{tp("image.id")}},
		{name: "image by tags", spec: func(s *infrav1.OpenStackMachineSpec) { s.Image.Filter.Tags = []string{"x"} }, errors: []string{tp("image.filter.tags")}},
		{name: "identity with a region", spec: func(s *infrav1.OpenStackMachineSpec) {
			s.IdentityRef = &infrav1.OpenStackIdentityReference{Type: infrav1.IdentityRefTypeSecret, Name: "c", CloudName: "o", Region: "r"}
		}, errors: []string{tp("identityRef.region")}},
		{name: "an explicit port on a network by filter", spec: func(s *infrav1.OpenStackMachineSpec) {
			s.Ports = []infrav1.PortOpts{{NameSuffix: ptr.To("a"), Network: &infrav1.NetworkParam{ID: ptr.To(netID)}},
				{Network: &infrav1.NetworkParam{Filter: &infrav1.NetworkFilter{Name: "n"}}}}
		}, errors: []string{tp("ports[1].network.id")}},
		{name: "an explicit port's subnet by filter", spec: func(s *infrav1.OpenStackMachineSpec) {
			s.Ports = []infrav1.PortOpts{{NameSuffix: ptr.To("a"), Network: &infrav1.NetworkParam{ID: ptr.To(netID)},
				FixedIPs: []infrav1.FixedIP{{Subnet: &infrav1.SubnetParam{Filter: &infrav1.SubnetFilter{Name: "s"}}}}}}
		}, errors: []string{tp("ports[0].fixedIPs[0].subnet.filter")}},
		{name: "a port's security group by filter", spec: func(s *infrav1.OpenStackMachineSpec) {
			s.Ports = []infrav1.PortOpts{{Network: &infrav1.NetworkParam{ID: ptr.To(netID)},
				SecurityGroups: []infrav1.SecurityGroupParam{{Filter: &infrav1.SecurityGroupFilter{Name: "g"}}}}}
		}, errors: []string{tp("ports[0].securityGroups[0].filter")}},
		{name: "port security off with groups and pairs", spec: func(s *infrav1.OpenStackMachineSpec) {
			s.Ports = []infrav1.PortOpts{{Network: &infrav1.NetworkParam{ID: ptr.To(netID)}, NameSuffix: ptr.To("a"),
				SecurityGroups:         []infrav1.SecurityGroupParam{{ID: ptr.To(sgID)}},
				ResolvedPortSpecFields: infrav1.ResolvedPortSpecFields{EnablePortSecurity: ptr.To(false), AllowedAddressPairs: []infrav1.AddressPair{{IPAddress: "10.9.9.9"}}}}}
		}, errors: []string{tp("ports[0].allowedAddressPairs"), tp("ports[0].securityGroups")}},
		{name: "hostID, valueSpecs, propagateUplinkStatus", spec: func(s *infrav1.OpenStackMachineSpec) {
			s.Ports = []infrav1.PortOpts{{Network: &infrav1.NetworkParam{ID: ptr.To(netID)}, ResolvedPortSpecFields: infrav1.ResolvedPortSpecFields{
				HostID: ptr.To("h"), ValueSpecs: []infrav1.ValueSpec{{Name: "a", Key: "b", Value: "c"}}, PropagateUplinkStatus: ptr.To(true)}}}
		}, errors: []string{tp("ports[0].hostID"), tp("ports[0].propagateUplinkStatus"), tp("ports[0].valueSpecs")}},
		{name: "an empty network filter", spec: func(s *infrav1.OpenStackMachineSpec) {
			s.Ports = []infrav1.PortOpts{{Network: &infrav1.NetworkParam{Filter: &infrav1.NetworkFilter{}}}}
		}, errors: []string{tp("ports[0].network.filter")}},
		{name: "volume options on a Local device", spec: func(s *infrav1.OpenStackMachineSpec) {
			s.AdditionalBlockDevices = []infrav1.AdditionalBlockDevice{{Name: "d", SizeGiB: 1, Storage: infrav1.BlockDeviceStorage{Type: infrav1.LocalBlockDevice, Volume: &infrav1.BlockDeviceVolume{Type: "x"}}}}
		}, errors: []string{tp("additionalBlockDevices[0].storage.volume")}},
		{name: "floating IP pool, scheduler hints", spec: func(s *infrav1.OpenStackMachineSpec) {
			s.FloatingIPPoolRef = &corev1TypedRef
			s.SchedulerHintAdditionalProperties = []infrav1.SchedulerHintAdditionalProperty{{Name: "x", Value: infrav1.SchedulerHintAdditionalValue{Type: "Bool", Bool: ptr.To(true)}}}
		}, errors: []string{tp("floatingIPPoolRef"), tp("schedulerHintAdditionalProperties")}},
		{name: "version, readiness gates, timeouts, naming, no user data", ms: func(ms *clusterv1.MachineSet) {
			s := &ms.Spec.Template.Spec
			s.Version = "v1.36.0"
			s.ReadinessGates = []clusterv1.MachineReadinessGate{{ConditionType: "X"}}
			s.Deletion.NodeDrainTimeoutSeconds = ptr.To[int32](5)
			s.Deletion.NodeVolumeDetachTimeoutSeconds = ptr.To[int32](5)
			s.Deletion.NodeDeletionTimeoutSeconds = ptr.To[int32](5)
			s.Bootstrap.DataSecretName = nil
			ms.Spec.MachineNaming.Template = "{{ .random }}"
		}, errors: []string{
			"spec.machineNaming.template", "spec.template.spec.bootstrap.dataSecretName", "spec.template.spec.deletion.nodeDeletionTimeoutSeconds",
			"spec.template.spec.deletion.nodeDrainTimeoutSeconds", "spec.template.spec.deletion.nodeVolumeDetachTimeoutSeconds",
			"spec.template.spec.readinessGates", "spec.template.spec.version",
		}},
		{name: "CAPI's default deletion timeout is fine", ms: func(ms *clusterv1.MachineSet) {
			ms.Spec.Template.Spec.Deletion.NodeDeletionTimeoutSeconds = ptr.To[int32](10)
		}},
		{name: "a taint set only at initialization", ms: func(ms *clusterv1.MachineSet) {
			ms.Spec.Template.Spec.Taints = []clusterv1.MachineTaint{{Key: "k", Effect: "NoSchedule", Propagation: clusterv1.MachineTaintPropagationOnInitialization}}
		}, errors: []string{"spec.template.spec.taints[0].propagation"}},
		{name: "the reference names another template", ms: func(ms *clusterv1.MachineSet) {
			ms.Spec.Template.Spec.InfrastructureRef.Name = "other"
		}, errors: []string{"spec.template.spec.infrastructureRef"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := convertShell(t, tt.ms, tt.spec)
			want := slices.Clone(tt.errors)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("errors at %q, want %q", got, want)
			}
		})
	}
}

var corev1TypedRef = corev1TypedLocalObjectReference()

// TestPortsSplit: leading ports MAPO would make from networks become
// networks, the rest explicit ports; MAPO's VIP pairs on a network port
// are noAllowedAddressPairs: false.
func TestPortsSplit(t *testing.T) {
	vips := []infrav1.AddressPair{{IPAddress: testVIPs[0]}, {IPAddress: testVIPs[1]}}
	in := []infrav1.PortOpts{
		{Network: &infrav1.NetworkParam{ID: ptr.To(netID)}, ResolvedPortSpecFields: infrav1.ResolvedPortSpecFields{AllowedAddressPairs: vips}},
		{FixedIPs: []infrav1.FixedIP{{Subnet: &infrav1.SubnetParam{Filter: &infrav1.SubnetFilter{Name: "nodes"}}}}},
		{Network: &infrav1.NetworkParam{ID: ptr.To(netID)}, NameSuffix: ptr.To("radio")},
		{Network: &infrav1.NetworkParam{ID: ptr.To(netID)}},
	}
	r := &report{}
	networks, ports := ports(in, tpPath(), toMAPIInfra(), r)
	if len(r.errs) > 0 {
		t.Fatal(r.errs)
	}
	want := []mapiv1alpha1.NetworkParam{
		{UUID: netID},
		{NoAllowedAddressPairs: true, Subnets: []mapiv1alpha1.SubnetParam{{Filter: mapiv1alpha1.SubnetFilter{Name: "nodes"}}}},
	}
	if !equalJSON(networks, want) {
		t.Errorf("networks %s, want %s", dump(networks), dump(want))
	}
	if len(ports) != 2 || ports[0].NameSuffix != "radio" || ports[1].NetworkID != netID {
		t.Errorf("ports %s", dump(ports))
	}
}

// TestProfileFalse: an explicit false is the default; it is left out with
// a warning.
func TestProfileFalse(t *testing.T) {
	_, warnings := convertShell(t, nil, func(s *infrav1.OpenStackMachineSpec) {
		s.Ports = []infrav1.PortOpts{{Network: &infrav1.NetworkParam{ID: ptr.To(netID)},
			ResolvedPortSpecFields: infrav1.ResolvedPortSpecFields{Profile: &infrav1.BindingProfile{OVSHWOffload: ptr.To(false), TrustedVF: ptr.To(true)}}}}
	})
	if len(warnings) != 1 || warnings[0][:len(tp("ports[0].profile.ovsHWOffload"))] != tp("ports[0].profile.ovsHWOffload") {
		t.Errorf("warnings %v", warnings)
	}
}

// TestBareMetalRefused: what the bare-metal actuator cannot express.
func TestBareMetalRefused(t *testing.T) {
	r := &report{}
	s := &metal3v1.Metal3MachineSpec{Image: metal3v1.Image{URL: "u", Checksum: "c", ChecksumType: ptr.To("sha256")},
		DataTemplate: &metal3v1.LocalObjectReference{Name: "d"}, AutomatedCleaningMode: ptr.To("disabled")}
	bareMetalProviderSpec(s, providerInput{dataSecretName: ptr.To("u")}, tpPath(), r)
	var got []string
	for _, e := range r.errs {
		got = append(got, e.Field)
	}
	slices.Sort(got)
	want := []string{tp("automatedCleaningMode"), tp("dataTemplate"), tp("image.checksumType")}
	if !slices.Equal(got, want) {
		t.Errorf("errors at %q, want %q", got, want)
	}
}

func tpPath() *field.Path {
	return field.NewPath("OpenStackMachineTemplate", "spec", "template", "spec")
}

func equalJSON(a, b any) bool { return dump(a) == dump(b) }

func corev1TypedLocalObjectReference() corev1.TypedLocalObjectReference {
	return corev1.TypedLocalObjectReference{Kind: "OpenStackFloatingIPPool", Name: "p"}
}
