package openstackcluster

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/conditions"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/cluster"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/scope"
)

// reconcileDelete removes the cluster's infrastructure in dependency
// order: machines gone, then the bastion, the load balancer, the floating
// IPs, the router, the ports left on the network, the network, and the
// security groups. Each step shows in Deleting (and so in Ready). Every
// step finds its resources by name, so a lost status does not matter.
func (r *Reconciler) reconcileDelete(ctx context.Context, osc *infrav1.OpenStackCluster, c *clusterv1.Cluster) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(osc, infrav1.OpenStackClusterFinalizer) {
		return ctrl.Result{}, nil
	}
	step := func(msg string) {
		conditions.MarkTrue(osc, clusterv1.DeletingCondition, msg, clusterv1.DeletingReason)
	}

	// 1. Machines first: their ports are on the network and in the groups.
	clusterName := osc.Name
	if c != nil {
		clusterName = c.Name
	}
	machines := &infrav1.OpenStackMachineList{}
	if err := r.Client.List(ctx, machines, client.InNamespace(osc.Namespace), client.MatchingLabels{clusterv1.ClusterNameLabel: clusterName}); err != nil {
		return ctrl.Result{}, err
	}
	if n := len(machines.Items); n > 0 {
		step(fmt.Sprintf("waiting for %d OpenStackMachine(s) to be deleted", n))
		conditions.MarkFalse(osc, infrav1.NetworkReadyCondition, infrav1.WaitingForMachinesReason, "deletion waits for the machines")
		return ctrl.Result{}, nil
	}

	clientSet, err := r.Scopes.For(ctx, osc.Namespace, osc.Spec.IdentityRef)
	if err != nil {
		// Without credentials nothing can be deleted; never drop the
		// finalizer and leak the network.
		return r.deleteOutcome(osc, "reading the identity", err)
	}
	s := scope.Scope{Clients: clientSet, Log: ctrl.LoggerFrom(ctx)}
	req := request(osc)

	// 2. The bastion. Its server's deletion needs no image resolution, so
	// a bastion whose image is gone does not block this.
	oss := &infrav1alpha1.OpenStackServer{}
	err = r.Client.Get(ctx, client.ObjectKey{Namespace: osc.Namespace, Name: BastionName(osc)}, oss)
	switch {
	case err == nil:
		if oss.DeletionTimestamp.IsZero() {
			if err := r.Client.Delete(ctx, oss); err != nil && !apierrors.IsNotFound(err) {
				return ctrl.Result{}, err
			}
		}
		step("waiting for the bastion to be deleted")
		conditions.MarkFalse(osc, infrav1.BastionReadyCondition, infrav1.BastionDeletingReason, "the cluster is being deleted")
		return ctrl.Result{}, nil
	case !apierrors.IsNotFound(err):
		return ctrl.Result{}, err
	}
	// Only what the cluster used (by its spec and status) is looked up:
	// the floating-IP, router and load-balancer APIs are optional in
	// OpenStack, and a cluster that never needed one must be deletable
	// on a cloud without it (docs/openstack/cluster.md, Deletion).
	complete := osc.Status.Initialization != nil && ptr.Deref(osc.Status.Initialization.Provisioned, false)
	if osc.Spec.Bastion != nil && req.UsesFloatingIPs(osc.Status.ExternalNetwork, complete) {
		if err := cluster.DeleteFloatingIPs(ctx, s, req, req.BastionFloatingIPDescription(), userBastionFIP(osc)); err != nil {
			return r.deleteOutcome(osc, "releasing the bastion's floating IP", err)
		}
	}
	osc.Status.Bastion = nil

	// 3. The load balancer (listeners, pools, members with it) and its VIP
	// port.
	lbID := ""
	if lb := osc.Status.APIServerLoadBalancer; lb != nil {
		lbID = lb.ID
	}
	if useLB, _ := req.UseLoadBalancer(s); useLB || lbID != "" {
		step("deleting the API load balancer")
		if _, err = cluster.DeleteLoadBalancer(ctx, s, req, lbID); err != nil {
			return r.deleteOutcome(osc, "deleting the load balancer", err)
		}
	}
	osc.Status.APIServerLoadBalancer = nil

	// 4. The API floating IP (a user-given one is only detached).
	var userAPIFIP string
	if a := osc.Spec.APIServer; a != nil {
		userAPIFIP = ptr.Deref(a.FloatingIP, "")
	}
	if req.APIFloatingIPPossible(osc.Status.ExternalNetwork, complete) {
		if err := cluster.DeleteFloatingIPs(ctx, s, req, req.APIFloatingIPDescription(), userAPIFIP); err != nil {
			return r.deleteOutcome(osc, "releasing the API floating IP", err)
		}
	}

	// 5. The router.
	step("deleting the router")
	subnetID := ""
	if n := osc.Status.Network; n != nil && len(n.Subnets) > 0 {
		subnetID = n.Subnets[0].ID
	} else if len(osc.Spec.ManagedSubnets) > 0 {
		subnetID, err = managedSubnetID(ctx, s, req)
		if err != nil {
			return r.deleteOutcome(osc, "looking up the subnet", err)
		}
	}
	if err := cluster.DeleteRouter(ctx, s, req, subnetID); err != nil {
		return r.deleteOutcome(osc, "deleting the router", err)
	}
	osc.Status.Router = nil

	// 6. Ports left on the network, then the network.
	step("deleting the network")
	if err := cluster.DeleteNetwork(ctx, s, req); err != nil {
		return r.deleteOutcome(osc, "deleting the network", err)
	}
	osc.Status.Network = nil

	// 7. Security groups.
	step("deleting the security groups")
	if err := cluster.DeleteSecurityGroups(ctx, s, req); err != nil {
		return r.deleteOutcome(osc, "deleting the security groups", err)
	}
	osc.Status.ControlPlaneSecurityGroup, osc.Status.WorkerSecurityGroup, osc.Status.BastionSecurityGroup = nil, nil, nil

	r.Recorder.Eventf(osc, nil, corev1.EventTypeNormal, "Deleted", "Delete", "Cluster infrastructure deleted")
	conditions.MarkTrue(osc, clusterv1.DeletingCondition, "", clusterv1.DeletionCompletedReason)
	controllerutil.RemoveFinalizer(osc, infrav1.OpenStackClusterFinalizer)
	return ctrl.Result{}, nil
}

// deleteOutcome reports a deletion step that failed or waits: Deleting
// stays True, its reason saying whether the step waits, is retried or
// failed (conditions.DeleteOutcome), so Ready shows what blocks deletion.
func (r *Reconciler) deleteOutcome(osc *infrav1.OpenStackCluster, what string, err error) (ctrl.Result, error) {
	res, rerr, _ := conditions.DeleteOutcome(osc, what, err)
	return res, rerr
}

// managedSubnetID finds the managed subnet by name (status lost).
func managedSubnetID(ctx context.Context, s scope.Scope, req cluster.Request) (string, error) {
	net, err := cluster.LookupManagedNetwork(ctx, s, req)
	if err != nil || net == nil || len(net.Subnets) == 0 {
		return "", err
	}
	return net.Subnets[0].ID, nil
}
