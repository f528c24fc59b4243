package instance

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
)

func validSpec() Spec {
	return Spec{
		Name:   "worker-a",
		Image:  Ref{Name: "rhcos", Tags: []string{"ocp"}},
		Flavor: Ref{Name: "m1.large"},
		Ports:  []Port{{Network: Ref{ID: "net-1"}}},
	}
}

func TestRequestConversion(t *testing.T) {
	spec := Spec{
		Name:             "worker-a",
		Image:            Ref{ID: "img-1"},
		Flavor:           Ref{Name: "m1.large"},
		AvailabilityZone: "az1",
		SSHKeyName:       "ops",
		ConfigDrive:      true,
		Trunk:            true,
		ServerGroup:      Ref{Name: "workers"},
		Tags:             []string{"cluster-a"},
		UserData:         []byte("ignition"),
		Metadata:         map[string]string{"z": "1", "a": "2"},
		SchedulerHints:   map[string]any{"b": true, "n": 3, "s": "x"},
		SecurityGroups:   []Ref{{ID: "sg-1"}, {Name: "workers", Tags: []string{"t"}}},
		Ports: []Port{
			{
				Network:             Ref{Name: "machines", Tags: []string{"cluster-a"}},
				NameSuffix:          "api",
				Description:         "API",
				FixedIPs:            []FixedIP{{Subnet: Ref{ID: "sub-1"}, IPAddress: "10.0.0.5"}, {Subnet: Ref{Name: "v6"}}},
				SecurityGroups:      []Ref{{ID: "sg-2"}},
				Tags:                []string{"api"},
				Trunk:               ptr.To(false),
				AdminStateUp:        ptr.To(true),
				MACAddress:          "fa:16:3e:00:00:01",
				VNICType:            "direct",
				AllowedAddressPairs: []AddressPair{{IPAddress: "10.0.0.100", MACAddress: "fa:16:3e:00:00:02"}},
				HostID:              "host-1",
				TrustedVF:           true,
				ValueSpecs:          map[string]string{"k2": "v2", "k1": "v1"},
			},
			{Network: Ref{ID: "net-2"}, EnablePortSecurity: ptr.To(false)},
		},
		RootVolume: &RootVolume{SizeGiB: 50, Type: "ssd", AvailabilityZone: "az1"},
		Volumes:    []Volume{{Name: "etcd", SizeGiB: 10, Type: "fast"}, {Name: "scratch", SizeGiB: 5, Local: true}},
	}
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	want := &infrav1alpha1.OpenStackServerSpec{
		Image:            infrav1.ImageParam{ID: ptr.To("img-1")},
		Flavor:           ptr.To("m1.large"),
		AvailabilityZone: ptr.To("az1"),
		SSHKeyName:       "ops",
		ConfigDrive:      ptr.To(true),
		Trunk:            ptr.To(true),
		ServerGroup:      &infrav1.ServerGroupParam{Filter: &infrav1.ServerGroupFilter{Name: ptr.To("workers")}},
		Tags:             []string{"cluster-a"},
		ServerMetadata:   []infrav1.ServerMetadata{{Key: "a", Value: "2"}, {Key: "z", Value: "1"}},
		SchedulerHintAdditionalProperties: []infrav1.SchedulerHintAdditionalProperty{
			{Name: "b", Value: infrav1.SchedulerHintAdditionalValue{Type: infrav1.SchedulerHintTypeBool, Bool: ptr.To(true)}},
			{Name: "n", Value: infrav1.SchedulerHintAdditionalValue{Type: infrav1.SchedulerHintTypeNumber, Number: ptr.To[int32](3)}},
			{Name: "s", Value: infrav1.SchedulerHintAdditionalValue{Type: infrav1.SchedulerHintTypeString, String: ptr.To("x")}},
		},
		SecurityGroups: []infrav1.SecurityGroupParam{
			{ID: ptr.To("sg-1")},
			{Filter: &infrav1.SecurityGroupFilter{Name: "workers", FilterByNeutronTags: infrav1.FilterByNeutronTags{Tags: []infrav1.NeutronTag{"t"}}}},
		},
		Ports: []infrav1.PortOpts{
			{
				Network:     &infrav1.NetworkParam{Filter: &infrav1.NetworkFilter{Name: "machines", FilterByNeutronTags: infrav1.FilterByNeutronTags{Tags: []infrav1.NeutronTag{"cluster-a"}}}},
				NameSuffix:  ptr.To("api"),
				Description: ptr.To("API"),
				FixedIPs: []infrav1.FixedIP{
					{Subnet: &infrav1.SubnetParam{ID: ptr.To("sub-1")}, IPAddress: ptr.To("10.0.0.5")},
					{Subnet: &infrav1.SubnetParam{Filter: &infrav1.SubnetFilter{Name: "v6"}}},
				},
				SecurityGroups: []infrav1.SecurityGroupParam{{ID: ptr.To("sg-2")}},
				Tags:           []infrav1.NeutronTag{"api"},
				Trunk:          ptr.To(false),
				ResolvedPortSpecFields: infrav1.ResolvedPortSpecFields{
					AdminStateUp:        ptr.To(true),
					MACAddress:          ptr.To("fa:16:3e:00:00:01"),
					VNICType:            ptr.To("direct"),
					AllowedAddressPairs: []infrav1.AddressPair{{IPAddress: "10.0.0.100", MACAddress: ptr.To("fa:16:3e:00:00:02")}},
					HostID:              ptr.To("host-1"),
					Profile:             &infrav1.BindingProfile{TrustedVF: ptr.To(true)},
					ValueSpecs:          []infrav1.ValueSpec{{Name: "k1", Key: "k1", Value: "v1"}, {Name: "k2", Key: "k2", Value: "v2"}},
				},
			},
			{Network: &infrav1.NetworkParam{ID: ptr.To("net-2")}, ResolvedPortSpecFields: infrav1.ResolvedPortSpecFields{EnablePortSecurity: ptr.To(false)}},
		},
		RootVolume: &infrav1.RootVolume{SizeGiB: 50, BlockDeviceVolume: infrav1.BlockDeviceVolume{Type: "ssd",
			AvailabilityZone: &infrav1.VolumeAvailabilityZone{From: infrav1.VolumeAZFromName, Name: ptr.To[infrav1.VolumeAZName]("az1")}}},
		AdditionalBlockDevices: []infrav1.AdditionalBlockDevice{
			{Name: "etcd", SizeGiB: 10, Storage: infrav1.BlockDeviceStorage{Type: infrav1.VolumeBlockDevice, Volume: &infrav1.BlockDeviceVolume{Type: "fast"}}},
			{Name: "scratch", SizeGiB: 5, Storage: infrav1.BlockDeviceStorage{Type: infrav1.LocalBlockDevice}},
		},
	}
	req := spec.request()
	if diff := cmp.Diff(want, req.Spec); diff != "" {
		t.Errorf("server spec (-want +got):\n%s", diff)
	}
	if req.Name != "worker-a" || string(req.UserData) != "ignition" || req.MachineAZ != "az1" {
		t.Errorf("request %s %q %q", req.Name, req.UserData, req.MachineAZ)
	}
	// Maps become sorted lists: the same spec gives the same request.
	for range 10 {
		if diff := cmp.Diff(req, spec.request()); diff != "" {
			t.Fatalf("request changed between conversions:\n%s", diff)
		}
	}
}

func TestRequestConversionMinimal(t *testing.T) {
	spec := validSpec()
	got := spec.request().Spec
	want := &infrav1alpha1.OpenStackServerSpec{
		Image:  infrav1.ImageParam{Filter: &infrav1.ImageFilter{Name: ptr.To("rhcos"), Tags: []string{"ocp"}}},
		Flavor: ptr.To("m1.large"),
		Trunk:  ptr.To(false),
		Ports:  []infrav1.PortOpts{{Network: &infrav1.NetworkParam{ID: ptr.To("net-1")}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("server spec (-want +got):\n%s", diff)
	}
	spec.Flavor = Ref{ID: "flv-1"}
	if got := spec.request().Spec; got.FlavorID == nil || *got.FlavorID != "flv-1" || got.Flavor != nil {
		t.Errorf("flavor by ID: %v %v", got.Flavor, got.FlavorID)
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*Spec)
		field  string
	}{
		{"no name", func(s *Spec) { s.Name = "" }, "Name"},
		{"long name", func(s *Spec) { s.Name = strings.Repeat("a", 256) }, "Name"},
		{"no image", func(s *Spec) { s.Image = Ref{} }, "Image"},
		{"image by ID and name", func(s *Spec) { s.Image = Ref{ID: "i", Name: "n"} }, "Image"},
		{"no flavor", func(s *Spec) { s.Flavor = Ref{} }, "Flavor"},
		{"flavor by tags", func(s *Spec) { s.Flavor = Ref{Name: "m1", Tags: []string{"x"}} }, "Flavor.Tags"},
		{"server group by tags", func(s *Spec) { s.ServerGroup = Ref{Tags: []string{"x"}} }, "ServerGroup.Tags"},
		{"no ports", func(s *Spec) { s.Ports = nil }, "Ports"},
		{"port without network", func(s *Spec) { s.Ports = append(s.Ports, Port{}) }, "Ports[1].Network"},
		{"ports with one name", func(s *Spec) { s.Ports = append(s.Ports, Port{Network: Ref{ID: "n"}, NameSuffix: "0"}) }, "Ports[1].NameSuffix"},
		{"long port name", func(s *Spec) { s.Ports[0].NameSuffix = strings.Repeat("p", 250) }, "Ports[0].NameSuffix"},
		{"empty fixed IP", func(s *Spec) { s.Ports[0].FixedIPs = []FixedIP{{}} }, "Ports[0].FixedIPs[0]"},
		{"bad subnet", func(s *Spec) { s.Ports[0].FixedIPs = []FixedIP{{Subnet: Ref{ID: "s", Name: "n"}}} }, "Ports[0].FixedIPs[0].Subnet"},
		{"security groups without port security", func(s *Spec) {
			s.Ports[0].EnablePortSecurity = ptr.To(false)
			s.Ports[0].SecurityGroups = []Ref{{ID: "sg"}}
		}, "Ports[0].SecurityGroups"},
		{"bad port security group", func(s *Spec) { s.Ports[0].SecurityGroups = []Ref{{}} }, "Ports[0].SecurityGroups[0]"},
		{"bad security group", func(s *Spec) { s.SecurityGroups = []Ref{{ID: "a", Tags: []string{"b"}}} }, "SecurityGroups[0]"},
		{"tag with a comma", func(s *Spec) { s.Tags = []string{"a,b"} }, "Tags[0]"},
		{"empty port tag", func(s *Spec) { s.Ports[0].Tags = []string{""} }, "Ports[0].Tags[0]"},
		{"network tag with a comma", func(s *Spec) { s.Ports[0].Network = Ref{Tags: []string{"a,b"}} }, "Ports[0].Network.Tags[0]"},
		{"address pair without IP", func(s *Spec) { s.Ports[0].AllowedAddressPairs = []AddressPair{{MACAddress: "m"}} }, "Ports[0].AllowedAddressPairs[0].IPAddress"},
		{"empty value spec key", func(s *Spec) { s.Ports[0].ValueSpecs = map[string]string{"": "v"} }, "Ports[0].ValueSpecs"},
		{"root volume size", func(s *Spec) { s.RootVolume = &RootVolume{} }, "RootVolume.SizeGiB"},
		{"root volume zone", func(s *Spec) { s.RootVolume = &RootVolume{SizeGiB: 1, AvailabilityZone: "a b"} }, "RootVolume.AvailabilityZone"},
		{"volume without name", func(s *Spec) { s.Volumes = []Volume{{SizeGiB: 1}} }, "Volumes[0].Name"},
		{"volume named root", func(s *Spec) { s.Volumes = []Volume{{Name: "root", SizeGiB: 1}} }, "Volumes[0].Name"},
		{"two volumes with one name", func(s *Spec) { s.Volumes = []Volume{{Name: "d", SizeGiB: 1}, {Name: "d", SizeGiB: 1}} }, "Volumes[1].Name"},
		{"volume size", func(s *Spec) { s.Volumes = []Volume{{Name: "d"}} }, "Volumes[0].SizeGiB"},
		{"local volume with a type", func(s *Spec) { s.Volumes = []Volume{{Name: "d", SizeGiB: 1, Local: true, Type: "ssd"}} }, "Volumes[0]"},
		{"empty metadata value", func(s *Spec) { s.Metadata = map[string]string{"k": ""} }, "Metadata[k]"},
		{"empty metadata key", func(s *Spec) { s.Metadata = map[string]string{"": "v"} }, "Metadata"},
		{"float scheduler hint", func(s *Spec) { s.SchedulerHints = map[string]any{"f": 1.5} }, "SchedulerHints[f]"},
		{"large scheduler hint", func(s *Spec) { s.SchedulerHints = map[string]any{"n": int64(1) << 40} }, "SchedulerHints[n]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := validSpec()
			tc.mutate(&spec)
			err := spec.Validate()
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v, want an *Error for %s", err, tc.field)
			}
			if e.Field != tc.field || e.Reason != ReasonInvalidSpec || e.Transient {
				t.Errorf("field %q reason %q transient %v, want %q: %v", e.Field, e.Reason, e.Transient, tc.field, err)
			}
			if !strings.HasPrefix(err.Error(), tc.field+": ") {
				t.Errorf("message %q does not start with the field", err)
			}
		})
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	spec := Spec{Ports: []Port{{}}}
	err := spec.Validate()
	for _, field := range []string{"Name", "Image", "Flavor", "Ports[0].Network"} {
		if !strings.Contains(err.Error(), field+": ") {
			t.Errorf("%q does not name %s", err, field)
		}
	}
	valid := validSpec()
	if err := valid.Validate(); err != nil {
		t.Errorf("valid spec: %v", err)
	}
}
