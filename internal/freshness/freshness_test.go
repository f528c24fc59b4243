package freshness

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

func TestTracker(t *testing.T) {
	k := types.NamespacedName{Namespace: "ns", Name: "a"}
	tr := New()
	if tr.Stale(k, "1") {
		t.Fatal("nothing written: not stale")
	}
	tr.Wrote(k, "1", "2")
	tr.Wrote(k, "2", "3") // a second write in the same reconcile
	tr.Wrote(k, "3", "3") // a no-op write records nothing
	for _, v := range []string{"1", "2"} {
		if !tr.Stale(k, v) {
			t.Errorf("%s was replaced: stale", v)
		}
	}
	if tr.Stale(k, "3") {
		t.Error("3 is the latest: not stale")
	}
	if tr.Stale(k, "1") {
		t.Error("once the cache caught up, the record is gone")
	}
	var nilTracker *Tracker
	nilTracker.Wrote(k, "1", "2")
	if nilTracker.Stale(k, "1") {
		t.Error("a nil tracker tracks nothing")
	}
}
