package manager

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	toolscache "k8s.io/client-go/tools/cache"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// fresh is a copy of s in memory of its own, as the JSON decoder makes
// for every object.
func fresh(s string) string { return strings.Clone(s) }

func same(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }

// machine is a decoded Machine whose every string is its own.
func machine(name string) *clusterv1.Machine {
	m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{
		Name: fresh(name), Namespace: fresh("ns"),
		Labels:      map[string]string{fresh(clusterv1.ClusterNameLabel): fresh("c1")},
		Annotations: map[string]string{fresh("note"): fresh("x"), fresh("big"): fresh(strings.Repeat("y", internMaxLen+1))},
		Finalizers:  []string{fresh(clusterv1.MachineFinalizer)},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: fresh("cluster.x-k8s.io/v1beta2"), Kind: fresh("MachineSet"),
			Name: fresh("ms"), UID: "u"}},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}},
	}}
	conds := make([]metav1.Condition, 0, 16) // the JSON decoder grows a slice by doubling
	for i := range 9 {
		conds = append(conds, metav1.Condition{Type: fresh(fmt.Sprintf("C%d", i)), Status: metav1.ConditionStatus(fresh("False")),
			Reason: fresh("Waiting"), Message: fresh("waiting for the cluster's infrastructure"), ObservedGeneration: 1})
	}
	m.Status.Conditions = conds
	return m
}

// TestCompactKeepsTheObject: a compacted object equals what it was, and
// its conditions take no more room than they need.
func TestCompactKeepsTheObject(t *testing.T) {
	m := machine("m1")
	if cap(m.Status.Conditions) == len(m.Status.Conditions) {
		t.Fatal("the test's conditions have no spare room; the test would prove nothing")
	}
	want := m.DeepCopy()
	got, ok := Compact(m).(*clusterv1.Machine)
	if !ok || got != m {
		t.Fatalf("Compact returned %T %p, want the same *Machine %p", got, got, m)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("compacted Machine differs:\n got %+v\nwant %+v", got, want)
	}
	if c := got.Status.Conditions; cap(c) != len(c) {
		t.Errorf("conditions: len %d, cap %d", len(c), cap(c))
	}
}

// TestCompactShares: two objects' equal strings are one copy after
// Compact, but for strings longer than internMaxLen and the names that
// make objects unique.
func TestCompactShares(t *testing.T) {
	a, b := Compact(machine("a")).(*clusterv1.Machine), Compact(machine("b")).(*clusterv1.Machine)
	shared := map[string][2]string{
		"label value":       {a.Labels[clusterv1.ClusterNameLabel], b.Labels[clusterv1.ClusterNameLabel]},
		"annotation value":  {a.Annotations["note"], b.Annotations["note"]},
		"finalizer":         {a.Finalizers[0], b.Finalizers[0]},
		"owner apiVersion":  {a.OwnerReferences[0].APIVersion, b.OwnerReferences[0].APIVersion},
		"owner kind":        {a.OwnerReferences[0].Kind, b.OwnerReferences[0].Kind},
		"owner name":        {a.OwnerReferences[0].Name, b.OwnerReferences[0].Name},
		"condition type":    {a.Status.Conditions[3].Type, b.Status.Conditions[3].Type},
		"condition status":  {string(a.Status.Conditions[3].Status), string(b.Status.Conditions[3].Status)},
		"condition reason":  {a.Status.Conditions[3].Reason, b.Status.Conditions[3].Reason},
		"condition message": {a.Status.Conditions[3].Message, b.Status.Conditions[3].Message},
	}
	for what, s := range shared {
		if !same(s[0], s[1]) {
			t.Errorf("%s %q: two copies", what, s[0])
		}
	}
	for k := range a.Labels {
		for l := range b.Labels {
			if !same(k, l) {
				t.Errorf("label key %q: two copies", k)
			}
		}
	}
	if same(a.Annotations["big"], b.Annotations["big"]) {
		t.Errorf("an annotation of %d bytes was interned (limit %d)", len(a.Annotations["big"]), internMaxLen)
	}
}

// TestCompactUnstructured: of an unstructured object the labels are
// compacted, and the object is unchanged.
func TestCompactUnstructured(t *testing.T) {
	mk := func() *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": fresh("cm"), "labels": map[string]any{fresh("k"): fresh("v")},
				"ownerReferences": []any{map[string]any{"apiVersion": "v1", "kind": "Secret", "name": "s", "uid": "u"}}}}}
		return u
	}
	a, b := mk(), mk()
	want := a.DeepCopy()
	Compact(a)
	Compact(b)
	if !reflect.DeepEqual(a, want) {
		t.Errorf("compacted object differs:\n got %v\nwant %v", a.Object, want.Object)
	}
	if !same(a.GetLabels()["k"], b.GetLabels()["k"]) {
		t.Error("label value: two copies")
	}
}

// TestCompactOddObjects: what is not an object passes through unchanged.
func TestCompactOddObjects(t *testing.T) {
	tomb := toolscache.DeletedFinalStateUnknown{Key: "ns/x", Obj: machine("x")}
	for _, in := range []any{nil, "text", 3, tomb, &clusterv1.Machine{}} {
		want := fmt.Sprintf("%#v", in)
		if got := fmt.Sprintf("%#v", Compact(in)); got != want {
			t.Errorf("Compact(%T) = %s, want %s", in, got, want)
		}
	}
}

// TestInternTableIsBounded: the table starts over when full, and a string
// it returned before stays intact.
func TestInternTableIsBounded(t *testing.T) {
	tab := &internTable{}
	first := tab.intern(fresh("first"))
	for i := range internMaxEntries + 10 {
		tab.intern(fmt.Sprintf("s-%d", i))
	}
	if n := len(tab.m); n > internMaxEntries {
		t.Errorf("table holds %d strings, limit %d", n, internMaxEntries)
	}
	if first != "first" {
		t.Errorf("an interned string changed: %q", first)
	}
	if tab.intern("") != "" {
		t.Error("the empty string")
	}
}

// TestCacheTransform: the caches' transform drops managedFields and
// compacts.
func TestCacheTransform(t *testing.T) {
	out, err := CacheTransform()(machine("m"))
	if err != nil {
		t.Fatal(err)
	}
	m := out.(*clusterv1.Machine)
	if m.ManagedFields != nil {
		t.Error("managedFields kept")
	}
	if c := m.Status.Conditions; cap(c) != len(c) {
		t.Errorf("not compacted: conditions len %d, cap %d", len(c), cap(c))
	}
}
