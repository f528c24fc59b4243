package host

import (
	"context"
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ocp-capi/ocp-capi/bootstrap/internal/infra"
	"github.com/ocp-capi/ocp-capi/internal/validation/assisted"
)

// TestOfOpenStackMachine: an OpenStackMachine's host comes from the
// unstructured object itself, at either API version, and as the bootstrap
// manager's cache keeps it (infra.TrimForCache); no client is needed.
func TestOfOpenStackMachine(t *testing.T) {
	osm := func(version string, spec, status map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": infra.Group + "/" + version, "kind": infra.OpenStackMachineKind,
			"metadata": map[string]any{"name": "m-0", "namespace": "ns"},
			"spec":     spec, "status": status}}
	}
	flavor := map[string]any{"filter": map[string]any{"name": "m1.small"}}
	tests := []struct {
		name           string
		obj            *unstructured.Unstructured
		wantUUID, want string // want: the provider ID
		wantUnknown    bool
	}{
		{name: "v1beta2, providerID set", obj: osm("v1beta2", map[string]any{"providerID": "openstack:///x", "flavor": flavor},
			map[string]any{"instanceID": "id-1"}), wantUUID: "id-1", want: "openstack:///x"},
		{name: "v1beta1 (CAPO), no providerID yet", obj: osm("v1beta1", map[string]any{"flavor": "m1.small"},
			map[string]any{"instanceID": "id-2", "ready": true}), wantUUID: "id-2", want: "openstack:///id-2"},
		{name: "no instanceID", obj: osm("v1beta2", map[string]any{"flavor": flavor}, map[string]any{}), wantUnknown: true},
		{name: "no status", obj: osm("v1beta2", map[string]any{}, nil), wantUnknown: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			trimmed, err := infra.TrimForCache(tt.obj.DeepCopy())
			if err != nil {
				t.Fatal(err)
			}
			for _, obj := range []*unstructured.Unstructured{tt.obj, trimmed.(*unstructured.Unstructured)} {
				h, err := Of(context.Background(), nil, obj)
				if tt.wantUnknown {
					if !errors.Is(err, ErrHostUnknown) {
						t.Errorf("err = %v, want ErrHostUnknown", err)
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				if h.Vars[assisted.VarUUID] != tt.wantUUID || h.ProviderID != tt.want || h.Vars[assisted.VarName] != "m-0" {
					t.Errorf("host = %+v (provider ID %q), want uuid %s, provider ID %s, name m-0", h.Vars, h.ProviderID, tt.wantUUID, tt.want)
				}
			}
		})
	}
}
