package manager

import (
	"context"
	"sync"

	"sigs.k8s.io/cluster-api/util/predicates"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
)

// Reconciler is what a Controller's Setup registers: a reconciler that sets
// itself up with the manager.
type Reconciler interface {
	SetupWithManager(ctx context.Context, mgr ctrl.Manager, opts controller.Options) error
}

// Shared is what several controllers of a manager share (a client
// factory, cache indexes, a stale-cache guard). It is made once, by the
// Setup of the first controller that needs it: after the flags are parsed
// and the manager exists.
type Shared[T any] struct {
	newT func(context.Context, ctrl.Manager) (T, error)
	once sync.Once
	v    T
	err  error
}

// NewShared returns the shared state that newT makes.
func NewShared[T any](newT func(ctx context.Context, mgr ctrl.Manager) (T, error)) *Shared[T] {
	return &Shared[T]{newT: newT}
}

// Get makes the shared state on the first call and returns it (or the
// error making it returned) on every call.
func (s *Shared[T]) Get(ctx context.Context, mgr ctrl.Manager) (T, error) {
	s.once.Do(func() { s.v, s.err = s.newT(ctx, mgr) })
	return s.v, s.err
}

// SetupWith is a Controller's Setup: it gets the shared state and sets up
// the reconciler that newReconciler makes with it, with the controller's
// flag values.
func SetupWith[T any](s *Shared[T], newReconciler func(mgr ctrl.Manager, o ControllerOptions, shared T) Reconciler) func(context.Context, ctrl.Manager, ControllerOptions) error {
	return func(ctx context.Context, mgr ctrl.Manager, o ControllerOptions) error {
		shared, err := s.Get(ctx, mgr)
		if err != nil {
			return err
		}
		return newReconciler(mgr, o, shared).SetupWithManager(ctx, mgr, o.Options())
	}
}

// FilteredController begins the controller of obj's kind with opts and
// --watch-filter applied to every event it receives, its watches' included
// (CAPI's ResourceHasFilterLabel): the shape of a provider's controller
// whose related objects all carry the filter label.
func FilteredController(ctx context.Context, mgr ctrl.Manager, obj client.Object, opts controller.Options, watchFilterValue string) *builder.Builder {
	return ctrl.NewControllerManagedBy(mgr).
		For(obj).
		WithOptions(opts).
		WithEventFilter(predicates.ResourceHasFilterLabel(mgr.GetScheme(), ctrl.LoggerFrom(ctx), watchFilterValue))
}
