package openstackcluster

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
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
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/cluster"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/scope"
	"github.com/ocp-capi/ocp-capi/internal/skeleton"
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
	if !provisioned(osc) {
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

func provisioned(osc *infrav1.OpenStackCluster) bool {
	return osc.Status.Initialization != nil && ptr.Deref(osc.Status.Initialization.Provisioned, false)
}

// reconcileNormal builds the cluster's infrastructure, one phase per step
// condition, in dependency order; a pass ends at the first step that is
// not done.
func (r *Reconciler) reconcileNormal(ctx context.Context, osc *infrav1.OpenStackCluster, c *clusterv1.Cluster) (ctrl.Result, error) {
	if controllerutil.AddFinalizer(osc, infrav1.OpenStackClusterFinalizer) {
		return ctrl.Result{}, nil
	}
	s := newClusterScope(osc, c)
	if err := r.connect(ctx, s); err != nil {
		res, rerr, _ := conditions.Outcome(osc, infrav1.NetworkReadyCondition, err)
		return res, rerr
	}

	// A settled cluster that still looks healthy costs one read. Anything
	// else (the read failed, or found the network gone or the load
	// balancer in ERROR) runs the full pass below, which reads what the
	// status names instead of trusting it: what is gone is recreated when
	// it is ours, or reported, and on the condition of the step it
	// belongs to. Reporting from here instead would disagree with the
	// full pass that the status write triggers, and the two would undo
	// each other for ever.
	if settled(osc) && r.healthy(ctx, s.cloud, osc) {
		return skeleton.RunPhases(ctx, s, r.reconcileBastion)
	}
	return skeleton.RunPhases(ctx, s,
		r.reconcileExternalNetwork,
		r.reconcileNetwork,
		r.reconcileRouter,
		r.reconcileSecurityGroups,
		r.reconcileFailureDomains,
		r.reconcileAPIEndpoint,
		r.reconcileProvisioned,
		r.reconcileBastion,
	)
}

// reconcileExternalNetwork finds the external network (for the router
// gateway and floating IPs).
func (r *Reconciler) reconcileExternalNetwork(ctx context.Context, s *clusterScope) (ctrl.Result, error) {
	ext, err := cluster.EnsureExternalNetwork(ctx, s.cloud, s.req, s.osc.Status.ExternalNetwork)
	if err != nil {
		return skeleton.Stop(r.outcome(s.osc, infrav1.NetworkReadyCondition, err))
	}
	s.osc.Status.ExternalNetwork = ext
	s.ext = ext
	return ctrl.Result{}, nil
}

// reconcileNetwork makes the cluster network and subnet exist (or finds
// the user's).
func (r *Reconciler) reconcileNetwork(ctx context.Context, s *clusterScope) (ctrl.Result, error) {
	osc := s.osc
	s.prevNet = osc.Status.Network.DeepCopy()
	net, err := cluster.EnsureNetwork(ctx, s.cloud, s.req, osc.Status.Network)
	if net != nil {
		osc.Status.Network = net
	}
	if err != nil {
		return skeleton.Stop(r.outcome(osc, infrav1.NetworkReadyCondition, err))
	}
	s.net = net
	if net == nil {
		conditions.MarkTrue(osc, infrav1.NetworkReadyCondition, "no cluster network: machines name their own", infrav1.NotRequiredReason)
	} else {
		conditions.MarkTrue(osc, infrav1.NetworkReadyCondition, fmt.Sprintf("network %s", net.Name))
	}
	return ctrl.Result{}, nil
}

// reconcileRouter gives a managed network its router. A network created
// anew needs the router's interface again: the router is then looked up
// as on a first pass.
func (r *Reconciler) reconcileRouter(ctx context.Context, s *clusterScope) (ctrl.Result, error) {
	osc := s.osc
	knownRouter := osc.Status.Router
	if s.prevNet != nil && !sameSubnets(s.prevNet, s.net) {
		knownRouter = nil
	}
	rt, err := cluster.EnsureRouter(ctx, s.cloud, s.req, s.net, s.ext, knownRouter)
	if err != nil {
		return skeleton.Stop(r.outcome(osc, infrav1.RouterReadyCondition, err))
	}
	osc.Status.Router = rt
	if rt == nil {
		conditions.MarkTrue(osc, infrav1.RouterReadyCondition, "no router is needed", infrav1.NotRequiredReason)
	} else {
		conditions.MarkTrue(osc, infrav1.RouterReadyCondition, fmt.Sprintf("router %s", rt.Name))
	}
	return ctrl.Result{}, nil
}

// reconcileSecurityGroups makes the managed security groups and their
// rules match the spec.
func (r *Reconciler) reconcileSecurityGroups(ctx context.Context, s *clusterScope) (ctrl.Result, error) {
	osc := s.osc
	sgs, err := cluster.EnsureSecurityGroups(ctx, s.cloud, s.req)
	if err != nil {
		return skeleton.Stop(r.outcome(osc, infrav1.SecurityGroupsReadyCondition, err))
	}
	osc.Status.ControlPlaneSecurityGroup, osc.Status.WorkerSecurityGroup, osc.Status.BastionSecurityGroup = sgs.ControlPlane, sgs.Worker, sgs.Bastion
	if osc.Spec.ManagedSecurityGroups == nil {
		conditions.MarkTrue(osc, infrav1.SecurityGroupsReadyCondition, "no managed security groups", infrav1.NotRequiredReason)
	} else {
		conditions.MarkTrue(osc, infrav1.SecurityGroupsReadyCondition, "")
	}
	return ctrl.Result{}, nil
}

// reconcileFailureDomains asks for the failure domains once; they are set
// before provisioned so CAPI core sees them with it.
func (r *Reconciler) reconcileFailureDomains(ctx context.Context, s *clusterScope) (ctrl.Result, error) {
	if len(s.osc.Status.FailureDomains) > 0 {
		return ctrl.Result{}, nil
	}
	fds, err := cluster.FailureDomains(ctx, s.cloud, s.req)
	if err != nil {
		return skeleton.Stop(r.outcome(s.osc, infrav1.APIEndpointReadyCondition, err))
	}
	s.osc.Status.FailureDomains = fds
	return ctrl.Result{}, nil
}

// reconcileAPIEndpoint makes the API reachable (load balancer, the user's
// endpoint, a floating IP or a fixed IP) and records the endpoint in the
// spec, as the CAPI contract asks.
func (r *Reconciler) reconcileAPIEndpoint(ctx context.Context, s *clusterScope) (ctrl.Result, error) {
	osc := s.osc
	ep, err := cluster.EnsureAPIEndpoint(ctx, s.cloud, s.req, s.net, s.ext, osc.Status.APIServerLoadBalancer)
	if ep != nil && ep.LoadBalancer != nil {
		osc.Status.APIServerLoadBalancer = ep.LoadBalancer
		if s.net != nil {
			osc.Status.APIServerLoadBalancer.LoadBalancerNetwork = s.net.DeepCopy()
		}
	}
	if err != nil {
		return skeleton.Stop(r.outcome(osc, infrav1.APIEndpointReadyCondition, err))
	}
	if osc.Spec.ControlPlaneEndpoint == nil || osc.Spec.ControlPlaneEndpoint.Host == "" {
		e := ep.ControlPlaneEndpoint()
		osc.Spec.ControlPlaneEndpoint = &e
	}
	conditions.MarkTrue(osc, infrav1.APIEndpointReadyCondition, fmt.Sprintf("%s:%d", osc.Spec.ControlPlaneEndpoint.Host, osc.Spec.ControlPlaneEndpoint.Port))
	return ctrl.Result{}, nil
}

// reconcileProvisioned sets status.initialization.provisioned once every
// infrastructure step is done (the bastion does not count).
func (r *Reconciler) reconcileProvisioned(_ context.Context, s *clusterScope) (ctrl.Result, error) {
	osc := s.osc
	if !provisioned(osc) {
		osc.Status.Initialization = &infrav1.OpenStackClusterInitializationStatus{Provisioned: ptr.To(true)}
		r.Recorder.Eventf(osc, nil, corev1.EventTypeNormal, "Provisioned", "Provision", "Cluster infrastructure is ready; API endpoint %s:%d",
			osc.Spec.ControlPlaneEndpoint.Host, osc.Spec.ControlPlaneEndpoint.Port)
	}
	return ctrl.Result{}, nil
}

// healthy is the one read of a settled cluster: its load balancer exists
// and is not in ERROR (a PENDING_UPDATE while members change is fine), or,
// without one, its network exists. Any failure, transient ones included,
// sends the pass through the full reconcile, which reports it on the
// right condition.
func (r *Reconciler) healthy(ctx context.Context, s scope.Scope, osc *infrav1.OpenStackCluster) bool {
	if lb := osc.Status.APIServerLoadBalancer; lb != nil && s.Clients.LoadBalancer != nil {
		got, err := s.Clients.LoadBalancer.GetLoadBalancer(ctx, lb.ID)
		return err == nil && got.ProvisioningStatus != "ERROR"
	}
	if n := osc.Status.Network; n != nil {
		_, err := s.Clients.NetworkInfra.GetNetwork(ctx, n.ID)
		return err == nil
	}
	return true
}

// sameSubnets reports whether the cluster network is still the one the
// status named.
func sameSubnets(prev, now *infrav1.NetworkStatusWithSubnets) bool {
	if now == nil || prev.ID != now.ID || len(prev.Subnets) != len(now.Subnets) {
		return false
	}
	for i := range prev.Subnets {
		if prev.Subnets[i].ID != now.Subnets[i].ID {
			return false
		}
	}
	return true
}

func (r *Reconciler) outcome(osc *infrav1.OpenStackCluster, step string, err error) (ctrl.Result, error) {
	res, rerr, terminal := conditions.Outcome(osc, step, err)
	if terminal {
		r.Recorder.Eventf(osc, nil, corev1.EventTypeWarning, capiconditions.Get(osc, step).Reason, "Reconcile", "%s", err.Error())
	}
	return res, rerr
}
