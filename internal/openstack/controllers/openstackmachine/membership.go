package openstackmachine

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util"
	capiconditions "sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/conditions"
)

// apiLoadBalancer is the cluster's API load balancer as the machines see
// it: its ID ("" when the endpoint is not a load balancer) and whether it
// is ready to take members (APIEndpointReady True: listeners and pools
// exist). A recreated load balancer has a new ID.
func apiLoadBalancer(osc *infrav1.OpenStackCluster) (id, name string, ready bool) {
	if osc == nil || osc.Status.APIServerLoadBalancer == nil {
		return "", "", false
	}
	lb := osc.Status.APIServerLoadBalancer
	return lb.ID, lb.Name, capiconditions.IsTrue(osc, infrav1.APIEndpointReadyCondition)
}

// apiLoadBalancerChanged passes OpenStackCluster updates that change what
// apiLoadBalancer says, and nothing else: a cluster's other status writes
// and its resyncs cost the machines nothing.
func apiLoadBalancerChanged() predicate.Funcs {
	return predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			oldC, ok1 := e.ObjectOld.(*infrav1.OpenStackCluster)
			newC, ok2 := e.ObjectNew.(*infrav1.OpenStackCluster)
			if !ok1 || !ok2 {
				return false
			}
			oldID, _, oldReady := apiLoadBalancer(oldC)
			newID, _, newReady := apiLoadBalancer(newC)
			return oldID != newID || oldReady != newReady
		},
	}
}

// clusterName is the CAPI Cluster of an infrastructure object: its
// cluster-name label, else its owner Cluster.
func clusterName(o client.Object) string {
	if n := o.GetLabels()[clusterv1.ClusterNameLabel]; n != "" {
		return n
	}
	for _, ref := range o.GetOwnerReferences() {
		if ref.Kind == "Cluster" && ref.APIVersion == clusterv1.GroupVersion.String() {
			return ref.Name
		}
	}
	return ""
}

// controlPlaneMachines maps an OpenStackCluster to the OpenStackMachines
// of its control-plane Machines (from the cache).
func (r *Reconciler) controlPlaneMachines(ctx context.Context, o client.Object) []reconcile.Request {
	name := clusterName(o)
	if name == "" {
		return nil
	}
	machines := &clusterv1.MachineList{}
	if err := r.Client.List(ctx, machines, client.InNamespace(o.GetNamespace()),
		client.MatchingLabels{clusterv1.ClusterNameLabel: name}, client.HasLabels{clusterv1.MachineControlPlaneLabel}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing the control-plane Machines of a cluster whose API load balancer changed", "cluster", name)
		return nil
	}
	var out []reconcile.Request
	for _, m := range machines.Items {
		ref := m.Spec.InfrastructureRef
		if ref.Kind == "OpenStackMachine" && ref.APIGroup == infrav1.GroupVersion.Group && ref.Name != "" {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: m.Namespace, Name: ref.Name}})
		}
	}
	return out
}

// infraCluster is the cluster's OpenStackCluster from the cache, or nil
// when its infrastructure is something else or is gone.
func (r *Reconciler) infraCluster(ctx context.Context, cl *clusterv1.Cluster) (*infrav1.OpenStackCluster, error) {
	ref := cl.Spec.InfrastructureRef
	if ref.Kind != "OpenStackCluster" || ref.APIGroup != infrav1.GroupVersion.Group || ref.Name == "" {
		return nil, nil
	}
	osc := &infrav1.OpenStackCluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: cl.Namespace, Name: ref.Name}, osc); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return osc, nil
}

// reconcileMembership puts a provisioned control-plane machine behind the API
// endpoint. Membership follows the load balancer actually in place: it is
// ensured once per spec generation and per load balancer (recorded in
// status.apiServerLoadBalancerID), so a steady machine makes no OpenStack
// call, and a recreated load balancer (new ID, empty pools) is joined
// again. Until it is, APIServerIngressReady, and so Ready, is not True.
func (r *Reconciler) reconcileMembership(ctx context.Context, osm *infrav1.OpenStackMachine, machine *clusterv1.Machine, oss *infrav1alpha1.OpenStackServer, cluster *clusterv1.Cluster) (ctrl.Result, error) {
	if !util.IsControlPlaneMachine(machine) || r.Members == nil || cluster == nil {
		osm.Status.APIServerLoadBalancerID = nil
		conditions.MarkTrue(osm, infrav1.APIServerIngressReadyCondition, "not a control-plane machine", infrav1.NotRequiredReason)
		return ctrl.Result{}, nil
	}
	if !provisioned(osm) || !capiconditions.IsTrue(oss, infrav1.ReadyCondition) {
		conditions.MarkFalse(osm, infrav1.APIServerIngressReadyCondition, infrav1.WaitingForServerReason, "waiting for the server")
		return ctrl.Result{}, nil
	}
	osc, err := r.infraCluster(ctx, cluster)
	if err != nil {
		return ctrl.Result{}, err
	}
	lbID, lbName, lbReady := apiLoadBalancer(osc)
	if ptr.Deref(osm.Status.APIServerLoadBalancerID, "") != lbID {
		// Not (or no longer) known to be a member of the load balancer in
		// place: the recorded one was replaced.
		osm.Status.APIServerLoadBalancerID = nil
	}
	if lbID != "" && !lbReady {
		// Its pools may not exist yet; the OpenStackCluster watch brings
		// the next pass once it is ready.
		conditions.MarkFalse(osm, infrav1.APIServerIngressReadyCondition, infrav1.WaitingForAPILoadBalancerReason,
			fmt.Sprintf("waiting for the cluster's API load balancer %s to be ready before joining it", lbName))
		return ctrl.Result{}, nil
	}
	if c := capiconditions.Get(osm, infrav1.APIServerIngressReadyCondition); c != nil && c.Status == metav1.ConditionTrue &&
		c.ObservedGeneration == osm.Generation && ptr.Deref(osm.Status.APIServerLoadBalancerID, "") == lbID {
		return ctrl.Result{}, nil
	}
	m, err := r.Members.Ensure(ctx, osm.Name, oss, cluster)
	if err != nil {
		res, rerr, _ := conditions.Outcome(osm, infrav1.APIServerIngressReadyCondition, err)
		return res, rerr
	}
	osm.Status.APIServerLoadBalancerID = nil
	if m.LoadBalancerID != "" {
		osm.Status.APIServerLoadBalancerID = ptr.To(m.LoadBalancerID)
	}
	if m.NotRequired {
		conditions.MarkTrue(osm, infrav1.APIServerIngressReadyCondition, m.Message, infrav1.NotRequiredReason)
	} else {
		conditions.MarkTrue(osm, infrav1.APIServerIngressReadyCondition, m.Message)
	}
	return ctrl.Result{}, nil
}
