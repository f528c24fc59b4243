package v1beta1

import (
	"encoding/json"
	"os"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	utilconversion "sigs.k8s.io/cluster-api/util/conversion"
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	controlplanev1 "github.com/ocp-capi/ocp-capi/api/controlplane/v1alpha3"
)

func testScheme(t testing.TB) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := controlplanev1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

// fuzzIterations per kind and direction; OCP_CAPI_FUZZ_ITERATIONS raises it.
func fuzzIterations() int {
	if v, err := strconv.Atoi(os.Getenv("OCP_CAPI_FUZZ_ITERATIONS")); err == nil && v > 0 {
		return v
	}
	if testing.Short() {
		return 100
	}
	return 1000
}

type kind struct {
	name  string
	hub   func() conversion.Hub
	spoke func() conversion.Convertible
}

var kinds = []kind{
	{"OpenshiftAssistedControlPlane",
		func() conversion.Hub { return &controlplanev1.OpenshiftAssistedControlPlane{} },
		func() conversion.Convertible { return &OpenshiftAssistedControlPlane{} }},
	{"OpenshiftAssistedControlPlaneTemplate",
		func() conversion.Hub { return &controlplanev1.OpenshiftAssistedControlPlaneTemplate{} },
		func() conversion.Convertible { return &OpenshiftAssistedControlPlaneTemplate{} }},
}

// spokeHubSpoke converts a v1beta1 object to v1alpha3 and back.
func spokeHubSpoke(t *testing.T, k kind, before conversion.Convertible) {
	t.Helper()
	orig := before.DeepCopyObject()
	hub := k.hub()
	if err := before.ConvertTo(hub); err != nil {
		t.Fatal(err)
	}
	after := k.spoke()
	if err := after.ConvertFrom(hub); err != nil {
		t.Fatal(err)
	}
	if !apiequality.Semantic.DeepEqual(orig, before) {
		t.Fatalf("ConvertTo changed its input:\n%s", cmp.Diff(orig, before))
	}
	if !apiequality.Semantic.DeepEqual(before, after) {
		t.Fatalf("%s v1beta1 → v1alpha3 → v1beta1 changed the object:\n%s", k.name, cmp.Diff(before, after))
	}
	sameJSON(t, hub, after)
}

// hubSpokeHub converts a v1alpha3 object to v1beta1 and back.
func hubSpokeHub(t *testing.T, k kind, before conversion.Hub) {
	t.Helper()
	orig := before.DeepCopyObject()
	spoke := k.spoke()
	if err := spoke.ConvertFrom(before); err != nil {
		t.Fatal(err)
	}
	after := k.hub()
	if err := spoke.ConvertTo(after); err != nil {
		t.Fatal(err)
	}
	if !apiequality.Semantic.DeepEqual(orig, before) {
		t.Fatalf("ConvertFrom changed its input:\n%s", cmp.Diff(orig, before))
	}
	if !apiequality.Semantic.DeepEqual(before, after) {
		t.Fatalf("%s v1alpha3 → v1beta1 → v1alpha3 changed the object:\n%s", k.name, cmp.Diff(before, after))
	}
	sameJSON(t, before, spoke)
}

// sameJSON fails unless the JSON of the v1beta1 object is that of the
// v1alpha3 one with machineTemplate's infrastructureRef and deletion moved
// under machineTemplate.spec: the one difference between the versions.
func sameJSON(t *testing.T, hub, spoke any) {
	t.Helper()
	h, s := toMap(t, hub), toMap(t, spoke)
	for _, m := range []map[string]any{h, s} {
		delete(m, "apiVersion")
		delete(m, "kind")
	}
	spec, _ := h["spec"].(map[string]any)
	if tmpl, ok := spec["template"].(map[string]any); ok {
		spec, _ = tmpl["spec"].(map[string]any)
	}
	if mt, ok := spec["machineTemplate"].(map[string]any); ok {
		moved := map[string]any{}
		for _, f := range []string{"infrastructureRef", "deletion"} {
			if v, ok := mt[f]; ok {
				moved[f] = v
				delete(mt, f)
			}
		}
		// machineTemplate.spec is optional (a template may leave it to
		// its ClusterClass), and omitted when empty.
		if len(moved) > 0 {
			mt["spec"] = moved
		}
	}
	if d := cmp.Diff(h, s); d != "" {
		t.Fatalf("v1beta1's JSON is not v1alpha3's with the machine template moved:\n%s", d)
	}
}

func toMap(t *testing.T, obj any) map[string]any {
	t.Helper()
	data, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]any{}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestFuzzyConversion converts fuzzed objects of both kinds from v1beta1 to
// v1alpha3 and back, and from v1alpha3 to v1beta1 and back: both round
// trips give back exactly what they started from (no annotation carries
// anything), and the JSON differs only by the machine template's layout.
func TestFuzzyConversion(t *testing.T) {
	s := testScheme(t)
	n := fuzzIterations()
	for _, k := range kinds {
		t.Run(k.name+"/spoke-hub-spoke", func(t *testing.T) {
			f := utilconversion.GetFuzzer(s)
			for range n {
				before := k.spoke()
				f.Fill(before)
				spokeHubSpoke(t, k, before)
			}
		})
		t.Run(k.name+"/hub-spoke-hub", func(t *testing.T) {
			f := utilconversion.GetFuzzer(s)
			for range n {
				before := k.hub()
				f.Fill(before)
				hubSpokeHub(t, k, before)
			}
		})
	}
}

// TestConvertMachineTemplate: the machine template moves between the two
// layouts, and nothing else changes.
func TestConvertMachineTemplate(t *testing.T) {
	ref := clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "OpenStackMachineTemplate", Name: "cp"}
	hub := &controlplanev1.OpenshiftAssistedControlPlane{
		ObjectMeta: metav1.ObjectMeta{Name: "demo", Namespace: "ns", Annotations: map[string]string{"a": "b"}},
		Spec: controlplanev1.OpenshiftAssistedControlPlaneSpec{
			DistributionVersion: "4.19.0",
			MachineTemplate: controlplanev1.OpenshiftAssistedControlPlaneMachineTemplate{
				ObjectMeta:        clusterv1.ObjectMeta{Labels: map[string]string{"l": "v"}},
				InfrastructureRef: ref,
				Deletion:          clusterv1.MachineDeletionSpec{NodeDeletionTimeoutSeconds: new(int32(10))},
			},
			Config: controlplanev1.OpenshiftAssistedControlPlaneConfigSpec{BaseDomain: "example.com"},
		},
	}
	spoke := &OpenshiftAssistedControlPlane{}
	if err := spoke.ConvertFrom(hub); err != nil {
		t.Fatal(err)
	}
	mt := spoke.Spec.MachineTemplate
	if mt.Spec.InfrastructureRef != ref || *mt.Spec.Deletion.NodeDeletionTimeoutSeconds != 10 || mt.ObjectMeta.Labels["l"] != "v" {
		t.Errorf("machine template not moved to spec.machineTemplate.spec: %+v", mt)
	}
	if spoke.Name != "demo" || spoke.Annotations["a"] != "b" || spoke.Spec.DistributionVersion != "4.19.0" || spoke.Spec.Config.BaseDomain != "example.com" {
		t.Errorf("metadata or spec lost: %+v", spoke)
	}
	hubSpokeHub(t, kinds[0], hub)
}
