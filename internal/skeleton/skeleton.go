// Package skeleton is the Reconcile that the controllers of this project's
// own objects share (the bootstrap provider's OpenshiftAssistedConfig, the
// control plane's OpenshiftAssistedControlPlane), in the shape of CAPI's
// kubeadm controllers:
//
//  1. get the object; a missing one is done (or handed to Spec.Gone);
//  2. keep to --watch-filter: mapped events bypass the For predicate;
//  3. the stale-cache guard (internal/freshness): a cached copy this
//     process's own write replaced is not acted on;
//  4. the scope: what the reconcile works on beside the object (its owner,
//     its Cluster);
//  5. the Paused condition (conditions.Paused), set in the same write as the
//     others rather than on its own as CAPI's EnsurePausedCondition does;
//  6. the finalizer, written on its own before anything else is made, so
//     that a deletion always finds what to clean up;
//  7. CAPI's patch helper: every owned condition is set (Unknown, reason
//     Pending) before the first write; a deferred function summarises Ready,
//     sets status.observedGeneration after a successful pass and patches
//     with patch.WithOwnedConditions, whatever path the pass took (deletion
//     included);
//  8. paused: stop; else the deletion or the normal flow.
//
// The flows themselves are lists of phases over the scope (RunPhases), as
// CAPI's MachineSet controller runs its reconcile functions.
package skeleton

import (
	"context"
	"errors"
	"reflect"

	"k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	capiconditions "sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/ocp-capi/ocp-capi/internal/conditions"
	"github.com/ocp-capi/ocp-capi/internal/freshness"
)

// Object is what the skeleton reconciles: an object of this project, with
// v1beta2 conditions and status.observedGeneration.
type Object interface {
	client.Object
	capiconditions.Setter
}

// Spec is what a controller plugs into the skeleton. T is its object, S the
// scope its flows work on.
type Spec[T Object, S any] struct {
	Client client.Client
	// Freshness is the stale-cache guard the manager's reconcilers share.
	Freshness        *freshness.Tracker
	WatchFilterValue string
	// Kind names the object in the Paused condition and in errors.
	Kind string
	// Finalizer is the object's finalizer.
	Finalizer string
	// FinalizerDue tells whether the finalizer is to be added now (nil:
	// always, while the object is neither paused nor being deleted).
	FinalizerDue func(S) bool
	// Owned are every condition the controller owns, Ready and Paused
	// included: they are set on the first write, and the patch helper keeps
	// them against concurrent writers (patch.WithOwnedConditions).
	Owned []string
	// Summary are the conditions Ready summarises.
	Summary []string
	// Scope reads what the reconcile works on beside obj, and obj's Cluster
	// (nil while there is none).
	Scope func(ctx context.Context, obj T) (S, *clusterv1.Cluster, error)
	// Normal and Delete are the flows, for a live object and for one being
	// deleted.
	Normal, Delete func(ctx context.Context, s S) (ctrl.Result, error)
	// Gone, when set, runs for an object that does not exist (any more).
	Gone func(ctx context.Context, key types.NamespacedName) error
}

// Reconcile reconciles the object of req as the package documentation
// says.
func Reconcile[T Object, S any](ctx context.Context, req ctrl.Request, spec Spec[T, S]) (_ ctrl.Result, reterr error) {
	var zero T
	obj := reflect.New(reflect.TypeOf(zero).Elem()).Interface().(T) // T is a pointer type
	if err := spec.Client.Get(ctx, req.NamespacedName, obj); err != nil {
		if client.IgnoreNotFound(err) == nil && spec.Gone != nil {
			return ctrl.Result{}, spec.Gone(ctx, req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if spec.WatchFilterValue != "" && obj.GetLabels()[clusterv1.WatchLabel] != spec.WatchFilterValue {
		return ctrl.Result{}, nil
	}
	if spec.Freshness.Stale(obj) {
		return ctrl.Result{RequeueAfter: freshness.Retry}, nil // our write's event is on its way
	}
	s, cluster, err := spec.Scope(ctx, obj)
	if err != nil {
		return ctrl.Result{}, err
	}
	isPaused, pausedCondition := conditions.Paused(cluster, obj, spec.Kind)

	// Every write of the object is recorded for the stale-cache guard.
	c := spec.Freshness.Client(spec.Client)
	if !isPaused && obj.GetDeletionTimestamp().IsZero() && !controllerutil.ContainsFinalizer(obj, spec.Finalizer) &&
		(spec.FinalizerDue == nil || spec.FinalizerDue(s)) {
		base := obj.DeepCopyObject().(client.Object)
		controllerutil.AddFinalizer(obj, spec.Finalizer)
		if err := c.Patch(ctx, obj, client.MergeFrom(base)); err != nil {
			return ctrl.Result{}, err
		}
	}

	status := Status{Kind: spec.Kind, Owned: spec.Owned, Summary: spec.Summary, ObservedGeneration: true}
	w, err := status.Start(c, obj, pausedCondition)
	if err != nil {
		return ctrl.Result{}, err
	}
	defer func() { reterr = errors.Join(reterr, w.Finish(ctx, reterr)) }()

	if isPaused {
		return ctrl.Result{}, nil
	}
	if !obj.GetDeletionTimestamp().IsZero() {
		return spec.Delete(ctx, s)
	}
	return spec.Normal(ctx, s)
}
