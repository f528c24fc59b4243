package write

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// newClient returns a fake client holding a Pod and a counter of the
// patches sent through it (main resource and status).
func newClient(t *testing.T) (client.Client, *int) {
	t.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", Finalizers: []string{"others/finalizer"}}}
	patches := 0
	c := fake.NewClientBuilder().WithObjects(pod).WithStatusSubresource(pod).WithInterceptorFuncs(interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
			patches++
			return c.Patch(ctx, obj, p, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			patches++
			return c.SubResource(sub).Patch(ctx, obj, p, opts...)
		},
	}).Build()
	return c, &patches
}

func get(t *testing.T, c client.Client) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "p"}, pod); err != nil {
		t.Fatal(err)
	}
	return pod
}

func TestLockedPatch(t *testing.T) {
	ctx := context.Background()
	c, patches := newClient(t)
	pod := get(t, c)

	// Nothing changed: nothing is written.
	if err := LockedPatch(ctx, c, pod, func() bool { return false }); err != nil || *patches != 0 {
		t.Fatalf("unchanged: err %v, %d patches", err, *patches)
	}

	// A change is written, and obj gets the answer.
	rv := pod.ResourceVersion
	if err := LockedPatch(ctx, c, pod, func() bool {
		pod.Finalizers = append(pod.Finalizers, "ours/finalizer")
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if *patches != 1 || pod.ResourceVersion == rv {
		t.Fatalf("changed: %d patches, resourceVersion %s (was %s)", *patches, pod.ResourceVersion, rv)
	}
	if got := get(t, c).Finalizers; len(got) != 2 {
		t.Fatalf("finalizers %v", got)
	}

	// A copy read before someone else's write is refused, so the list it
	// would replace whole keeps the other writer's entry.
	stale := pod.DeepCopy()
	if err := LockedPatch(ctx, c, pod, func() bool {
		pod.Finalizers = append(pod.Finalizers, "late/finalizer")
		return true
	}); err != nil {
		t.Fatal(err)
	}
	err := LockedPatch(ctx, c, stale, func() bool {
		stale.Finalizers = stale.Finalizers[:1]
		return true
	})
	if !apierrors.IsConflict(err) {
		t.Fatalf("stale copy: want a conflict, got %v", err)
	}
	if got := get(t, c).Finalizers; len(got) != 3 {
		t.Fatalf("finalizers after the refused write: %v", got)
	}
}

func TestLockedStatusPatch(t *testing.T) {
	ctx := context.Background()
	c, patches := newClient(t)
	pod := get(t, c)
	stale := pod.DeepCopy()

	if err := LockedStatusPatch(ctx, c, pod, func() bool { return false }); err != nil || *patches != 0 {
		t.Fatalf("unchanged: err %v, %d patches", err, *patches)
	}
	if err := LockedStatusPatch(ctx, c, pod, func() bool {
		pod.Status.Conditions = []corev1.PodCondition{{Type: "Ours", Status: corev1.ConditionTrue}}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if got := get(t, c).Status.Conditions; *patches != 1 || len(got) != 1 {
		t.Fatalf("changed: %d patches, conditions %v", *patches, got)
	}
	err := LockedStatusPatch(ctx, c, stale, func() bool {
		stale.Status.Message = "from an old copy"
		return true
	})
	if !apierrors.IsConflict(err) {
		t.Fatalf("stale copy: want a conflict, got %v", err)
	}
}
