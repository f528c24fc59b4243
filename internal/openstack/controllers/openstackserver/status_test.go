package openstackserver

import (
	"testing"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

func TestWithFloatingIP(t *testing.T) {
	in := func(a string) clusterv1.MachineAddress {
		return clusterv1.MachineAddress{Type: clusterv1.MachineInternalIP, Address: a}
	}
	ex := func(a string) clusterv1.MachineAddress {
		return clusterv1.MachineAddress{Type: clusterv1.MachineExternalIP, Address: a}
	}
	dns := clusterv1.MachineAddress{Type: clusterv1.MachineInternalDNS, Address: "bastion"}
	for _, tc := range []struct {
		name string
		in   []clusterv1.MachineAddress
		ip   string
		want []clusterv1.MachineAddress
	}{
		{"no floating IP", []clusterv1.MachineAddress{in("10.0.0.5"), dns}, "", []clusterv1.MachineAddress{in("10.0.0.5"), dns}},
		// Nova's own order once it has heard of the association: the
		// later resync must find the same list, or it writes.
		{"as Nova lists it", []clusterv1.MachineAddress{in("10.0.0.5"), dns}, "172.24.4.9", []clusterv1.MachineAddress{in("10.0.0.5"), ex("172.24.4.9"), dns}},
		{"Nova already has it", []clusterv1.MachineAddress{in("10.0.0.5"), ex("172.24.4.9"), dns}, "172.24.4.9", []clusterv1.MachineAddress{in("10.0.0.5"), ex("172.24.4.9"), dns}},
		{"nothing read from Nova yet", nil, "172.24.4.9", nil},
		{"no fixed IP", []clusterv1.MachineAddress{dns}, "172.24.4.9", []clusterv1.MachineAddress{ex("172.24.4.9"), dns}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := append([]clusterv1.MachineAddress(nil), tc.in...)
			got := withFloatingIP(tc.in, tc.ip)
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
			}
			for i := range before {
				if tc.in[i] != before[i] {
					t.Fatalf("input changed: %v, was %v", tc.in, before)
				}
			}
		})
	}
}
