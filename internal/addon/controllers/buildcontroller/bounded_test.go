package buildcontroller

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// hangingClient never answers: every call blocks until its context ends.
type hangingClient struct {
	client.Client
	calls atomic.Int64
}

func (h *hangingClient) wait(ctx context.Context) error {
	h.calls.Add(1)
	<-ctx.Done()
	return ctx.Err()
}

func (h *hangingClient) Get(ctx context.Context, _ client.ObjectKey, _ client.Object, _ ...client.GetOption) error {
	return h.wait(ctx)
}

func (h *hangingClient) List(ctx context.Context, _ client.ObjectList, _ ...client.ListOption) error {
	return h.wait(ctx)
}

func (h *hangingClient) Apply(ctx context.Context, _ runtime.ApplyConfiguration, _ ...client.ApplyOption) error {
	return h.wait(ctx)
}

func (h *hangingClient) Create(ctx context.Context, _ client.Object, _ ...client.CreateOption) error {
	return h.wait(ctx)
}

func (h *hangingClient) Delete(ctx context.Context, _ client.Object, _ ...client.DeleteOption) error {
	return h.wait(ctx)
}

func (h *hangingClient) Update(ctx context.Context, _ client.Object, _ ...client.UpdateOption) error {
	return h.wait(ctx)
}

func (h *hangingClient) Patch(ctx context.Context, _ client.Object, _ client.Patch, _ ...client.PatchOption) error {
	return h.wait(ctx)
}

func (h *hangingClient) DeleteAllOf(ctx context.Context, _ client.Object, _ ...client.DeleteAllOfOption) error {
	return h.wait(ctx)
}

func (h *hangingClient) Status() client.SubResourceWriter { return hangingSubResource{h} }

func (h *hangingClient) SubResource(string) client.SubResourceClient { return hangingSubResource{h} }

type hangingSubResource struct{ h *hangingClient }

func (s hangingSubResource) Get(ctx context.Context, _, _ client.Object, _ ...client.SubResourceGetOption) error {
	return s.h.wait(ctx)
}

func (s hangingSubResource) Create(ctx context.Context, _, _ client.Object, _ ...client.SubResourceCreateOption) error {
	return s.h.wait(ctx)
}

func (s hangingSubResource) Update(ctx context.Context, _ client.Object, _ ...client.SubResourceUpdateOption) error {
	return s.h.wait(ctx)
}

func (s hangingSubResource) Patch(ctx context.Context, _ client.Object, _ client.Patch, _ ...client.SubResourcePatchOption) error {
	return s.h.wait(ctx)
}

func (s hangingSubResource) Apply(ctx context.Context, _ runtime.ApplyConfiguration, _ ...client.SubResourceApplyOption) error {
	return s.h.wait(ctx)
}

// boundedCalls are every call of the wrapped client and reader.
func boundedCalls(c client.Client, r client.Reader) map[string]func(context.Context) error {
	cm := &corev1.ConfigMap{}
	key := client.ObjectKey{Namespace: "ns", Name: "cm"}
	patch := client.RawPatch("application/merge-patch+json", []byte(`{}`))
	return map[string]func(context.Context) error{
		"Get":                  func(ctx context.Context) error { return c.Get(ctx, key, cm) },
		"List":                 func(ctx context.Context) error { return c.List(ctx, &corev1.ConfigMapList{}) },
		"Apply":                func(ctx context.Context) error { return c.Apply(ctx, nil) },
		"Create":               func(ctx context.Context) error { return c.Create(ctx, cm) },
		"Delete":               func(ctx context.Context) error { return c.Delete(ctx, cm) },
		"Update":               func(ctx context.Context) error { return c.Update(ctx, cm) },
		"Patch":                func(ctx context.Context) error { return c.Patch(ctx, cm, patch) },
		"DeleteAllOf":          func(ctx context.Context) error { return c.DeleteAllOf(ctx, cm) },
		"Status().Update":      func(ctx context.Context) error { return c.Status().Update(ctx, cm) },
		"Status().Patch":       func(ctx context.Context) error { return c.Status().Patch(ctx, cm, patch) },
		"Status().Create":      func(ctx context.Context) error { return c.Status().Create(ctx, cm, cm) },
		"Status().Apply":       func(ctx context.Context) error { return c.Status().Apply(ctx, nil) },
		"SubResource().Get":    func(ctx context.Context) error { return c.SubResource("scale").Get(ctx, cm, cm) },
		"SubResource().Create": func(ctx context.Context) error { return c.SubResource("eviction").Create(ctx, cm, cm) },
		"SubResource().Update": func(ctx context.Context) error { return c.SubResource("scale").Update(ctx, cm) },
		"SubResource().Patch":  func(ctx context.Context) error { return c.SubResource("scale").Patch(ctx, cm, patch) },
		"SubResource().Apply":  func(ctx context.Context) error { return c.SubResource("scale").Apply(ctx, nil) },
		"Reader.Get":           func(ctx context.Context) error { return r.Get(ctx, key, cm) },
		"Reader.List":          func(ctx context.Context) error { return r.List(ctx, &corev1.ConfigMapList{}) },
	}
}

// returnsWithin runs call and reports its error, or fails the test when it
// has not returned after guard (a failure guard, not a measurement).
func returnsWithin(t *testing.T, guard time.Duration, call func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- call() }()
	select {
	case err := <-done:
		return err
	case <-time.After(guard):
		t.Fatalf("the call did not return within %s: it hangs", guard)
		return nil
	}
}

// TestBoundedClientEveryCall: every read and write, status and other
// subresources included, ends at the per-call deadline with an error that
// names --build-api-timeout, when the API never answers; and at once with
// the parent's error when the parent context is cancelled.
func TestBoundedClientEveryCall(t *testing.T) {
	t.Run("deadline", func(t *testing.T) {
		h := &hangingClient{}
		calls := boundedCalls(newBoundedClient(h, 20*time.Millisecond), newBoundedReader(h, 20*time.Millisecond))
		for name, call := range calls {
			t.Run(name, func(t *testing.T) {
				err := returnsWithin(t, time.Minute, func() error { return call(context.Background()) })
				if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "--build-api-timeout") {
					t.Errorf("%s: got %v, want a deadline error naming --build-api-timeout", name, err)
				}
			})
		}
		if got := h.calls.Load(); got != int64(len(calls)) {
			t.Errorf("the hanging client saw %d calls, want %d", got, len(calls))
		}
	})
	t.Run("parent cancelled", func(t *testing.T) {
		h := &hangingClient{}
		for name, call := range boundedCalls(newBoundedClient(h, time.Hour), newBoundedReader(h, time.Hour)) {
			t.Run(name, func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				before := h.calls.Load()
				err := returnsWithin(t, time.Minute, func() error {
					go func() {
						// Cancel once the call is waiting.
						for h.calls.Load() == before {
							time.Sleep(time.Millisecond)
						}
						cancel()
					}()
					return call(ctx)
				})
				if !errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "--build-api-timeout") {
					t.Errorf("%s: got %v, want the parent's context.Canceled", name, err)
				}
			})
		}
	})
}

// hangingTransport plays an API server that accepts some requests and never
