package clients

import (
	"context"

	"github.com/gophercloud/gophercloud/v2"
	lbflavors "github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/flavors"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/listeners"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/monitors"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/pools"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/external"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/rules"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
)

// NetworkInfra is the subset of Neutron used for a cluster's
// infrastructure (the Network interface covers what servers need).
type NetworkInfra interface {
	// ListExternalNetworks lists networks with router:external=true.
	ListExternalNetworks(ctx context.Context, opts networks.ListOpts) ([]networks.Network, error)
	GetNetwork(ctx context.Context, id string) (*networks.Network, error)
	CreateNetwork(ctx context.Context, opts networks.CreateOptsBuilder) (*networks.Network, error)
	DeleteNetwork(ctx context.Context, id string) error
	CreateSubnet(ctx context.Context, opts subnets.CreateOptsBuilder) (*subnets.Subnet, error)
	DeleteSubnet(ctx context.Context, id string) error

	ListRouters(ctx context.Context, opts routers.ListOpts) ([]routers.Router, error)
	CreateRouter(ctx context.Context, opts routers.CreateOptsBuilder) (*routers.Router, error)
	DeleteRouter(ctx context.Context, id string) error
	AddRouterInterface(ctx context.Context, routerID, subnetID string) error
	RemoveRouterInterface(ctx context.Context, routerID, subnetID string) error

	CreateSecurityGroup(ctx context.Context, opts groups.CreateOptsBuilder) (*groups.SecGroup, error)
	DeleteSecurityGroup(ctx context.Context, id string) error
	// CreateSecurityGroupRules creates several rules in one request.
	CreateSecurityGroupRules(ctx context.Context, opts []rules.CreateOpts) ([]rules.SecGroupRule, error)
	DeleteSecurityGroupRule(ctx context.Context, id string) error

	ListFloatingIPs(ctx context.Context, opts floatingips.ListOpts) ([]floatingips.FloatingIP, error)
	CreateFloatingIP(ctx context.Context, opts floatingips.CreateOptsBuilder) (*floatingips.FloatingIP, error)
	// AssociateFloatingIP points a floating IP at a port ("" detaches it).
	AssociateFloatingIP(ctx context.Context, id, portID string) (*floatingips.FloatingIP, error)
	// SetFloatingIPDescription changes a floating IP's description.
	SetFloatingIPDescription(ctx context.Context, id, description string) (*floatingips.FloatingIP, error)
	DeleteFloatingIP(ctx context.Context, id string) error
}

// LoadBalancer is the subset of Octavia used for the API load balancer.
type LoadBalancer interface {
	ListLoadBalancers(ctx context.Context, opts loadbalancers.ListOpts) ([]loadbalancers.LoadBalancer, error)
	GetLoadBalancer(ctx context.Context, id string) (*loadbalancers.LoadBalancer, error)
	CreateLoadBalancer(ctx context.Context, opts loadbalancers.CreateOptsBuilder) (*loadbalancers.LoadBalancer, error)
	// DeleteLoadBalancer deletes it with its listeners, pools and members.
	DeleteLoadBalancer(ctx context.Context, id string) error
	ListListeners(ctx context.Context, opts listeners.ListOpts) ([]listeners.Listener, error)
	CreateListener(ctx context.Context, opts listeners.CreateOptsBuilder) (*listeners.Listener, error)
	ListPools(ctx context.Context, opts pools.ListOpts) ([]pools.Pool, error)
	CreatePool(ctx context.Context, opts pools.CreateOptsBuilder) (*pools.Pool, error)
	ListMembers(ctx context.Context, poolID string) ([]pools.Member, error)
	CreateMember(ctx context.Context, poolID string, opts pools.CreateMemberOptsBuilder) (*pools.Member, error)
	DeleteMember(ctx context.Context, poolID, memberID string) error
	CreateMonitor(ctx context.Context, opts monitors.CreateOptsBuilder) (*monitors.Monitor, error)
	// ListFlavors lists Octavia's load balancer flavors.
	ListFlavors(ctx context.Context, opts lbflavors.ListOpts) ([]lbflavors.Flavor, error)
}

func (n *networkClient) ListExternalNetworks(ctx context.Context, opts networks.ListOpts) ([]networks.Network, error) {
	q := external.ListOptsExt{ListOptsBuilder: opts, External: &trueValue}
	return allPages(ctx, networks.List(n.c, q), networks.ExtractNetworks)
}

var trueValue = true

func (n *networkClient) GetNetwork(ctx context.Context, id string) (*networks.Network, error) {
	return networks.Get(ctx, n.c, id).Extract()
}

func (n *networkClient) CreateNetwork(ctx context.Context, opts networks.CreateOptsBuilder) (*networks.Network, error) {
	return networks.Create(ctx, n.c, opts).Extract()
}

func (n *networkClient) DeleteNetwork(ctx context.Context, id string) error {
	return networks.Delete(ctx, n.c, id).ExtractErr()
}

func (n *networkClient) CreateSubnet(ctx context.Context, opts subnets.CreateOptsBuilder) (*subnets.Subnet, error) {
	return subnets.Create(ctx, n.c, opts).Extract()
}

func (n *networkClient) DeleteSubnet(ctx context.Context, id string) error {
	return subnets.Delete(ctx, n.c, id).ExtractErr()
}

func (n *networkClient) ListRouters(ctx context.Context, opts routers.ListOpts) ([]routers.Router, error) {
	return allPages(ctx, routers.List(n.c, opts), routers.ExtractRouters)
}

func (n *networkClient) CreateRouter(ctx context.Context, opts routers.CreateOptsBuilder) (*routers.Router, error) {
	return routers.Create(ctx, n.c, opts).Extract()
}

func (n *networkClient) DeleteRouter(ctx context.Context, id string) error {
	return routers.Delete(ctx, n.c, id).ExtractErr()
}

func (n *networkClient) AddRouterInterface(ctx context.Context, routerID, subnetID string) error {
	_, err := routers.AddInterface(ctx, n.c, routerID, routers.AddInterfaceOpts{SubnetID: subnetID}).Extract()
	return err
}

func (n *networkClient) RemoveRouterInterface(ctx context.Context, routerID, subnetID string) error {
	_, err := routers.RemoveInterface(ctx, n.c, routerID, routers.RemoveInterfaceOpts{SubnetID: subnetID}).Extract()
	return err
}

func (n *networkClient) CreateSecurityGroup(ctx context.Context, opts groups.CreateOptsBuilder) (*groups.SecGroup, error) {
	return groups.Create(ctx, n.c, opts).Extract()
}

func (n *networkClient) DeleteSecurityGroup(ctx context.Context, id string) error {
	return groups.Delete(ctx, n.c, id).ExtractErr()
}

func (n *networkClient) CreateSecurityGroupRules(ctx context.Context, opts []rules.CreateOpts) ([]rules.SecGroupRule, error) {
	return rules.CreateBulk(ctx, n.c, opts).Extract()
}

func (n *networkClient) DeleteSecurityGroupRule(ctx context.Context, id string) error {
	return rules.Delete(ctx, n.c, id).ExtractErr()
}

func (n *networkClient) ListFloatingIPs(ctx context.Context, opts floatingips.ListOpts) ([]floatingips.FloatingIP, error) {
	return allPages(ctx, floatingips.List(n.c, opts), floatingips.ExtractFloatingIPs)
}

func (n *networkClient) CreateFloatingIP(ctx context.Context, opts floatingips.CreateOptsBuilder) (*floatingips.FloatingIP, error) {
	return floatingips.Create(ctx, n.c, opts).Extract()
}

func (n *networkClient) AssociateFloatingIP(ctx context.Context, id, portID string) (*floatingips.FloatingIP, error) {
	var port *string
	if portID != "" {
		port = &portID
	}
	return floatingips.Update(ctx, n.c, id, floatingips.UpdateOpts{PortID: port}).Extract()
}

func (n *networkClient) SetFloatingIPDescription(ctx context.Context, id, description string) (*floatingips.FloatingIP, error) {
	return floatingips.Update(ctx, n.c, id, floatingips.UpdateOpts{Description: &description}).Extract()
}

func (n *networkClient) DeleteFloatingIP(ctx context.Context, id string) error {
	return floatingips.Delete(ctx, n.c, id).ExtractErr()
}

type loadBalancerClient struct{ c *gophercloud.ServiceClient }

func (l *loadBalancerClient) ListLoadBalancers(ctx context.Context, opts loadbalancers.ListOpts) ([]loadbalancers.LoadBalancer, error) {
	return allPages(ctx, loadbalancers.List(l.c, opts), loadbalancers.ExtractLoadBalancers)
}

func (l *loadBalancerClient) GetLoadBalancer(ctx context.Context, id string) (*loadbalancers.LoadBalancer, error) {
	return loadbalancers.Get(ctx, l.c, id).Extract()
}

func (l *loadBalancerClient) CreateLoadBalancer(ctx context.Context, opts loadbalancers.CreateOptsBuilder) (*loadbalancers.LoadBalancer, error) {
	return loadbalancers.Create(ctx, l.c, opts).Extract()
}

func (l *loadBalancerClient) DeleteLoadBalancer(ctx context.Context, id string) error {
	return loadbalancers.Delete(ctx, l.c, id, loadbalancers.DeleteOpts{Cascade: true}).ExtractErr()
}

func (l *loadBalancerClient) ListListeners(ctx context.Context, opts listeners.ListOpts) ([]listeners.Listener, error) {
	return allPages(ctx, listeners.List(l.c, opts), listeners.ExtractListeners)
}

func (l *loadBalancerClient) CreateListener(ctx context.Context, opts listeners.CreateOptsBuilder) (*listeners.Listener, error) {
	return listeners.Create(ctx, l.c, opts).Extract()
}

func (l *loadBalancerClient) ListPools(ctx context.Context, opts pools.ListOpts) ([]pools.Pool, error) {
	return allPages(ctx, pools.List(l.c, opts), pools.ExtractPools)
}

func (l *loadBalancerClient) CreatePool(ctx context.Context, opts pools.CreateOptsBuilder) (*pools.Pool, error) {
	return pools.Create(ctx, l.c, opts).Extract()
}

func (l *loadBalancerClient) ListMembers(ctx context.Context, poolID string) ([]pools.Member, error) {
	return allPages(ctx, pools.ListMembers(l.c, poolID, pools.ListMembersOpts{}), pools.ExtractMembers)
}

func (l *loadBalancerClient) CreateMember(ctx context.Context, poolID string, opts pools.CreateMemberOptsBuilder) (*pools.Member, error) {
	return pools.CreateMember(ctx, l.c, poolID, opts).Extract()
}

func (l *loadBalancerClient) DeleteMember(ctx context.Context, poolID, memberID string) error {
	return pools.DeleteMember(ctx, l.c, poolID, memberID).ExtractErr()
}

func (l *loadBalancerClient) CreateMonitor(ctx context.Context, opts monitors.CreateOptsBuilder) (*monitors.Monitor, error) {
	return monitors.Create(ctx, l.c, opts).Extract()
}

func (l *loadBalancerClient) ListFlavors(ctx context.Context, opts lbflavors.ListOpts) ([]lbflavors.Flavor, error) {
	return allPages(ctx, lbflavors.List(l.c, opts), lbflavors.ExtractFlavors)
}
