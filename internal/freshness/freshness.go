// Package freshness is the stale-cache guard every reconciler of this
// project shares. Between a write and the cache seeing it, another event can
// start a reconcile of the old copy, which would redo the work and write it
// again (a no-op on the server, but one more request), or judge from a state
// the write has already left (an Agent that is already approved, a claim
// already made). The reconcilers record the resource versions their writes
// replace, and skip a reconcile of such a copy: the write's own event, or
// Retry, reconciles the new one.
//
// One Tracker serves every reconciler of a manager, so that a write of one
// controller guards the others too (the bootstrap provider's Agent
// controller writes the configs' status.agentRef). Writes are recorded by
// the client Tracker.Client returns, which the shared reconcile skeleton
// (internal/skeleton) gives CAPI's patch helper, or with Tracker.Wrote.
package freshness

import (
	"context"
	"reflect"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Retry is when an object whose cached copy is stale is looked at again,
// should its write's event not come (a status-only write is filtered out by
// the controllers' own predicates).
const Retry = 2 * time.Second

// Tracker remembers, per object, the resource versions this process's
// writes replaced. A nil Tracker tracks nothing.
type Tracker struct {
	mu      sync.Mutex
	objects map[key]*record
}

// key names an object: its kind (the Go type of a typed object, the
// group-kind of an unstructured one) and its namespaced name.
type key struct {
	kind string
	types.NamespacedName
}

type record struct {
	// superseded are the versions this process's writes replaced.
	superseded map[string]bool
	// latest is the version the last recorded write made; the next write
	// supersedes it, even when that write's object carried an older version
	// (the patch helper patches copies of the object as it was read).
	latest string
}

// New returns an empty tracker.
func New() *Tracker {
	return &Tracker{objects: map[key]*record{}}
}

func keyOf(obj client.Object) key {
	k := key{NamespacedName: client.ObjectKeyFromObject(obj)}
	switch obj.(type) {
	case *unstructured.Unstructured, *metav1.PartialObjectMetadata:
		k.kind = obj.GetObjectKind().GroupVersionKind().GroupKind().String()
	default:
		k.kind = reflect.TypeOf(obj).String()
	}
	return k
}

// Wrote records that a write turned obj from version before into the
// version obj carries now. A write that changed nothing (same version)
// records nothing: no event will follow it.
func (t *Tracker) Wrote(obj client.Object, before string) {
	after := obj.GetResourceVersion()
	if t == nil || after == "" || before == after {
		return
	}
	k := keyOf(obj)
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.objects[k]
	if r == nil {
		r = &record{superseded: map[string]bool{}}
		t.objects[k] = r
	}
	if before != "" {
		r.superseded[before] = true
	}
	if r.latest != "" && r.latest != after {
		r.superseded[r.latest] = true
	}
	r.latest = after
}

// Stale tells whether obj, a cached copy, is a version this process's
// writes replaced. A version they did not replace means the cache has caught
// up (or someone else wrote): the record is dropped.
func (t *Tracker) Stale(obj client.Object) bool {
	if t == nil {
		return false
	}
	k := keyOf(obj)
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.objects[k]
	if r == nil {
		return false
	}
	if r.superseded[obj.GetResourceVersion()] {
		return true
	}
	delete(t.objects, k)
	return false
}

// Client returns c with its writes recorded: Patch and Update of objects and
// of their status. Reads, creations and deletions pass through unchanged.
func (t *Tracker) Client(c client.Client) client.Client {
	if t == nil {
		return c
	}
	return &recordingClient{Client: c, t: t}
}

type recordingClient struct {
	client.Client
	t *Tracker
}

func (c *recordingClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	return c.t.record(obj, func() error { return c.Client.Patch(ctx, obj, patch, opts...) })
}

func (c *recordingClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	return c.t.record(obj, func() error { return c.Client.Update(ctx, obj, opts...) })
}

func (c *recordingClient) Status() client.SubResourceWriter {
	return &recordingStatusWriter{SubResourceWriter: c.Client.Status(), t: c.t}
}

type recordingStatusWriter struct {
	client.SubResourceWriter
	t *Tracker
}

func (w *recordingStatusWriter) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	return w.t.record(obj, func() error { return w.SubResourceWriter.Patch(ctx, obj, patch, opts...) })
}

func (w *recordingStatusWriter) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	return w.t.record(obj, func() error { return w.SubResourceWriter.Update(ctx, obj, opts...) })
}

// record runs write, a write of obj, and records it when it succeeds.
func (t *Tracker) record(obj client.Object, write func() error) error {
	before := obj.GetResourceVersion()
	if err := write(); err != nil {
		return err
	}
	t.Wrote(obj, before)
	return nil
}
