// Package openstackserver reconciles OpenStackServers: one Nova server with
// its ports, trunks and volumes, built by internal/openstack/cloud/server.
package openstackserver

import (
	"context"
	"errors"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ipamv1 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/cluster-api/util"
	"sigs.k8s.io/cluster-api/util/predicates"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/conditions"
	"github.com/ocp-capi/ocp-capi/internal/manager"
	"github.com/ocp-capi/ocp-capi/internal/openstack/controllers/identity"
	"github.com/ocp-capi/ocp-capi/internal/skeleton"
)

// The conditions this controller owns. Ready summarizes the step
// conditions; Deleting and Paused are reported beside it.
var (
	stepConditions = []string{infrav1.FloatingAddressFromPoolReadyCondition, infrav1.ReferencesResolvedCondition, infrav1.PortsReadyCondition,
		infrav1.VolumesReadyCondition, infrav1.InstanceReadyCondition}
	ownedConditions = append([]string{infrav1.ReadyCondition, clusterv1.DeletingCondition, clusterv1.PausedCondition}, stepConditions...)
	// status is how the status is written: Ready summarises the step
	// conditions and Deleting, so a deletion that is blocked shows in Ready
	// too.
	status = skeleton.Status{Kind: "OpenStackServer", Owned: ownedConditions,
		Summary: append([]string{clusterv1.DeletingCondition}, stepConditions...), Negative: []string{clusterv1.DeletingCondition}}
)

// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=openstackservers,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=openstackservers/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=openstackclusters,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get
// +kubebuilder:rbac:groups=ipam.cluster.x-k8s.io,resources=ipaddressclaims,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=ipam.cluster.x-k8s.io,resources=ipaddresses,verbs=get;list;watch

// Reconciler reconciles OpenStackServers.
type Reconciler struct {
	Client client.Client
	// APIReader reads Secrets (identity, user data) without caching them.
	APIReader client.Reader
	Scopes    *identity.Factory
	Recorder  events.EventRecorder
	// WatchFilterValue is the cluster.x-k8s.io/watch-filter label value.
	WatchFilterValue string

	memo memo
}

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, opts controller.Options) error {
	return manager.FilteredController(ctx, mgr, &infrav1alpha1.OpenStackServer{}, opts, r.WatchFilterValue).
		// The claim of floatingIPPoolRef: its fulfilment brings the server on.
		Owns(&ipamv1.IPAddressClaim{}).
		Watches(&clusterv1.Cluster{},
			handler.EnqueueRequestsFromMapFunc(r.clusterToServers),
			builder.WithPredicates(predicates.ClusterPausedTransitions(mgr.GetScheme(), ctrl.LoggerFrom(ctx)))).
		// A bastion's floating IP is associated by its cluster's controller;
		// its server then reports it (knownFloatingIP).
		Watches(&infrav1.OpenStackCluster{},
			handler.EnqueueRequestsFromMapFunc(bastionOf),
			builder.WithPredicates(bastionFloatingIPChanged)).
		Complete(r)
}

// bastionFloatingIPChanged passes only the update that records a new
// floating IP for the bastion, so resyncs of clusters bring no pass.
var bastionFloatingIPChanged = predicate.Funcs{
	CreateFunc:  func(event.CreateEvent) bool { return false },
	DeleteFunc:  func(event.DeleteEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
	UpdateFunc: func(e event.UpdateEvent) bool {
		return bastionFloatingIP(e.ObjectOld) != bastionFloatingIP(e.ObjectNew) && bastionFloatingIP(e.ObjectNew) != ""
	},
}

func bastionFloatingIP(o client.Object) string {
	osc, ok := o.(*infrav1.OpenStackCluster)
	if !ok || osc.Status.Bastion == nil {
		return ""
	}
	return osc.Status.Bastion.FloatingIP
}

// bastionOf enqueues a cluster's bastion server.
func bastionOf(_ context.Context, o client.Object) []reconcile.Request {
	osc, ok := o.(*infrav1.OpenStackCluster)
	if !ok || osc.Status.Bastion == nil || osc.Status.Bastion.Name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: osc.Namespace, Name: osc.Status.Bastion.Name}}}
}

// clusterToServers enqueues the servers of a cluster when it is paused or
// unpaused.
func (r *Reconciler) clusterToServers(ctx context.Context, o client.Object) []reconcile.Request {
	list := &infrav1alpha1.OpenStackServerList{}
	if err := r.Client.List(ctx, list, client.InNamespace(o.GetNamespace()), client.MatchingLabels{clusterv1.ClusterNameLabel: o.GetName()}); err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return out
}

// Reconcile reads the server, decides, writes status once, and returns.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, reterr error) {
	oss := &infrav1alpha1.OpenStackServer{}
	if err := r.Client.Get(ctx, req.NamespacedName, oss); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !oss.DeletionTimestamp.IsZero() && r.memo.isFinished(oss.UID) {
		// A stale copy of an object whose deletion is complete.
		return ctrl.Result{}, nil
	}

	// A server need not belong to a cluster; when it does, the cluster's
	// pause applies.
	var cluster *clusterv1.Cluster
	if oss.Labels[clusterv1.ClusterNameLabel] != "" {
		c, err := util.GetClusterFromMetadata(ctx, r.Client, oss.ObjectMeta)
		switch {
		case err == nil:
			cluster = c
		case apierrors.IsNotFound(err) || errors.Is(err, util.ErrNoCluster):
		default:
			return ctrl.Result{}, err
		}
	}
	// Paused is set with every other owned condition in the one write of
	// this pass (not by CAPI's EnsurePausedCondition, which would write it
	// alone first), so the first stored conditions are complete.
	isPaused, pausedCondition := conditions.Paused(cluster, oss, "OpenStackServer")

	w, err := status.Start(r.Client, oss, pausedCondition)
	if err != nil {
		return ctrl.Result{}, err
	}
	r.memo.fill(oss)
	defer func() {
		if controllerutil.ContainsFinalizer(oss, infrav1alpha1.OpenStackServerFinalizer) {
			r.memo.record(oss)
		} else {
			r.memo.forget(oss.UID)
		}
		// Once the finalizer is gone the object may be gone too: Finish
		// takes that as written.
		err := w.Finish(ctx, reterr)
		reterr = errors.Join(reterr, err)
		if err == nil && !oss.DeletionTimestamp.IsZero() && !controllerutil.ContainsFinalizer(oss, infrav1alpha1.OpenStackServerFinalizer) {
			// Deletion is complete; passes on stale copies are skipped.
			r.memo.markFinished(oss.UID, time.Now())
		}
	}()

	if isPaused {
		return ctrl.Result{}, nil
	}
	if !oss.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, oss)
	}
	conditions.MarkFalse(oss, clusterv1.DeletingCondition, clusterv1.NotDeletingReason, "")
	return r.reconcileNormal(ctx, oss)
}
