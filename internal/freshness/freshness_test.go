package freshness

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func cm(version string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", ResourceVersion: version}}
}

func TestTracker(t *testing.T) {
	tr := New()
	if tr.Stale(cm("1")) {
		t.Fatal("nothing written: not stale")
	}
	tr.Wrote(cm("2"), "1")
	tr.Wrote(cm("3"), "2") // a second write in the same reconcile
	tr.Wrote(cm("3"), "3") // a no-op write records nothing
	for _, v := range []string{"1", "2"} {
		if !tr.Stale(cm(v)) {
			t.Errorf("%s was replaced: stale", v)
		}
	}
	if tr.Stale(cm("3")) {
		t.Error("3 is the latest: not stale")
	}
	if tr.Stale(cm("1")) {
		t.Error("once the cache caught up, the record is gone")
	}
	var nilTracker *Tracker
	nilTracker.Wrote(cm("2"), "1")
	if nilTracker.Stale(cm("1")) {
		t.Error("a nil tracker tracks nothing")
	}
}

// TestWritesFromOneVersion: CAPI's patch helper patches copies of the object
// as it was read, so its second write starts from the first version too; the
// version the first write made is superseded all the same.
func TestWritesFromOneVersion(t *testing.T) {
	tr := New()
	tr.Wrote(cm("2"), "1") // conditions
	tr.Wrote(cm("3"), "1") // the rest of the status, from the same copy
	for _, v := range []string{"1", "2"} {
		if !tr.Stale(cm(v)) {
			t.Errorf("%s was replaced: stale", v)
		}
	}
	if tr.Stale(cm("3")) {
		t.Error("3 is the latest: not stale")
	}
}

// TestKinds: objects of two kinds with one name are tracked apart.
func TestKinds(t *testing.T) {
	tr := New()
	tr.Wrote(cm("2"), "1")
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", ResourceVersion: "1"}}
	if tr.Stale(s) {
		t.Error("a Secret named like a written ConfigMap is not stale")
	}
	if !tr.Stale(cm("1")) {
		t.Error("the ConfigMap's record survives a look at the Secret")
	}
}

// TestClient: the client records its patches and updates, of the object and
// of its status, and nothing when the write fails.
func TestClient(t *testing.T) {
	ctx := context.Background()
	tr := New()
	c := tr.Client(fake.NewClientBuilder().WithObjects(cm("")).WithStatusSubresource(&corev1.ConfigMap{}).Build())
	obj := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "a"}, obj); err != nil {
		t.Fatal(err)
	}
	read := obj.DeepCopy()
	base := obj.DeepCopy()
	obj.Labels = map[string]string{"a": "b"}
	if err := c.Patch(ctx, obj, client.MergeFrom(base)); err != nil {
		t.Fatal(err)
	}
	if !tr.Stale(read) {
		t.Error("the version the patch replaced is stale")
	}
	afterPatch := obj.DeepCopy()
	obj.Data = map[string]string{"k": "v"}
	if err := c.Update(ctx, obj); err != nil {
		t.Fatal(err)
	}
	if !tr.Stale(afterPatch) || tr.Stale(obj) {
		t.Error("the update superseded the patch's version, not its own")
	}
	stale := read.DeepCopy()
	stale.Data = map[string]string{"x": "y"}
	if err := c.Update(ctx, stale); err == nil {
		t.Fatal("an update of a stale copy conflicts")
	}
	if tr.Stale(obj) {
		t.Error("a failed write records nothing")
	}
}

// TestClientStatus: status writes are recorded too.
func TestClientStatus(t *testing.T) {
	ctx := context.Background()
	tr := New()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}
	c := tr.Client(fake.NewClientBuilder().WithObjects(pod).WithStatusSubresource(&corev1.Pod{}).Build())
	obj := &corev1.Pod{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(pod), obj); err != nil {
		t.Fatal(err)
	}
	read := obj.DeepCopy()
	obj.Status.Message = "patched"
	if err := c.Status().Patch(ctx, obj, client.MergeFrom(read)); err != nil {
		t.Fatal(err)
	}
	afterPatch := obj.DeepCopy()
	obj.Status.Message = "updated"
	if err := c.Status().Update(ctx, obj); err != nil {
		t.Fatal(err)
	}
	if !tr.Stale(read) || !tr.Stale(afterPatch) || tr.Stale(obj) {
		t.Error("the status writes superseded the versions they replaced")
	}
}
