// Package openstackmachine reconciles OpenStackMachines: it derives an
// OpenStackServer of the same name from the machine, its Machine and the
// cluster, and copies the server's state into the machine per the CAPI
// v1beta2 infrastructure machine contract. It makes no OpenStack call
// itself; the OpenStackServer controller does.
package openstackmachine

import (
	"context"
	"errors"

	"k8s.io/client-go/tools/events"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util"
	"sigs.k8s.io/cluster-api/util/predicates"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/conditions"
	"github.com/ocp-capi/ocp-capi/internal/manager"
	"github.com/ocp-capi/ocp-capi/internal/skeleton"
)

var (
	summaryConditions = []string{infrav1.InstanceReadyCondition, infrav1.APIServerIngressReadyCondition}
	ownedConditions   = append([]string{infrav1.ReadyCondition, clusterv1.PausedCondition}, summaryConditions...)
	status            = skeleton.Status{Kind: "OpenStackMachine", Owned: ownedConditions, Summary: summaryConditions}
)

// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=openstackmachines,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=openstackmachines/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=openstackservers,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusters;machines,verbs=get;list;watch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=openstackclusters,verbs=get;list;watch

// ClusterDefaults supplies what a machine inherits from its cluster's
// infrastructure (identity, network, security groups, tags). It returns
// nil when the cluster has none to give.
type ClusterDefaults func(ctx context.Context, cluster *clusterv1.Cluster) (*Defaults, error)

// Members puts control-plane machines behind the cluster's API endpoint
// (load-balancer membership, or the API floating IP).
type Members interface {
	// Ensure makes the machine reachable behind the endpoint and says how.
	Ensure(ctx context.Context, machine string, oss *infrav1alpha1.OpenStackServer, cluster *clusterv1.Cluster) (Membership, error)
	// Remove takes the machine out of the endpoint before it goes.
	Remove(ctx context.Context, machine string, cluster *clusterv1.Cluster) error
}

// Membership is what Members.Ensure found or did.
type Membership struct {
	// Message is for APIServerIngressReady.
	Message string
	// NotRequired is true when the cluster's endpoint needs nothing from
	// machines.
	NotRequired bool
	// LoadBalancerID is the load balancer whose pools now have the
	// machine; "" when the endpoint is not a load balancer.
	LoadBalancerID string
}

// Reconciler reconciles OpenStackMachines.
type Reconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	// Defaults may be nil: then machines must carry their identityRef and
	// ports.
	Defaults ClusterDefaults
	// Members may be nil: then control-plane machines are not put behind
	// the API endpoint.
	Members          Members
	WatchFilterValue string
}

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, opts controller.Options) error {
	log := ctrl.LoggerFrom(ctx)
	clusterToMachines, err := util.ClusterToTypedObjectsMapper(mgr.GetClient(), &infrav1.OpenStackMachineList{}, mgr.GetScheme())
	if err != nil {
		return err
	}
	return manager.FilteredController(ctx, mgr, &infrav1.OpenStackMachine{}, opts, r.WatchFilterValue).
		// Any owner reference, not only a controller's: CAPO v0.14 made
		// its machines' servers owned but not controlled, and a machine
		// taken over from CAPO must hear from its server.
		Watches(&infrav1alpha1.OpenStackServer{},
			handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), &infrav1.OpenStackMachine{})).
		Watches(&clusterv1.Machine{},
			handler.EnqueueRequestsFromMapFunc(util.MachineToInfrastructureMapFunc(infrav1.GroupVersion.WithKind("OpenStackMachine")))).
		Watches(&clusterv1.Cluster{},
			handler.EnqueueRequestsFromMapFunc(clusterToMachines),
			builder.WithPredicates(predicates.ClusterPausedTransitionsOrInfrastructureProvisioned(mgr.GetScheme(), log))).
		// A recreated API load balancer has empty pools: its control-plane
		// machines must join it (see reconcileMembership).
		Watches(&infrav1.OpenStackCluster{},
			handler.EnqueueRequestsFromMapFunc(r.controlPlaneMachines),
			builder.WithPredicates(apiLoadBalancerChanged())).
		Complete(r)
}

// Reconcile follows CAPI's provider skeleton: owner, cluster, pause, patch
// helper with a deferred summary, then the state switch.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, reterr error) {
	osm := &infrav1.OpenStackMachine{}
	if err := r.Client.Get(ctx, req.NamespacedName, osm); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	machine, err := util.GetOwnerMachine(ctx, r.Client, osm.ObjectMeta)
	if err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	var cluster *clusterv1.Cluster
	if machine != nil {
		if cluster, err = util.GetClusterFromMetadata(ctx, r.Client, machine.ObjectMeta); err != nil {
			// A deleting machine whose cluster is already gone must still
			// be cleaned up.
			if osm.DeletionTimestamp.IsZero() {
				return ctrl.Result{}, client.IgnoreNotFound(err)
			}
			cluster = nil
		}
	}
	// Paused is set with every other owned condition in the one write of
	// this pass (not by CAPI's EnsurePausedCondition, which would write it
	// alone first), so the first stored conditions are complete.
	isPaused, pausedCondition := conditions.Paused(cluster, osm, "OpenStackMachine")
	w, err := status.Start(r.Client, osm, pausedCondition)
	if err != nil {
		return ctrl.Result{}, err
	}
	defer func() { reterr = errors.Join(reterr, w.Finish(ctx, reterr)) }()

	if isPaused {
		return ctrl.Result{}, nil
	}
	if !osm.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, osm, machine, cluster)
	}
	if machine == nil {
		conditions.MarkUnknown(osm, infrav1.InstanceReadyCondition, infrav1.WaitingForDependenciesReason, "waiting for the Machine controller to set the owner reference")
		return ctrl.Result{}, nil
	}
	return r.reconcileNormal(ctx, osm, machine, cluster)
}
