package openstackcluster

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/pools"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	capiconditions "sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/clients"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/cluster"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/scope"
	"github.com/ocp-capi/ocp-capi/internal/openstack/controllers/identity"
	"github.com/ocp-capi/ocp-capi/internal/openstack/controllers/openstackmachine"
)

// Members puts control-plane machines behind the API endpoint: members of
// the load balancer's pools, or holders of the API floating IP. It is the
// OpenStackMachine controller's openstackmachine.Members.
type Members struct {
	Client client.Client
	Scopes *identity.Factory
}

func memberAddress(oss *infrav1alpha1.OpenStackServer) string {
	for _, a := range oss.Status.Addresses {
		if a.Type == clusterv1.MachineInternalIP {
			return a.Address
		}
	}
	return ""
}

func (ms *Members) scopeFor(ctx context.Context, osc *infrav1.OpenStackCluster) (scope.Scope, error) {
	cs, err := ms.Scopes.For(ctx, osc.Namespace, osc.Spec.IdentityRef)
	if err != nil {
		return scope.Scope{}, err
	}
	return scope.Scope{Clients: cs, Log: ctrl.LoggerFrom(ctx)}, nil
}

// Ensure makes the machine reachable behind the API endpoint: a member of
// every pool of the load balancer in the cluster's status (the one it
// returns), or the holder of the API floating IP.
func (ms *Members) Ensure(ctx context.Context, machine string, oss *infrav1alpha1.OpenStackServer, cl *clusterv1.Cluster) (openstackmachine.Membership, error) {
	osc, err := infraCluster(ctx, ms.Client, cl)
	if err != nil || osc == nil {
		return openstackmachine.Membership{Message: "the cluster's infrastructure is not an OpenStackCluster", NotRequired: true}, err
	}
	req := request(osc)
	lb := osc.Status.APIServerLoadBalancer
	wantFIP := lb == nil && osc.Status.ExternalNetwork != nil && osc.Spec.ControlPlaneEndpoint != nil
	if lb == nil && !wantFIP {
		return openstackmachine.Membership{Message: "the API endpoint needs no machine-side setup", NotRequired: true}, nil
	}
	s, err := ms.scopeFor(ctx, osc)
	if err != nil {
		return openstackmachine.Membership{}, err
	}
	if lb != nil {
		if err := ms.joinPools(ctx, s, osc, req, machine, oss); err != nil {
			return openstackmachine.Membership{}, err
		}
		return openstackmachine.Membership{Message: fmt.Sprintf("member of load balancer %s", lb.Name), LoadBalancerID: lb.ID}, nil
	}

	// Floating IP endpoint: the first control-plane machine holds it; when
	// that machine goes, its port goes and the next one takes it.
	if oss.Status.Resources == nil || len(oss.Status.Resources.Ports) == 0 {
		return openstackmachine.Membership{}, scope.Wait(infrav1.WaitingForServerReason, 0, "waiting for the server's ports")
	}
	list, err := s.Clients.NetworkInfra.ListFloatingIPs(ctx, floatingips.ListOpts{FloatingIP: osc.Spec.ControlPlaneEndpoint.Host, FloatingNetworkID: osc.Status.ExternalNetwork.ID})
	if err != nil {
		return openstackmachine.Membership{}, clients.Classify(err, "looking up the API floating IP")
	}
	if len(list) != 1 {
		return openstackmachine.Membership{Message: "the API endpoint is not a floating IP", NotRequired: true}, nil
	}
	fip := list[0]
	mine := oss.Status.Resources.Ports[0].ID
	switch fip.PortID {
	case mine:
		return openstackmachine.Membership{Message: "holds the API floating IP " + fip.FloatingIP}, nil
	case "":
		if _, err := s.Clients.NetworkInfra.AssociateFloatingIP(ctx, fip.ID, mine); err != nil {
			return openstackmachine.Membership{}, clients.Classify(err, "attaching the API floating IP")
		}
		return openstackmachine.Membership{Message: "holds the API floating IP " + fip.FloatingIP}, nil
	}
	return openstackmachine.Membership{Message: "the API floating IP is held by another control-plane machine"}, nil
}

// joinPools makes the machine a member of every pool of the cluster's
// load balancer. Every forwarded port must have its pool: a load balancer
// whose pools are not all there yet (being rebuilt) is waited for rather
// than half joined, since a membership once recorded is not checked again
// until the load balancer changes.
func (ms *Members) joinPools(ctx context.Context, s scope.Scope, osc *infrav1.OpenStackCluster, req cluster.Request, machine string, oss *infrav1alpha1.OpenStackServer) error {
	lb := osc.Status.APIServerLoadBalancer
	addr := memberAddress(oss)
	if addr == "" {
		return scope.Wait(infrav1.WaitingForServerReason, 0, "waiting for the server's address")
	}
	ps, err := s.Clients.LoadBalancer.ListPools(ctx, pools.ListOpts{LoadbalancerID: lb.ID})
	if err != nil {
		return clients.Classify(err, "listing the pools of load balancer "+lb.Name)
	}
	missing := map[int]bool{}
	for _, p := range req.ForwardedPorts() {
		missing[p] = true
	}
	for _, p := range ps {
		port := cluster.PoolPort(req, p.Name)
		if port == 0 {
			continue
		}
		delete(missing, port)
		members, err := s.Clients.LoadBalancer.ListMembers(ctx, p.ID)
		if err != nil {
			return clients.Classify(err, "listing the members of pool "+p.Name)
		}
		found := false
		for _, m := range members {
			if isMember(m.Name, p.Name, machine) {
				found = true
			}
		}
		if found {
			continue
		}
		opts := pools.CreateMemberOpts{Name: machine, Address: addr, ProtocolPort: port}
		if n := osc.Status.Network; n != nil && len(n.Subnets) > 0 {
			opts.SubnetID = n.Subnets[0].ID
		}
		if _, err := s.Clients.LoadBalancer.CreateMember(ctx, p.ID, opts); err != nil {
			// 409 while Octavia applies the previous change: retried.
			return clients.Classify(err, fmt.Sprintf("adding %s to pool %s", machine, p.Name))
		}
		s.Log.Info("Added load balancer member", "pool", p.Name, "member", machine, "address", addr)
	}
	if len(missing) > 0 {
		return scope.Wait(infrav1.WaitingForAPILoadBalancerReason, lbRetry, "load balancer %s has no pool yet for port(s) %v", lb.Name, sortedPorts(missing))
	}
	return nil
}

// isMember tells whether the pool member named member is the machine's:
// named after the machine, or as CAPO names members (<pool>-<machine>,
// its pools being <load balancer>-<port>), so that the members of a
// cluster taken over from CAPO are kept rather than duplicated, and
// removed with their machine.
func isMember(member, pool, machine string) bool {
	return member == machine || member == pool+"-"+machine
}

// lbRetry is how soon a machine looks again at a load balancer whose pools
// are not all there.
const lbRetry = 5 * time.Second

func sortedPorts(m map[int]bool) []int {
	out := make([]int, 0, len(m))
	for p := range m {
		out = append(out, p)
	}
	sort.Ints(out)
	return out
}

// Remove takes the machine out of the API endpoint before it goes: out of
// the load balancer's pools, or, when it holds the API floating IP, hands
// the floating IP to another ready control-plane machine (or detaches it).
func (ms *Members) Remove(ctx context.Context, machine string, cl *clusterv1.Cluster) error {
	if cl == nil {
		return nil
	}
	osc, err := infraCluster(ctx, ms.Client, cl)
	if err != nil || osc == nil {
		return err
	}
	if osc.Status.APIServerLoadBalancer == nil {
		return ms.handOverFloatingIP(ctx, osc, cl, machine)
	}
	s, err := ms.scopeFor(ctx, osc)
	if err != nil {
		return err
	}
	lb := osc.Status.APIServerLoadBalancer
	ps, err := s.Clients.LoadBalancer.ListPools(ctx, pools.ListOpts{LoadbalancerID: lb.ID})
	if err != nil {
		if e := clients.Classify(err, ""); e.Reason == clients.ReasonNotFound {
			return nil
		}
		return clients.Classify(err, "listing the pools of load balancer "+lb.Name)
	}
	for _, p := range ps {
		members, err := s.Clients.LoadBalancer.ListMembers(ctx, p.ID)
		if err != nil {
			return clients.Classify(err, "listing the members of pool "+p.Name)
		}
		for _, m := range members {
			if !isMember(m.Name, p.Name, machine) {
				continue
			}
			if err := s.Clients.LoadBalancer.DeleteMember(ctx, p.ID, m.ID); err != nil {
				if e := clients.Classify(err, "removing "+machine+" from pool "+p.Name); e.Reason != clients.ReasonNotFound {
					return e
				}
			}
		}
	}
	return nil
}

// handOverFloatingIP moves the API floating IP from a leaving machine to
// another ready control-plane machine, so the API stays reachable.
func (ms *Members) handOverFloatingIP(ctx context.Context, osc *infrav1.OpenStackCluster, cl *clusterv1.Cluster, leaving string) error {
	if osc.Status.ExternalNetwork == nil || osc.Spec.ControlPlaneEndpoint == nil || osc.Spec.ControlPlaneEndpoint.Host == "" {
		return nil
	}
	mine := &infrav1alpha1.OpenStackServer{}
	if err := ms.Client.Get(ctx, client.ObjectKey{Namespace: osc.Namespace, Name: leaving}, mine); err != nil {
		return client.IgnoreNotFound(err)
	}
	if mine.Status.Resources == nil || len(mine.Status.Resources.Ports) == 0 {
		return nil
	}
	s, err := ms.scopeFor(ctx, osc)
	if err != nil {
		return err
	}
	list, err := s.Clients.NetworkInfra.ListFloatingIPs(ctx, floatingips.ListOpts{FloatingIP: osc.Spec.ControlPlaneEndpoint.Host, FloatingNetworkID: osc.Status.ExternalNetwork.ID})
	if err != nil {
		return clients.Classify(err, "looking up the API floating IP")
	}
	if len(list) != 1 || list[0].PortID != mine.Status.Resources.Ports[0].ID {
		return nil
	}
	next := ms.nextHolder(ctx, cl, leaving)
	if _, err := s.Clients.NetworkInfra.AssociateFloatingIP(ctx, list[0].ID, next); err != nil {
		return clients.Classify(err, "handing over the API floating IP")
	}
	s.Log.Info("Handed over the API floating IP", "address", list[0].FloatingIP, "from", leaving, "toPort", next)
	return nil
}

// nextHolder is the first port of another ready, not deleting
// control-plane machine of the cluster, or "" (detach).
func (ms *Members) nextHolder(ctx context.Context, cl *clusterv1.Cluster, leaving string) string {
	machines := &clusterv1.MachineList{}
	if err := ms.Client.List(ctx, machines, client.InNamespace(cl.Namespace),
		client.MatchingLabels{clusterv1.ClusterNameLabel: cl.Name}, client.HasLabels{clusterv1.MachineControlPlaneLabel}); err != nil {
		return ""
	}
	sort.Slice(machines.Items, func(a, b int) bool { return machines.Items[a].Name < machines.Items[b].Name })
	for _, m := range machines.Items {
		name := m.Spec.InfrastructureRef.Name
		if name == "" || name == leaving || !m.DeletionTimestamp.IsZero() {
			continue
		}
		oss := &infrav1alpha1.OpenStackServer{}
		if err := ms.Client.Get(ctx, client.ObjectKey{Namespace: cl.Namespace, Name: name}, oss); err != nil {
			continue
		}
		if oss.DeletionTimestamp.IsZero() && capiconditions.IsTrue(oss, infrav1.ReadyCondition) &&
			oss.Status.Resources != nil && len(oss.Status.Resources.Ports) > 0 {
			return oss.Status.Resources.Ports[0].ID
		}
	}
	return ""
}
