// Package openstackcluster reconciles OpenStackClusters: the network,
// router, security groups, API endpoint and failure domains of a cluster
// (internal/openstack/cloud/cluster does the OpenStack work), and the bastion,
// an OpenStackServer owned by the cluster.
package openstackcluster

import (
	"context"
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util"
	"sigs.k8s.io/cluster-api/util/annotations"
	"sigs.k8s.io/cluster-api/util/predicates"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/conditions"
	"github.com/ocp-capi/ocp-capi/internal/manager"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/cluster"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/scope"
	"github.com/ocp-capi/ocp-capi/internal/openstack/controllers/identity"
	"github.com/ocp-capi/ocp-capi/internal/skeleton"
)

var (
	stepConditions = []string{
		infrav1.NetworkReadyCondition, infrav1.RouterReadyCondition, infrav1.SecurityGroupsReadyCondition,
		infrav1.APIEndpointReadyCondition, infrav1.BastionReadyCondition,
	}
	ownedConditions = append([]string{infrav1.ReadyCondition, clusterv1.DeletingCondition, clusterv1.PausedCondition}, stepConditions...)
	// status is how the status is written: Deleting counts against Ready,
	// so deletion progress shows there.
	status = skeleton.Status{Kind: "OpenStackCluster", Owned: ownedConditions,
		Summary: append(append([]string{}, stepConditions...), clusterv1.DeletingCondition), Negative: []string{clusterv1.DeletingCondition}}
)

// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=openstackclusters,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=openstackclusters/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=openstackservers,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machines,verbs=get;list;watch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=openstackmachines,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusters,verbs=get;list;watch

// Reconciler reconciles OpenStackClusters.
type Reconciler struct {
	Client           client.Client
	Scopes           *identity.Factory
	Recorder         events.EventRecorder
	WatchFilterValue string
}

// clusterScope is what the phases of one pass over an OpenStackCluster
// share: the object, its Cluster, the clients of its identity, and what
// earlier phases found.
type clusterScope struct {
	osc *infrav1.OpenStackCluster
	// capiCluster is the owner Cluster; nil while a deleting cluster's
	// owner is already gone.
	capiCluster *clusterv1.Cluster
	req         cluster.Request
	cloud       scope.Scope

	// Found by the phases of a normal pass.
	ext     *infrav1.NetworkStatus
	net     *infrav1.NetworkStatusWithSubnets
	prevNet *infrav1.NetworkStatusWithSubnets // what the status named before this pass
}

func newClusterScope(osc *infrav1.OpenStackCluster, c *clusterv1.Cluster) *clusterScope {
	return &clusterScope{osc: osc, capiCluster: c, req: request(osc)}
}

// connect gets the clients of the cluster's identity.
func (r *Reconciler) connect(ctx context.Context, s *clusterScope) error {
	cs, err := r.Scopes.For(ctx, s.osc.Namespace, s.osc.Spec.IdentityRef)
	if err != nil {
		return err
	}
	s.cloud = scope.Scope{Clients: cs, Log: ctrl.LoggerFrom(ctx)}
	return nil
}

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, opts controller.Options) error {
	log := ctrl.LoggerFrom(ctx)
	return manager.FilteredController(ctx, mgr, &infrav1.OpenStackCluster{}, opts, r.WatchFilterValue).
		// Any owner reference, not only a controller's: CAPO v0.14 made
		// the bastion's server owned but not controlled, and a cluster
		// taken over from CAPO must hear from it (its deletion above all).
		Watches(&infrav1alpha1.OpenStackServer{},
			handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), &infrav1.OpenStackCluster{})).
		Watches(&clusterv1.Cluster{},
			handler.EnqueueRequestsFromMapFunc(util.ClusterToInfrastructureMapFunc(ctx, infrav1.GroupVersion.WithKind("OpenStackCluster"), mgr.GetClient(), &infrav1.OpenStackCluster{})),
			builder.WithPredicates(predicates.ClusterPausedTransitions(mgr.GetScheme(), log))).
		// Deletion waits for the machines; their removal moves it on.
		Watches(&infrav1.OpenStackMachine{}, handler.EnqueueRequestsFromMapFunc(r.machineToCluster),
			builder.WithPredicates(deletionsOnly())).
		Complete(r)
}

// machineToCluster maps a machine to its cluster's OpenStackCluster.
func (r *Reconciler) machineToCluster(ctx context.Context, o client.Object) []reconcile.Request {
	name := o.GetLabels()[clusterv1.ClusterNameLabel]
	if name == "" {
		return nil
	}
	cluster := &clusterv1.Cluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: o.GetNamespace(), Name: name}, cluster); err != nil {
		return nil
	}
	ref := cluster.Spec.InfrastructureRef
	if ref.Kind != "OpenStackCluster" || ref.Name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: o.GetNamespace(), Name: ref.Name}}}
}

// Reconcile follows CAPI's provider skeleton.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, reterr error) {
	osc := &infrav1.OpenStackCluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, osc); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	cluster, err := util.GetOwnerCluster(ctx, r.Client, osc.ObjectMeta)
	if err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	// An externally managed infrastructure cluster is someone else's.
	if annotations.IsExternallyManaged(osc) {
		return ctrl.Result{}, nil
	}
	// Paused is set with every other owned condition in the one write of
	// this pass (not by CAPI's EnsurePausedCondition, which would write it
	// alone first), so the first stored conditions are complete.
	isPaused, pausedCondition := conditions.Paused(cluster, osc, "OpenStackCluster")
	w, err := status.Start(r.Client, osc, pausedCondition)
	if err != nil {
		return ctrl.Result{}, err
	}
	defer func() { reterr = errors.Join(reterr, w.Finish(ctx, reterr)) }()

	if isPaused {
		return ctrl.Result{}, nil
	}
	if !osc.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, osc, cluster)
	}
	conditions.MarkFalse(osc, clusterv1.DeletingCondition, clusterv1.NotDeletingReason, "")
	if cluster == nil {
		conditions.MarkUnknown(osc, infrav1.NetworkReadyCondition, infrav1.WaitingForDependenciesReason, "waiting for the Cluster controller to set the owner reference")
		return ctrl.Result{}, nil
	}
	return r.reconcileNormal(ctx, osc, cluster)
}
