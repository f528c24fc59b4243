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
	"github.com/ocp-capi/ocp-capi/internal/skeleton"
)

// reconcileDelete removes the cluster's infrastructure in dependency
// order, one phase per step: machines gone, then the bastion, the load
// balancer, the floating IPs, the router, the ports left on the network,
// the network, and the security groups. Each step shows in Deleting (and
// so in Ready). Every step finds its resources by name, so a lost status
// does not matter.
func (r *Reconciler) reconcileDelete(ctx context.Context, osc *infrav1.OpenStackCluster, c *clusterv1.Cluster) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(osc, infrav1.OpenStackClusterFinalizer) {
		return ctrl.Result{}, nil
	}
	return skeleton.RunPhases(ctx, newClusterScope(osc, c),
		r.waitForMachines,
		r.connectForDeletion,
		r.deleteBastionServer,
		r.releaseBastionFloatingIP,
		r.deleteAPILoadBalancer,
		r.releaseAPIFloatingIP,
		r.deleteRouter,
		r.deleteNetwork,
		r.deleteSecurityGroups,
		r.removeFinalizer,
	)
}

// deleting shows the step deletion is at in Deleting.
func deleting(osc *infrav1.OpenStackCluster, msg string) {
	conditions.MarkTrue(osc, clusterv1.DeletingCondition, msg, clusterv1.DeletingReason)
}

// waitForMachines holds deletion until the cluster's machines are gone:
// their ports are on the network and in the groups.
func (r *Reconciler) waitForMachines(ctx context.Context, s *clusterScope) (ctrl.Result, error) {
	osc := s.osc
	clusterName := osc.Name
	if s.capiCluster != nil {
		clusterName = s.capiCluster.Name
	}
	machines := &infrav1.OpenStackMachineList{}
	if err := r.Client.List(ctx, machines, client.InNamespace(osc.Namespace), client.MatchingLabels{clusterv1.ClusterNameLabel: clusterName}); err != nil {
		return skeleton.Stop(ctrl.Result{}, err)
	}
	if n := len(machines.Items); n > 0 {
		deleting(osc, fmt.Sprintf("waiting for %d OpenStackMachine(s) to be deleted", n))
		conditions.MarkFalse(osc, infrav1.NetworkReadyCondition, infrav1.WaitingForMachinesReason, "deletion waits for the machines")
		return skeleton.Stop(ctrl.Result{}, nil)
	}
	return ctrl.Result{}, nil
}

// connectForDeletion gets the clients. Without credentials nothing can be
// deleted; the finalizer stays rather than leak the network.
func (r *Reconciler) connectForDeletion(ctx context.Context, s *clusterScope) (ctrl.Result, error) {
	if err := r.connect(ctx, s); err != nil {
		return skeleton.Stop(r.deleteOutcome(s.osc, "reading the identity", err))
	}
	return ctrl.Result{}, nil
}

// deleteBastionServer deletes the bastion's OpenStackServer and waits for
// it to go. Its server's deletion needs no image resolution, so a bastion
// whose image is gone does not block this.
func (r *Reconciler) deleteBastionServer(ctx context.Context, s *clusterScope) (ctrl.Result, error) {
	osc := s.osc
	oss := &infrav1alpha1.OpenStackServer{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: osc.Namespace, Name: BastionName(osc)}, oss)
	switch {
	case apierrors.IsNotFound(err):
		return ctrl.Result{}, nil
	case err != nil:
		return skeleton.Stop(ctrl.Result{}, err)
	}
	if oss.DeletionTimestamp.IsZero() {
		if err := r.Client.Delete(ctx, oss); err != nil && !apierrors.IsNotFound(err) {
			return skeleton.Stop(ctrl.Result{}, err)
		}
	}
	deleting(osc, "waiting for the bastion to be deleted")
	conditions.MarkFalse(osc, infrav1.BastionReadyCondition, infrav1.BastionDeletingReason, "the cluster is being deleted")
	return skeleton.Stop(ctrl.Result{}, nil)
}

// releaseBastionFloatingIP releases the bastion's floating IP (a
// user-given one is only detached).
//
// Only what the cluster used (by its spec and status) is looked up from
// here on: the floating-IP, router and load-balancer APIs are optional in
// OpenStack, and a cluster that never needed one must be deletable on a
// cloud without it (docs/openstack/cluster.md, Deletion).
func (r *Reconciler) releaseBastionFloatingIP(ctx context.Context, s *clusterScope) (ctrl.Result, error) {
	osc := s.osc
	if osc.Spec.Bastion != nil && s.req.UsesFloatingIPs(osc.Status.ExternalNetwork, provisioned(osc)) {
		if err := cluster.DeleteFloatingIPs(ctx, s.cloud, s.req, s.req.BastionFloatingIPDescription(), userBastionFIP(osc)); err != nil {
			return skeleton.Stop(r.deleteOutcome(osc, "releasing the bastion's floating IP", err))
		}
		if err := releaseCAPOBastionFIP(ctx, s.cloud, osc); err != nil {
			return skeleton.Stop(r.deleteOutcome(osc, "releasing the bastion's floating IP", err))
		}
	}
	osc.Status.Bastion = nil
	return ctrl.Result{}, nil
}

// deleteAPILoadBalancer deletes the load balancer (listeners, pools and
// members with it) and its VIP port.
func (r *Reconciler) deleteAPILoadBalancer(ctx context.Context, s *clusterScope) (ctrl.Result, error) {
	osc := s.osc
	lbID := ""
	if lb := osc.Status.APIServerLoadBalancer; lb != nil {
		lbID = lb.ID
	}
	if useLB, _ := s.req.UseLoadBalancer(s.cloud); useLB || lbID != "" {
		deleting(osc, "deleting the API load balancer")
		if _, err := cluster.DeleteLoadBalancer(ctx, s.cloud, s.req, lbID); err != nil {
			return skeleton.Stop(r.deleteOutcome(osc, "deleting the load balancer", err))
		}
	}
	osc.Status.APIServerLoadBalancer = nil
	return ctrl.Result{}, nil
}

// releaseAPIFloatingIP releases the API floating IP (a user-given one is
// only detached).
func (r *Reconciler) releaseAPIFloatingIP(ctx context.Context, s *clusterScope) (ctrl.Result, error) {
	osc := s.osc
	var userAPIFIP string
	if a := osc.Spec.APIServer; a != nil {
		userAPIFIP = ptr.Deref(a.FloatingIP, "")
	}
	if s.req.APIFloatingIPPossible(osc.Status.ExternalNetwork, provisioned(osc)) {
		if err := cluster.DeleteFloatingIPs(ctx, s.cloud, s.req, s.req.APIFloatingIPDescription(), userAPIFIP); err != nil {
			return skeleton.Stop(r.deleteOutcome(osc, "releasing the API floating IP", err))
		}
		if err := r.releaseCAPOAPIFloatingIP(ctx, s, userAPIFIP); err != nil {
			return skeleton.Stop(r.deleteOutcome(osc, "releasing CAPO's API floating IP", err))
		}
	}
	return ctrl.Result{}, nil
}

// releaseCAPOAPIFloatingIP releases the API floating IP of a cluster
// without a load balancer taken over from CAPO: CAPO allocated it with its
// own description, which this provider's lookup by description does not
// find, and made it the endpoint. One lookup, for a cluster without a
// load balancer whose endpoint is not a user-given floating IP.
func (r *Reconciler) releaseCAPOAPIFloatingIP(ctx context.Context, s *clusterScope, userAPIFIP string) error {
	ep := s.osc.Spec.ControlPlaneEndpoint
	if ep == nil || ep.Host == "" || ep.Host == userAPIFIP {
		return nil
	}
	if useLB, _ := s.req.UseLoadBalancer(s.cloud); useLB {
		return nil
	}
	return cluster.DeleteCAPOFloatingIP(ctx, s.cloud, s.req, ep.Host)
}

// deleteRouter deletes the cluster's router, or takes the subnet off a
// router that is not ours.
func (r *Reconciler) deleteRouter(ctx context.Context, s *clusterScope) (ctrl.Result, error) {
	osc := s.osc
	deleting(osc, "deleting the router")
	subnetID := ""
	if n := osc.Status.Network; n != nil && len(n.Subnets) > 0 {
		subnetID = n.Subnets[0].ID
	} else if len(osc.Spec.ManagedSubnets) > 0 {
		var err error
		if subnetID, err = managedSubnetID(ctx, s.cloud, s.req); err != nil {
			return skeleton.Stop(r.deleteOutcome(osc, "looking up the subnet", err))
		}
	}
	if err := cluster.DeleteRouter(ctx, s.cloud, s.req, subnetID); err != nil {
		return skeleton.Stop(r.deleteOutcome(osc, "deleting the router", err))
	}
	osc.Status.Router = nil
	return ctrl.Result{}, nil
}

// deleteNetwork deletes the ports left on the network, then the network.
func (r *Reconciler) deleteNetwork(ctx context.Context, s *clusterScope) (ctrl.Result, error) {
	deleting(s.osc, "deleting the network")
	if err := cluster.DeleteNetwork(ctx, s.cloud, s.req); err != nil {
		return skeleton.Stop(r.deleteOutcome(s.osc, "deleting the network", err))
	}
	s.osc.Status.Network = nil
	return ctrl.Result{}, nil
}

// deleteSecurityGroups deletes the managed security groups.
func (r *Reconciler) deleteSecurityGroups(ctx context.Context, s *clusterScope) (ctrl.Result, error) {
	osc := s.osc
	deleting(osc, "deleting the security groups")
	if err := cluster.DeleteSecurityGroups(ctx, s.cloud, s.req); err != nil {
		return skeleton.Stop(r.deleteOutcome(osc, "deleting the security groups", err))
	}
	osc.Status.ControlPlaneSecurityGroup, osc.Status.WorkerSecurityGroup, osc.Status.BastionSecurityGroup = nil, nil, nil
	return ctrl.Result{}, nil
}

// removeFinalizer ends deletion: everything is gone.
func (r *Reconciler) removeFinalizer(_ context.Context, s *clusterScope) (ctrl.Result, error) {
	r.Recorder.Eventf(s.osc, nil, corev1.EventTypeNormal, "Deleted", "Delete", "Cluster infrastructure deleted")
	conditions.MarkTrue(s.osc, clusterv1.DeletingCondition, "", clusterv1.DeletionCompletedReason)
	controllerutil.RemoveFinalizer(s.osc, infrav1.OpenStackClusterFinalizer)
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
