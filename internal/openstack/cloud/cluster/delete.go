package cluster

import (
	"context"
	"strings"

	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/clients"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/scope"
)

// Deletion steps, in dependency order. Each is idempotent and finds its
// resources by name when the status lost them; a step that must wait for
// OpenStack returns a *scope.Progress naming it.

// DeleteLoadBalancer deletes the API load balancer with everything under
// it, then the VIP port Octavia may leave behind. lbID is the known ID,
// or "".
func DeleteLoadBalancer(ctx context.Context, s Scope, req Request, lbID string) (string, error) {
	if s.Clients.LoadBalancer == nil {
		return lbID, nil
	}
	name := req.LoadBalancerName()
	list, err := s.Clients.LoadBalancer.ListLoadBalancers(ctx, loadbalancers.ListOpts{Name: name, ProjectID: s.Clients.ProjectID})
	if err != nil {
		if serviceMissing(err) {
			s.Log.Info("The load-balancer endpoint answers 404; nothing to delete there", "loadBalancer", name)
			return "", nil
		}
		return lbID, clients.Classify(err, "looking up load balancer "+name)
	}
	for _, lb := range list {
		lbID = lb.ID
		if lb.ProvisioningStatus != "PENDING_DELETE" {
			if strings.HasPrefix(lb.ProvisioningStatus, "PENDING") {
				return lbID, scope.Wait(infrav1.LoadBalancerPendingReason, lbPoll, "load balancer %s is %s; deleting it once Octavia is done", name, lb.ProvisioningStatus)
			}
			if err := s.Clients.LoadBalancer.DeleteLoadBalancer(ctx, lb.ID); err != nil {
				if err := ignoreNotFound(err, "deleting load balancer "+name); err != nil {
					return lbID, err
				}
			}
			s.Log.Info("Deleting load balancer", "loadBalancer", name, "id", lb.ID)
		}
	}
	if len(list) > 0 {
		return lbID, scope.Wait(infrav1.DeletingReason, lbPoll, "waiting for Octavia to delete load balancer %s", name)
	}
	if lbID != "" {
		// Octavia names the VIP port octavia-lb-<id>; some drivers leave it.
		if err := deletePortsNamed(ctx, s, "octavia-lb-"+lbID); err != nil {
			return lbID, err
		}
	}
	return "", nil
}

func deletePortsNamed(ctx context.Context, s Scope, name string) error {
	list, err := s.Clients.Network.ListPorts(ctx, ports.ListOpts{Name: name})
	if err != nil {
		return clients.Classify(err, "looking up port "+name)
	}
	for _, p := range list {
		if err := ignoreNotFound(s.Clients.Network.DeletePort(ctx, p.ID), "deleting port "+name); err != nil {
			return err
		}
	}
	return nil
}

// serviceMissing reports whether a list request failed with 404: the
// collection itself does not exist, because the cloud lacks the optional
// API (Neutron without the layer-3 extension, an Octavia endpoint with
// nothing behind it). Nothing can exist there, so there is nothing to
// delete, and deletion must not wait for an API that will never come.
func serviceMissing(err error) bool {
	return clients.Classify(err, "").Reason == clients.ReasonNotFound
}

// DeleteFloatingIPs releases the floating IPs the provider allocated (by
// description); an address the user gave is kept.
func DeleteFloatingIPs(ctx context.Context, s Scope, req Request, description, userAddress string) error {
	list, err := s.Clients.NetworkInfra.ListFloatingIPs(ctx, floatingips.ListOpts{Description: description, ProjectID: s.Clients.ProjectID})
	if err != nil {
		if serviceMissing(err) {
			return nil
		}
		return clients.Classify(err, "looking up floating IPs")
	}
	for _, f := range list {
		if userAddress != "" && f.FloatingIP == userAddress {
			if f.PortID != "" {
				if _, err := s.Clients.NetworkInfra.AssociateFloatingIP(ctx, f.ID, ""); err != nil {
					if err := ignoreNotFound(err, "detaching floating IP "+f.FloatingIP); err != nil {
						return err
					}
				}
			}
			continue
		}
		if err := ignoreNotFound(s.Clients.NetworkInfra.DeleteFloatingIP(ctx, f.ID), "releasing floating IP "+f.FloatingIP); err != nil {
			return err
		}
		s.Log.Info("Released floating IP", "address", f.FloatingIP)
	}
	return nil
}

// DeleteRouter detaches the cluster's subnet and deletes the router the
// provider created (an existing router is only detached).
func DeleteRouter(ctx context.Context, s Scope, req Request, subnetID string) error {
	if !req.managed() {
		return nil
	}
	var q routers.ListOpts
	owned := req.Spec.Router == nil
	if owned {
		q = routers.ListOpts{Name: req.ResourceName(), ProjectID: s.Clients.ProjectID}
	} else if p := req.Spec.Router; p.ID != nil {
		q = routers.ListOpts{ID: *p.ID}
	} else {
		q = routers.ListOpts{Name: p.Filter.Name, ProjectID: p.Filter.ProjectID}
	}
	list, err := s.Clients.NetworkInfra.ListRouters(ctx, q)
	if err != nil {
		if serviceMissing(err) {
			return nil
		}
		return clients.Classify(err, "looking up the router")
	}
	for _, rt := range list {
		if subnetID != "" {
			if err := s.Clients.NetworkInfra.RemoveRouterInterface(ctx, rt.ID, subnetID); err != nil {
				e := clients.Classify(err, "detaching the subnet from router "+rt.Name)
				// 404: not attached (any more).
				if e.Reason != clients.ReasonNotFound {
					return e
				}
			}
		}
		if owned {
			if err := ignoreNotFound(s.Clients.NetworkInfra.DeleteRouter(ctx, rt.ID), "deleting router "+rt.Name); err != nil {
				return err
			}
			s.Log.Info("Deleted router", "router", rt.Name)
		}
	}
	return nil
}

// DeleteNetwork deletes the managed network: first the ports left on it
// (VIP ports, ports of servers deleted outside the provider), then the
// subnets with the network.
func DeleteNetwork(ctx context.Context, s Scope, req Request) error {
	if !req.managed() {
		return nil
	}
	name := req.ResourceName()
	list, err := s.Clients.Network.ListNetworks(ctx, networks.ListOpts{Name: name, ProjectID: s.Clients.ProjectID})
	if err != nil {
		return clients.Classify(err, "looking up network "+name)
	}
	for _, n := range list {
		left, err := s.Clients.Network.ListPorts(ctx, ports.ListOpts{NetworkID: n.ID})
		if err != nil {
			return clients.Classify(err, "listing the ports of network "+name)
		}
		for _, p := range left {
			// DHCP ports go with the network; router ports were detached.
			if p.DeviceOwner == "network:dhcp" {
				continue
			}
			if err := ignoreNotFound(s.Clients.Network.DeletePort(ctx, p.ID), "deleting port "+p.Name+" of network "+name); err != nil {
				return err
			}
		}
		if err := ignoreNotFound(s.Clients.NetworkInfra.DeleteNetwork(ctx, n.ID), "deleting network "+name); err != nil {
			return err
		}
		s.Log.Info("Deleted network", "network", name)
	}
	return nil
}

// DeleteSecurityGroups deletes the managed security groups. A group still
// used by a port answers 409; that is retried (the port goes first).
func DeleteSecurityGroups(ctx context.Context, s Scope, req Request) error {
	if req.Spec.ManagedSecurityGroups == nil {
		return nil
	}
	list, err := s.Clients.Network.ListSecurityGroups(ctx, groups.ListOpts{ProjectID: s.Clients.ProjectID})
	if err != nil {
		return clients.Classify(err, "listing security groups")
	}
	want := map[string]bool{}
	for _, role := range []infrav1.ManagedSecurityGroupName{infrav1.ManagedSecurityGroupControlPlane, infrav1.ManagedSecurityGroupWorker, infrav1.ManagedSecurityGroupBastion} {
		want[req.SecurityGroupName(role)] = true
	}
	// Rules that point at another managed group keep it in use; drop
	// every group's rules first.
	for _, g := range list {
		if !want[g.Name] {
			continue
		}
		for _, r := range g.Rules {
			if r.RemoteGroupID != "" {
				if err := ignoreNotFound(s.Clients.NetworkInfra.DeleteSecurityGroupRule(ctx, r.ID), "deleting a rule of "+g.Name); err != nil {
					return err
				}
			}
		}
	}
	for _, g := range list {
		if !want[g.Name] {
			continue
		}
		if err := ignoreNotFound(s.Clients.NetworkInfra.DeleteSecurityGroup(ctx, g.ID), "deleting security group "+g.Name); err != nil {
			return err
		}
		s.Log.Info("Deleted security group", "securityGroup", g.Name)
	}
	return nil
}

// DeleteCAPOFloatingIP releases the floating IP address if CAPO v0.14
// allocated it for this cluster (its description is CAPO's), for what was
// taken over from CAPO. One lookup.
func DeleteCAPOFloatingIP(ctx context.Context, s Scope, req Request, address string) error {
	list, err := s.Clients.NetworkInfra.ListFloatingIPs(ctx, floatingips.ListOpts{FloatingIP: address,
		Description: req.CAPODescription(), ProjectID: s.Clients.ProjectID})
	if err != nil {
		if serviceMissing(err) {
			return nil
		}
		return clients.Classify(err, "looking up floating IP "+address)
	}
	for _, f := range list {
		if err := ignoreNotFound(s.Clients.NetworkInfra.DeleteFloatingIP(ctx, f.ID), "releasing floating IP "+f.FloatingIP); err != nil {
			return err
		}
		s.Log.Info("Released CAPO's floating IP", "address", f.FloatingIP)
	}
	return nil
}
