package serverspec

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
)

// TestAsCAPO: the bastion spec CAPO v0.14 derives
// (openStackMachineSpecToOpenStackServerSpec, for a bastion with
// InstanceTags and the bastion group) differs from this provider's in
// where the security groups go, the order of the tags and the fixed IPs
// of the default port.
func TestAsCAPO(t *testing.T) {
	identity := infrav1.OpenStackIdentityReference{Type: "Secret", Name: "cloud", CloudName: "openstack"}
	noSecurity := infrav1.PortOpts{Network: &infrav1.NetworkParam{ID: ptr.To("other")}}
	noSecurity.EnablePortSecurity = ptr.To(false)
	noSecurityWant := *noSecurity.DeepCopy()
	noSecurityWant.SecurityGroups = []infrav1.SecurityGroupParam{{ID: ptr.To("extra")}}
	in := Input{
		Spec: infrav1.OpenStackMachineSpec{
			Flavor:         infrav1.FlavorParam{Filter: &infrav1.FlavorFilter{Name: ptr.To("m1.small")}},
			Image:          infrav1.ImageParam{ID: ptr.To("img")},
			Tags:           []string{"b", "a"},
			Ports:          []infrav1.PortOpts{{}, noSecurity},
			SecurityGroups: []infrav1.SecurityGroupParam{{ID: ptr.To("extra")}},
		},
		Role: Bastion,
		Defaults: &Defaults{IdentityRef: &identity, Network: &infrav1.NetworkParam{ID: ptr.To("net")},
			Subnets:               []infrav1.SubnetParam{{ID: ptr.To("status-subnet")}},
			BastionSecurityGroups: []infrav1.SecurityGroupParam{{ID: ptr.To("bastion-sg")}},
			Tags:                  []string{"a", "c"}},
	}
	got, err := AsCAPO(in, []infrav1.SubnetParam{{Filter: &infrav1.SubnetFilter{Name: "spec-subnet"}}})
	if err != nil {
		t.Fatal(err)
	}
	want := &infrav1alpha1.OpenStackServerSpec{
		Flavor: ptr.To("m1.small"), Image: infrav1.ImageParam{ID: ptr.To("img")}, IdentityRef: identity,
		Tags: []string{"b", "a", "c"},
		Ports: []infrav1.PortOpts{
			{Network: &infrav1.NetworkParam{ID: ptr.To("net")},
				FixedIPs:       []infrav1.FixedIP{{Subnet: &infrav1.SubnetParam{Filter: &infrav1.SubnetFilter{Name: "spec-subnet"}}}},
				SecurityGroups: []infrav1.SecurityGroupParam{{ID: ptr.To("bastion-sg")}, {ID: ptr.To("extra")}}},
			noSecurityWant,
		},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("AsCAPO (-want +got):\n%s", d)
	}
	ours, err := FromMachineSpec(in)
	if err != nil {
		t.Fatal(err)
	}
	if cmp.Equal(ours, got) {
		t.Error("AsCAPO gives this provider's own spec")
	}
}
