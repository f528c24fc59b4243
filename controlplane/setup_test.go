package controlplane_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/labels"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	bootstrapv1 "github.com/ocp-capi/ocp-capi/api/bootstrap/v1alpha2"
	"github.com/ocp-capi/ocp-capi/controlplane"
)

// TestCacheHoldsControlPlaneObjectsOnly: the manager's cache holds the
// configs and Machines labelled with a control plane's name, which it
// makes, and no worker's config or Machine (the worker Machines' metadata
// is in a cache of its own).
func TestCacheHoldsControlPlaneObjectsOnly(t *testing.T) {
	if !controlplane.Cache.Unstructured {
		t.Error("infrastructure machines and templates are not read from the cache")
	}
	byObject, err := controlplane.Cache.ByObject()
	if err != nil {
		t.Fatal(err)
	}
	narrowed := map[string]bool{}
	for obj, c := range byObject {
		switch obj.(type) {
		case *bootstrapv1.OpenshiftAssistedConfig:
			narrowed["OpenshiftAssistedConfig"] = true
		case *clusterv1.Machine:
			narrowed["Machine"] = true
		default:
			t.Errorf("narrowed kind %T, want OpenshiftAssistedConfig or Machine", obj)
		}
		if c.Label == nil {
			t.Fatal("no label selector")
		}
		if !c.Label.Matches(labels.Set{clusterv1.MachineControlPlaneNameLabel: "cp", clusterv1.ClusterNameLabel: "c"}) {
			t.Errorf("a control plane's %T is not cached", obj)
		}
		if c.Label.Matches(labels.Set{clusterv1.ClusterNameLabel: "c"}) {
			t.Errorf("a worker's %T is cached", obj)
		}
	}
	if !narrowed["OpenshiftAssistedConfig"] || !narrowed["Machine"] {
		t.Errorf("narrowed kinds %v, want OpenshiftAssistedConfig and Machine", narrowed)
	}
}
