// Package openstackfloatingippool reconciles OpenStackFloatingIPPools, an
// IPAM provider for CAPI's IPAddressClaims: each claim naming the pool gets
// an IPAddress of the same name holding a floating IP, a pre-allocated one
// first, else one the pool creates (tagged with the pool's tag, so that none
// is ever lost track of). A released address (its IPAddress deleted) is
// deleted or kept per reclaimPolicy; deleting the pool waits for every
// IPAddress and then deletes the floating IPs the pool created.
package openstackfloatingippool

import (
	"context"
	"errors"

	"k8s.io/client-go/tools/events"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ipamv1 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/cluster-api/util/predicates"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/conditions"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/fippool"
	"github.com/ocp-capi/ocp-capi/internal/openstack/controllers/identity"
	"github.com/ocp-capi/ocp-capi/internal/skeleton"
)

// Kind is the pool's kind, as claims name it in spec.poolRef.
const Kind = "OpenStackFloatingIPPool"

var (
	stepConditions  = []string{infrav1alpha1.FloatingIPNetworkReadyCondition, infrav1alpha1.ClaimsFulfilledCondition}
	ownedConditions = append([]string{infrav1.ReadyCondition, clusterv1.DeletingCondition, clusterv1.PausedCondition}, stepConditions...)
	status          = skeleton.Status{Kind: Kind, Owned: ownedConditions,
		Summary: append([]string{clusterv1.DeletingCondition}, stepConditions...), Negative: []string{clusterv1.DeletingCondition}}
)

// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=openstackfloatingippools,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=openstackfloatingippools/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=ipam.cluster.x-k8s.io,resources=ipaddressclaims,verbs=get;list;watch
// +kubebuilder:rbac:groups=ipam.cluster.x-k8s.io,resources=ipaddressclaims/status,verbs=patch
// +kubebuilder:rbac:groups=ipam.cluster.x-k8s.io,resources=ipaddresses,verbs=get;list;watch;create;patch;delete

// Reconciler reconciles OpenStackFloatingIPPools.
type Reconciler struct {
	Client           client.Client
	Scopes           *identity.Factory
	Recorder         events.EventRecorder
	WatchFilterValue string
}

// SetupWithManager registers the controller. The pool's own status writes
// do not bring it back; its claims and addresses do.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, opts controller.Options) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&infrav1alpha1.OpenStackFloatingIPPool{}, builder.WithPredicates(skeleton.NotStatusOnly())).
		WithOptions(opts).
		WithEventFilter(predicates.ResourceHasFilterLabel(mgr.GetScheme(), ctrl.LoggerFrom(ctx), r.WatchFilterValue)).
		Watches(&ipamv1.IPAddressClaim{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			return poolRequest(o.GetNamespace(), o.(*ipamv1.IPAddressClaim).Spec.PoolRef)
		})).
		Watches(&ipamv1.IPAddress{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			return poolRequest(o.GetNamespace(), o.(*ipamv1.IPAddress).Spec.PoolRef)
		})).
		Complete(r)
}

func poolRequest(namespace string, ref ipamv1.IPPoolReference) []reconcile.Request {
	if !ours(ref) {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: namespace, Name: ref.Name}}}
}

func ours(ref ipamv1.IPPoolReference) bool {
	return ref.Kind == Kind && ref.APIGroup == infrav1alpha1.GroupVersion.Group
}

// Reconcile reads the pool, hands out and takes back addresses, writes
// status once, and returns.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, reterr error) {
	pool := &infrav1alpha1.OpenStackFloatingIPPool{}
	if err := r.Client.Get(ctx, req.NamespacedName, pool); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	// A pool belongs to no Cluster: only its own annotation pauses it.
	isPaused, pausedCondition := conditions.Paused(nil, pool, Kind)
	w, err := status.Start(r.Client, pool, pausedCondition)
	if err != nil {
		return ctrl.Result{}, err
	}
	defer func() { reterr = errors.Join(reterr, w.Finish(ctx, reterr)) }()
	if isPaused {
		return ctrl.Result{}, nil
	}
	if !pool.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, pool)
	}
	conditions.MarkFalse(pool, clusterv1.DeletingCondition, clusterv1.NotDeletingReason, "")
	// The finalizer is written before any floating IP is made.
	if controllerutil.AddFinalizer(pool, infrav1alpha1.OpenStackFloatingIPPoolFinalizer) {
		return ctrl.Result{}, nil
	}
	return r.reconcileNormal(ctx, pool)
}

// neutron is the pool's OpenStack.
func (r *Reconciler) neutron(ctx context.Context, pool *infrav1alpha1.OpenStackFloatingIPPool) (fippool.Neutron, error) {
	c, err := r.Scopes.For(ctx, pool.Namespace, pool.Spec.IdentityRef)
	if err != nil {
		return nil, err
	}
	return fippool.From(c), nil
}

// addresses are the IPAddresses the pool handed out, by name.
func (r *Reconciler) addresses(ctx context.Context, pool *infrav1alpha1.OpenStackFloatingIPPool) (map[string]*ipamv1.IPAddress, error) {
	list := &ipamv1.IPAddressList{}
	if err := r.Client.List(ctx, list, client.InNamespace(pool.Namespace)); err != nil {
		return nil, err
	}
	out := map[string]*ipamv1.IPAddress{}
	for i := range list.Items {
		a := &list.Items[i]
		if ours(a.Spec.PoolRef) && a.Spec.PoolRef.Name == pool.Name {
			out[a.Name] = a
		}
	}
	return out, nil
}

// release takes back the addresses whose IPAddress is being deleted: the
// floating IP is deleted (reclaimPolicy Delete, never a pre-allocated one)
// or becomes available again, then the IPAddress may go. They are dropped
// from addrs.
func (r *Reconciler) release(ctx context.Context, n fippool.Neutron, pool *infrav1alpha1.OpenStackFloatingIPPool, addrs map[string]*ipamv1.IPAddress) error {
	for name, a := range addrs {
		if a.DeletionTimestamp.IsZero() {
			continue
		}
		if controllerutil.ContainsFinalizer(a, infrav1alpha1.DeleteFloatingIPFinalizer) {
			ip := a.Spec.Address
			if pool.Spec.ReclaimPolicy == infrav1alpha1.ReclaimDelete && !contains(pool.Spec.PreAllocatedFloatingIPs, ip) {
				if err := fippool.Delete(ctx, n, ip); err != nil {
					return err
				}
				pool.Status.AvailableIPs = without(pool.Status.AvailableIPs, ip)
			} else {
				pool.Status.AvailableIPs = with(pool.Status.AvailableIPs, ip)
			}
			base := a.DeepCopy()
			controllerutil.RemoveFinalizer(a, infrav1alpha1.DeleteFloatingIPFinalizer)
			if err := r.Client.Patch(ctx, a, client.MergeFrom(base)); client.IgnoreNotFound(err) != nil {
				return err
			}
		}
		delete(addrs, name)
	}
	return nil
}
