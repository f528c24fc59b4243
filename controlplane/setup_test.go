package controlplane_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/labels"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	bootstrapv1 "github.com/ocp-capi/ocp-capi/api/bootstrap/v1alpha2"
	"github.com/ocp-capi/ocp-capi/controlplane"
)

// TestCacheHoldsControlPlaneConfigsOnly: the manager's cache holds the
// configs labelled with a control plane's name, which it makes, and no
// worker's config.
func TestCacheHoldsControlPlaneConfigsOnly(t *testing.T) {
	if !controlplane.Cache.Unstructured {
		t.Error("infrastructure machines and templates are not read from the cache")
	}
	byObject, err := controlplane.Cache.ByObject()
	if err != nil {
		t.Fatal(err)
	}
	if len(byObject) != 1 {
		t.Fatalf("narrowed kinds = %d, want 1 (OpenshiftAssistedConfig)", len(byObject))
	}
	for obj, c := range byObject {
		if _, ok := obj.(*bootstrapv1.OpenshiftAssistedConfig); !ok {
			t.Errorf("narrowed kind %T, want OpenshiftAssistedConfig", obj)
		}
		if c.Label == nil {
			t.Fatal("no label selector")
		}
		if !c.Label.Matches(labels.Set{clusterv1.MachineControlPlaneNameLabel: "cp", clusterv1.ClusterNameLabel: "c"}) {
			t.Error("a control plane's config is not cached")
		}
		if c.Label.Matches(labels.Set{clusterv1.ClusterNameLabel: "c"}) {
			t.Error("a worker's config is cached")
		}
	}
}
