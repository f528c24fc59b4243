package mapi2capi

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
)

// readMachineSet reads a MachineSet from testdata/machinesets as the API
// server stores it: YAML turned into JSON the way kubectl does
// (sigs.k8s.io/yaml, so `False` is a boolean).
func readMachineSet(t *testing.T, name string) *mapiv1beta1.MachineSet {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "machinesets", name))
	if err != nil {
		t.Fatal(err)
	}
	ms := &mapiv1beta1.MachineSet{}
	if err := yaml.Unmarshal(raw, ms); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return ms
}

// TestRealMachineSets runs the MachineSets of the OpenShift installer and
// the openshift-docs examples (testdata/machinesets/README.md) through the
// conversion; each row is one of the conversion defects fixed in issue 17,
// or an example that must convert.
func TestRealMachineSets(t *testing.T) {
	machineAZ := &infrav1.VolumeAvailabilityZone{From: infrav1.VolumeAZFromMachine}
	tests := []struct {
		file string
		// wantWarnings and wantErrs are paths below …value (pv), besides
		// the warnings every subnet-only network gets.
		wantWarnings, wantErrs []string
		check                  func(t *testing.T, s *infrav1.OpenStackMachineSpec)
	}{
		{
			file: "installer-rootvolume.yaml",
			// The root volume has no zone of its own: MAPO makes it in the
			// machine's zone, so the template says from: Machine.
			wantWarnings: []string{pv("networks[0].subnets[0]")},
			check: func(t *testing.T, s *infrav1.OpenStackMachineSpec) {
				want := &infrav1.RootVolume{SizeGiB: 100, BlockDeviceVolume: infrav1.BlockDeviceVolume{Type: "ssd", AvailabilityZone: machineAZ}}
				if diff := cmp.Diff(want, s.RootVolume); diff != "" {
					t.Errorf("rootVolume (-want +got):\n%s", diff)
				}
				if got := ptr.Deref(s.Image.Filter.Name, ""); got != "ocp-x7k2p-rhcos" {
					t.Errorf("image %q, want rootVolume.sourceUUID", got)
				}
			},
		},
		{
			file:         "installer-blockdevice.yaml",
			wantWarnings: []string{pv("networks[0].subnets[0]")},
			check: func(t *testing.T, s *infrav1.OpenStackMachineSpec) {
				want := []infrav1.AdditionalBlockDevice{
					{Name: "etcd", SizeGiB: 20, Storage: infrav1.BlockDeviceStorage{Type: infrav1.VolumeBlockDevice,
						Volume: &infrav1.BlockDeviceVolume{AvailabilityZone: machineAZ}}},
					{Name: "data", SizeGiB: 50, Storage: infrav1.BlockDeviceStorage{Type: infrav1.VolumeBlockDevice,
						Volume: &infrav1.BlockDeviceVolume{Type: "fast", AvailabilityZone: machineAZ}}},
				}
				if diff := cmp.Diff(want, s.AdditionalBlockDevices); diff != "" {
					t.Errorf("additionalBlockDevices (-want +got):\n%s", diff)
				}
			},
		},
		{
			file:         "docs-osp.yaml",
			wantWarnings: []string{pv("networks[0].subnets[0]")},
			check: func(t *testing.T, s *infrav1.OpenStackMachineSpec) {
				if len(s.Ports) != 1 || s.Ports[0].FixedIPs[0].Subnet.Filter.Name != "ocp-x7k2p-nodes" {
					t.Errorf("ports %+v", s.Ports)
				}
			},
		},
		{
			file: "docs-sriov.yaml",
			// `UUID` is read as uuid, as MAPO reads it, with a warning.
			wantWarnings: []string{pv("networks[0].subnets[0].uuid"), pv("networks[0].subnets[0]"), pv("primarySubnet")},
			check: func(t *testing.T, s *infrav1.OpenStackMachineSpec) {
				if len(s.Ports) != 3 || ptr.Deref(s.Ports[0].FixedIPs[0].Subnet.ID, "") != "33333333-3333-4333-8333-333333333333" {
					t.Errorf("ports %+v", s.Ports)
				}
				for _, i := range []int{1, 2} {
					if p := s.Ports[i]; ptr.Deref(p.EnablePortSecurity, true) || ptr.Deref(p.VNICType, "") != "direct" {
						t.Errorf("port %d: %+v", i, p)
					}
				}
			},
		},
		{
			file:         "docs-sriov-port-security.yaml",
			wantWarnings: []string{pv("primarySubnet")},
			check: func(t *testing.T, s *infrav1.OpenStackMachineSpec) {
				nodes, sriov := s.Ports[0], s.Ports[1]
				if len(nodes.AllowedAddressPairs) != 2 || len(nodes.SecurityGroups) != 1 {
					t.Errorf("the nodes port (port security on) keeps its pairs and group: %+v", nodes)
				}
				if !portSecurityOff(sriov.EnablePortSecurity) {
					t.Errorf("portSecurity: False is false: %+v", sriov)
				}
				if !ptr.Deref(s.ConfigDrive, false) || s.Trunk {
					t.Errorf("configDrive %v, trunk %v", s.ConfigDrive, s.Trunk)
				}
			},
		},
		{
			file: "docs-sriov-port-security-copied.yaml",
			// Neutron refuses them on a port without port security; MAPO
			// drops them, and so does the conversion, with warnings.
			wantWarnings: []string{pv("primarySubnet"), pv("ports[1].allowedAddressPairs"), pv("ports[1].securityGroups")},
			check: func(t *testing.T, s *infrav1.OpenStackMachineSpec) {
				if sriov := s.Ports[1]; len(sriov.AllowedAddressPairs) > 0 || len(sriov.SecurityGroups) > 0 {
					t.Errorf("the SR-IOV port keeps pairs or groups: %+v", sriov)
				}
				if len(s.Ports[0].AllowedAddressPairs) != 2 {
					t.Errorf("the nodes port lost its pairs: %+v", s.Ports[0])
				}
			},
		},
		{
			file:         "docs-sriov-profile.yaml",
			wantWarnings: []string{pv("networks[0].subnets[0].uuid"), pv("networks[0].subnets[0]"), pv("primarySubnet"), pv("ports[0].profile[physical_network]")},
			check: func(t *testing.T, s *infrav1.OpenStackMachineSpec) {
				if diff := cmp.Diff(&infrav1.BindingProfile{TrustedVF: ptr.To(true)}, s.Ports[1].Profile); diff != "" {
					t.Errorf("profile (-want +got):\n%s", diff)
				}
			},
		},
		{
			file:         "docs-sriov-quoted-bool.yaml",
			wantWarnings: []string{pv("networks[0].subnets[0].uuid")},
			wantErrs:     []string{pv("ports[0].portSecurity")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			ms := readMachineSet(t, tt.file)
			capi, tmpl, warnings, errs := MachineSet(ms, testInfra())
			checkReport(t, warnings, errs, tt.wantWarnings, tt.wantErrs)
			if len(tt.wantErrs) > 0 {
				for _, e := range errs {
					if e.Field == pv("ports[0].portSecurity") && e.Detail != "must be true or false, not a string" {
						t.Errorf("detail %q", e.Detail)
					}
				}
				return
			}
			if capi == nil || tmpl == nil {
				t.Fatalf("no objects: %v", errs)
			}
			osmt, ok := tmpl.(*infrav1.OpenStackMachineTemplate)
			if !ok {
				t.Fatalf("template %T", tmpl)
			}
			if tt.check != nil {
				tt.check(t, &osmt.Spec.Template.Spec)
			}
		})
	}
}
