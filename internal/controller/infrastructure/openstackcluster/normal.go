package openstackcluster

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	capiconditions "sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/conditions"
	"github.com/ocp-capi/ocp-capi/internal/openstack/clients"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cluster"
	"github.com/ocp-capi/ocp-capi/internal/openstack/scope"
)

// deletionsOnly passes machine events that matter to a deleting cluster.
func deletionsOnly() predicate.Funcs {
	return predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
		UpdateFunc:  func(e event.UpdateEvent) bool { return !e.ObjectNew.GetDeletionTimestamp().IsZero() },
		DeleteFunc:  func(event.DeleteEvent) bool { return true },
	}
}

func request(osc *infrav1.OpenStackCluster) cluster.Request {
	return cluster.Request{Namespace: osc.Namespace, Name: osc.Name, Spec: &osc.Spec}
}

// settled reports whether every infrastructure step is done for the
// current spec: then a resync only checks that the network (or load
// balancer) still exists, which keeps a steady cluster to one OpenStack
// read.
func settled(osc *infrav1.OpenStackCluster) bool {
	if osc.Status.Initialization == nil || !ptr.Deref(osc.Status.Initialization.Provisioned, false) {
		return false
	}
	for _, t := range []string{infrav1.NetworkReadyCondition, infrav1.RouterReadyCondition, infrav1.SecurityGroupsReadyCondition, infrav1.APIEndpointReadyCondition} {
		c := capiconditions.Get(osc, t)
		if c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != osc.Generation {
			return false
		}
	}
	return true
}

func (r *Reconciler) reconcileNormal(ctx context.Context, osc *infrav1.OpenStackCluster, c *clusterv1.Cluster) (ctrl.Result, error) {
	if controllerutil.AddFinalizer(osc, infrav1.OpenStackClusterFinalizer) {
		return ctrl.Result{}, nil
	}
	clientSet, err := r.Scopes.For(ctx, osc.Namespace, osc.Spec.IdentityRef)
	if err != nil {
		res, rerr, _ := conditions.Outcome(osc, infrav1.NetworkReadyCondition, err)
		return res, rerr
	}
	s := scope.Scope{Clients: clientSet, Log: ctrl.LoggerFrom(ctx)}
	req := request(osc)

	if settled(osc) {
		if err := r.checkHealth(ctx, s, osc); err != nil {
			return r.outcome(osc, infrav1.NetworkReadyCondition, err)
		}
		return r.reconcileBastion(ctx, s, osc, c)
	}

	// External network (for the router gateway and floating IPs).
	ext, err := cluster.EnsureExternalNetwork(ctx, s, req, osc.Status.ExternalNetwork)
	if err != nil {
		return r.outcome(osc, infrav1.NetworkReadyCondition, err)
	}
	osc.Status.ExternalNetwork = ext

	// Network and subnet.
	net, err := cluster.EnsureNetwork(ctx, s, req, osc.Status.Network)
	if net != nil {
		osc.Status.Network = net
	}
	if err != nil {
		return r.outcome(osc, infrav1.NetworkReadyCondition, err)
	}
	if net == nil {
		conditions.MarkTrue(osc, infrav1.NetworkReadyCondition, "no cluster network: machines name their own", infrav1.NotRequiredReason)
	} else {
		conditions.MarkTrue(osc, infrav1.NetworkReadyCondition, fmt.Sprintf("network %s", net.Name))
	}

	// Router.
	rt, err := cluster.EnsureRouter(ctx, s, req, net, ext, osc.Status.Router)
	if err != nil {
		return r.outcome(osc, infrav1.RouterReadyCondition, err)
	}
	osc.Status.Router = rt
	if rt == nil {
		conditions.MarkTrue(osc, infrav1.RouterReadyCondition, "no router is needed", infrav1.NotRequiredReason)
	} else {
		conditions.MarkTrue(osc, infrav1.RouterReadyCondition, fmt.Sprintf("router %s", rt.Name))
	}

	// Security groups.
	sgs, err := cluster.EnsureSecurityGroups(ctx, s, req)
	if err != nil {
		return r.outcome(osc, infrav1.SecurityGroupsReadyCondition, err)
	}
	osc.Status.ControlPlaneSecurityGroup, osc.Status.WorkerSecurityGroup, osc.Status.BastionSecurityGroup = sgs.ControlPlane, sgs.Worker, sgs.Bastion
	if osc.Spec.ManagedSecurityGroups == nil {
		conditions.MarkTrue(osc, infrav1.SecurityGroupsReadyCondition, "no managed security groups", infrav1.NotRequiredReason)
	} else {
		conditions.MarkTrue(osc, infrav1.SecurityGroupsReadyCondition, "")
	}

	// Failure domains: asked once; set before provisioned so CAPI core
	// sees them with it.
	if len(osc.Status.FailureDomains) == 0 {
		fds, err := cluster.FailureDomains(ctx, s, req)
		if err != nil {
			return r.outcome(osc, infrav1.APIEndpointReadyCondition, err)
		}
		osc.Status.FailureDomains = fds
	}

	// API endpoint.
	ep, err := cluster.EnsureAPIEndpoint(ctx, s, req, net, ext, osc.Status.APIServerLoadBalancer)
	if ep != nil && ep.LoadBalancer != nil {
		osc.Status.APIServerLoadBalancer = ep.LoadBalancer
		if net != nil {
			osc.Status.APIServerLoadBalancer.LoadBalancerNetwork = net.DeepCopy()
		}
	}
	if err != nil {
		return r.outcome(osc, infrav1.APIEndpointReadyCondition, err)
	}
	if osc.Spec.ControlPlaneEndpoint == nil || osc.Spec.ControlPlaneEndpoint.Host == "" {
		e := ep.ControlPlaneEndpoint()
		osc.Spec.ControlPlaneEndpoint = &e
	}
	conditions.MarkTrue(osc, infrav1.APIEndpointReadyCondition, fmt.Sprintf("%s:%d", osc.Spec.ControlPlaneEndpoint.Host, osc.Spec.ControlPlaneEndpoint.Port))

	if osc.Status.Initialization == nil || !ptr.Deref(osc.Status.Initialization.Provisioned, false) {
		osc.Status.Initialization = &infrav1.OpenStackClusterInitializationStatus{Provisioned: ptr.To(true)}
		r.Recorder.Eventf(osc, nil, "Normal", "Provisioned", "Provision", "Cluster infrastructure is ready; API endpoint %s:%d",
			osc.Spec.ControlPlaneEndpoint.Host, osc.Spec.ControlPlaneEndpoint.Port)
	}
	return r.reconcileBastion(ctx, s, osc, c)
}

// checkHealth is the one read of a settled cluster: its load balancer, or
// its network.
func (r *Reconciler) checkHealth(ctx context.Context, s scope.Scope, osc *infrav1.OpenStackCluster) error {
	if lb := osc.Status.APIServerLoadBalancer; lb != nil && s.Clients.LoadBalancer != nil {
		got, err := s.Clients.LoadBalancer.GetLoadBalancer(ctx, lb.ID)
		if err != nil {
			return clients.Classify(err, "reading load balancer "+lb.Name)
		}
		if got.ProvisioningStatus == "ERROR" {
			return &clients.Error{Class: clients.Terminal, Reason: clients.ReasonInvalidSpec,
				Message: fmt.Sprintf("load balancer %s is in ERROR in Octavia", lb.Name)}
		}
		return nil
	}
	if n := osc.Status.Network; n != nil {
		if _, err := s.Clients.NetworkInfra.GetNetwork(ctx, n.ID); err != nil {
			return clients.Classify(err, "reading network "+n.Name)
		}
	}
	return nil
}

func (r *Reconciler) outcome(osc *infrav1.OpenStackCluster, step string, err error) (ctrl.Result, error) {
	res, rerr, terminal := conditions.Outcome(osc, step, err)
	if terminal {
		r.Recorder.Eventf(osc, nil, "Warning", capiconditions.Get(osc, step).Reason, "Reconcile", "%s", err.Error())
	}
	return res, rerr
}
