package host

import (
	"context"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/bootstrap/controllers/index"
	"github.com/ocp-capi/ocp-capi/bootstrap/internal/infra"
)

// TestMachineByMACOpenStack: an Agent's MAC finds the Machine of the
// OpenStackMachine whose server has a port with that MAC, through the
// servers' MAC index and the OpenStackMachine at the version its CRD's
// contract label names, as the bootstrap manager reads them.
func TestMachineByMACOpenStack(t *testing.T) {
	const ns = "ns"
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{apiextensionsv1.AddToScheme, infrav1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{
		Name:   "openstackmachines." + infra.Group,
		Labels: map[string]string{clusterv1.GroupVersion.String(): "v1beta2"},
	}}
	osm := func(name, machine string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(infra.Group + "/v1beta2")
		u.SetKind(infra.OpenStackMachineKind)
		u.SetNamespace(ns)
		u.SetName(name)
		if machine != "" {
			u.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: machine, UID: types.UID("u-" + machine)}})
		}
		return u
	}
	server := func(name, osmName string, macs ...string) *infrav1alpha1.OpenStackServer {
		s := &infrav1alpha1.OpenStackServer{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		if osmName != "" {
			s.OwnerReferences = []metav1.OwnerReference{{APIVersion: infra.Group + "/v1beta2", Kind: infra.OpenStackMachineKind,
				Name: osmName, UID: types.UID("u-" + osmName), Controller: ptr.To(true)}}
		}
		s.Status.Resources = &infrav1alpha1.ServerResources{}
		for i, mac := range macs {
			s.Status.Resources.Ports = append(s.Status.Resources.Ports, infrav1.PortStatus{ID: name + "-port-" + string(rune('a'+i)), MACAddress: mac})
		}
		return s
	}
	c := fake.NewClientBuilder().WithScheme(scheme).
		WithIndex(&infrav1alpha1.OpenStackServer{}, index.HostMAC, index.ServerMACs).
		WithObjects(crd,
			osm("osm-0", "machine-0"), server("osm-0", "osm-0", "fa:16:3e:00:00:01", "fa:16:3e:00:00:02"),
			osm("osm-1", "machine-1"), server("srv-1", "osm-1", "fa:16:3e:00:00:11"),
			// A server whose OpenStackMachine is gone, and one of a
			// machine no Machine owns (yet).
			server("orphan", "osm-gone", "fa:16:3e:00:00:21"),
			osm("osm-3", ""), server("osm-3", "osm-3", "fa:16:3e:00:00:31"),
		).Build()
	kinds := index.Kinds{OpenStack: true}

	for _, tt := range []struct {
		name    string
		macs    []string
		want    string
		wantErr string
	}{
		{name: "a port's MAC", macs: []string{"fa:16:3e:00:00:02"}, want: "machine-0"},
		{name: "another spelling of it", macs: []string{"FA-16-3E-00-00-01"}, want: "machine-0"},
		{name: "one known MAC among others", macs: []string{"52:54:00:00:00:99", "", "fa:16:3e:00:00:11"}, want: "machine-1"},
		{name: "both MACs of one server", macs: []string{"fa:16:3e:00:00:01", "fa:16:3e:00:00:02"}, want: "machine-0"},
		{name: "no server has it", macs: []string{"52:54:00:00:00:99"}},
		{name: "the server's OpenStackMachine is gone", macs: []string{"fa:16:3e:00:00:21"}},
		{name: "no Machine owns the OpenStackMachine", macs: []string{"fa:16:3e:00:00:31"}},
		{name: "MACs of two Machines", macs: []string{"fa:16:3e:00:00:01", "fa:16:3e:00:00:11"}, wantErr: "two Machines"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := MachineByMAC(context.Background(), c, kinds, ns, tt.macs)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("MachineByMAC = %q, want %q", got, tt.want)
			}
		})
	}

	// Without the OpenStack kinds nothing is looked up.
	if got, err := MachineByMAC(context.Background(), c, index.Kinds{}, ns, []string{"fa:16:3e:00:00:01"}); err != nil || got != "" {
		t.Errorf("without the OpenStack kinds: %q, %v; want \"\", nil", got, err)
	}
}
