package buildcontroller

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Every call the controller makes to the API server, or to a cache that may
// still be waiting for its first list, runs under its own deadline
// (--build-api-timeout) derived from the caller's context. The reconcile
// context ends only at shutdown, so without a deadline one hung request
// (an API server that accepted the connection and never answers) would hold
// a worker for good; with it the reconcile returns an error and
// controller-runtime retries with backoff. Shutdown still cancels a call at
// once, since the deadline's context is a child of the reconcile's.
// docs/addon/build-controller.md (Behaviour details) describes it.

// bound runs call under a deadline of d derived from ctx. A call that ran
// out of its own time (not the caller's) gets an error that says so; the
// original error stays in the chain, and the caller adds what was called.
func bound(ctx context.Context, d time.Duration, call func(context.Context) error) error {
	cctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	err := call(cctx)
	if err != nil && ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded) {
		return &apiTimeoutError{timeout: d, err: err}
	}
	return err
}

// apiTimeoutError is a call that got no answer within --build-api-timeout.
type apiTimeoutError struct {
	timeout time.Duration
	err     error
}

func (e *apiTimeoutError) Error() string {
	return fmt.Sprintf("no answer from the API server within %s (--build-api-timeout): %v", e.timeout, e.err)
}

func (e *apiTimeoutError) Unwrap() error { return e.err }

// Is makes errors.Is(err, context.DeadlineExceeded) true whatever the
// client wrapped (client-go does not always keep the context's error).
func (e *apiTimeoutError) Is(target error) bool { return target == context.DeadlineExceeded }

// boundedReader bounds every read of a client.Reader.
type boundedReader struct {
	client.Reader
	timeout time.Duration
}

func newBoundedReader(r client.Reader, d time.Duration) client.Reader {
	return boundedReader{Reader: r, timeout: d}
}

func (b boundedReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return bound(ctx, b.timeout, func(ctx context.Context) error { return b.Reader.Get(ctx, key, obj, opts...) })
}

func (b boundedReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return bound(ctx, b.timeout, func(ctx context.Context) error { return b.Reader.List(ctx, list, opts...) })
}

// boundedClient bounds every read and write of a client.Client, its status
// and other subresources included.
type boundedClient struct {
	client.Client
	timeout time.Duration
}

func newBoundedClient(c client.Client, d time.Duration) client.Client {
	return boundedClient{Client: c, timeout: d}
}

func (b boundedClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return bound(ctx, b.timeout, func(ctx context.Context) error { return b.Client.Get(ctx, key, obj, opts...) })
}

func (b boundedClient) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return bound(ctx, b.timeout, func(ctx context.Context) error { return b.Client.List(ctx, list, opts...) })
}

func (b boundedClient) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	return bound(ctx, b.timeout, func(ctx context.Context) error { return b.Client.Apply(ctx, obj, opts...) })
}

func (b boundedClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	return bound(ctx, b.timeout, func(ctx context.Context) error { return b.Client.Create(ctx, obj, opts...) })
}

func (b boundedClient) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	return bound(ctx, b.timeout, func(ctx context.Context) error { return b.Client.Delete(ctx, obj, opts...) })
}

func (b boundedClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	return bound(ctx, b.timeout, func(ctx context.Context) error { return b.Client.Update(ctx, obj, opts...) })
}

func (b boundedClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	return bound(ctx, b.timeout, func(ctx context.Context) error { return b.Client.Patch(ctx, obj, patch, opts...) })
}

func (b boundedClient) DeleteAllOf(ctx context.Context, obj client.Object, opts ...client.DeleteAllOfOption) error {
	return bound(ctx, b.timeout, func(ctx context.Context) error { return b.Client.DeleteAllOf(ctx, obj, opts...) })
}

func (b boundedClient) Status() client.SubResourceWriter {
	return boundedSubResourceWriter{SubResourceWriter: b.Client.Status(), timeout: b.timeout}
}

func (b boundedClient) SubResource(name string) client.SubResourceClient {
	sub := b.Client.SubResource(name)
	return boundedSubResource{
		SubResourceReader:        boundedSubResourceReader{SubResourceReader: sub, timeout: b.timeout},
		boundedSubResourceWriter: boundedSubResourceWriter{SubResourceWriter: sub, timeout: b.timeout},
	}
}

// boundedSubResource bounds the calls of a subresource client.
type boundedSubResource struct {
	client.SubResourceReader
	boundedSubResourceWriter
}

type boundedSubResourceReader struct {
	client.SubResourceReader
	timeout time.Duration
}

func (b boundedSubResourceReader) Get(ctx context.Context, obj, sub client.Object, opts ...client.SubResourceGetOption) error {
	return bound(ctx, b.timeout, func(ctx context.Context) error { return b.SubResourceReader.Get(ctx, obj, sub, opts...) })
}

type boundedSubResourceWriter struct {
	client.SubResourceWriter
	timeout time.Duration
}

func (b boundedSubResourceWriter) Create(ctx context.Context, obj, sub client.Object, opts ...client.SubResourceCreateOption) error {
	return bound(ctx, b.timeout, func(ctx context.Context) error { return b.SubResourceWriter.Create(ctx, obj, sub, opts...) })
}

func (b boundedSubResourceWriter) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	return bound(ctx, b.timeout, func(ctx context.Context) error { return b.SubResourceWriter.Update(ctx, obj, opts...) })
}

func (b boundedSubResourceWriter) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	return bound(ctx, b.timeout, func(ctx context.Context) error { return b.SubResourceWriter.Patch(ctx, obj, patch, opts...) })
}

func (b boundedSubResourceWriter) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
	return bound(ctx, b.timeout, func(ctx context.Context) error { return b.SubResourceWriter.Apply(ctx, obj, opts...) })
}
