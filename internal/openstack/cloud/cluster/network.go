package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/clients"
)

func describe(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return string(b)
}

func joinTags(t []infrav1.NeutronTag) string {
	s := make([]string, len(t))
	for i := range t {
		s[i] = string(t[i])
	}
	return strings.Join(s, ",")
}

// networkQuery is the list query of a NetworkParam.
func networkQuery(p *infrav1.NetworkParam) networks.ListOpts {
	if p.ID != nil {
		return networks.ListOpts{ID: *p.ID}
	}
	f := p.Filter
	return networks.ListOpts{Name: f.Name, Description: f.Description, ProjectID: f.ProjectID,
		Tags: joinTags(f.Tags), TagsAny: joinTags(f.TagsAny), NotTags: joinTags(f.NotTags), NotTagsAny: joinTags(f.NotTagsAny)}
}

func subnetQuery(networkID string, p infrav1.SubnetParam) subnets.ListOpts {
	if p.ID != nil {
		return subnets.ListOpts{ID: *p.ID, NetworkID: networkID}
	}
	f := p.Filter
	return subnets.ListOpts{NetworkID: networkID, Name: f.Name, Description: f.Description, ProjectID: f.ProjectID,
		IPVersion: int(f.IPVersion), GatewayIP: f.GatewayIP, CIDR: f.CIDR, IPv6AddressMode: f.IPv6AddressMode, IPv6RAMode: f.IPv6RAMode,
		Tags: joinTags(f.Tags), TagsAny: joinTags(f.TagsAny), NotTags: joinTags(f.NotTags), NotTagsAny: joinTags(f.NotTagsAny)}
}

// EnsureExternalNetwork finds the external network: the one named in the
// spec, or the cloud's only one. Nil means none is used (disabled, or the
// cloud has none). One call, only while the status lacks it.
func EnsureExternalNetwork(ctx context.Context, s Scope, req Request, known *infrav1.NetworkStatus) (*infrav1.NetworkStatus, error) {
	if !req.externalEnabled() {
		return nil, nil
	}
	if known != nil {
		return known, nil
	}
	var q networks.ListOpts
	if p := req.Spec.ExternalNetwork; p != nil {
		q = networkQuery(p)
	}
	list, err := s.Clients.NetworkInfra.ListExternalNetworks(ctx, q)
	if err != nil {
		return nil, clients.Classify(err, "looking up the external network")
	}
	switch {
	case len(list) == 1:
		return &infrav1.NetworkStatus{Name: list[0].Name, ID: list[0].ID, Tags: list[0].Tags}, nil
	case len(list) == 0 && req.Spec.ExternalNetwork == nil:
		// No external network: no router gateway and no floating IPs.
		return nil, nil
	case len(list) == 0:
		return nil, notFound("external network", req.Spec.ExternalNetwork)
	}
	return nil, terminal(clients.ReasonAmbiguous, "%d external networks match; set spec.externalNetwork", len(list))
}

// EnsureNetwork creates (or adopts by name) the managed network and
// subnet, or finds the existing network and its subnets. Nil means the
// cluster has no network of its own: machines name theirs.
//
// A network known from the status is read (one GET) rather than trusted:
// when it, or one of its subnets, is gone, a managed network is created
// again (or adopted by name) and an existing one is looked up again by the
// spec, which reports it NotFound until the user fixes it. The answer is
// the same on every pass, so a pass never undoes the previous one.
func EnsureNetwork(ctx context.Context, s Scope, req Request, known *infrav1.NetworkStatusWithSubnets) (*infrav1.NetworkStatusWithSubnets, error) {
	if known != nil && len(known.Subnets) > 0 {
		there, err := stillThere(ctx, s, known)
		if err != nil {
			return known, err
		}
		if there {
			return known, nil
		}
		s.Log.Info("The cluster network is gone from OpenStack", "network", known.Name, "id", known.ID)
		if !req.managed() && req.Spec.Network != nil {
			net, err := findNetwork(ctx, s, req)
			if err != nil {
				if e := clients.Classify(err, ""); e.Reason == clients.ReasonNotFound {
					return nil, terminal(clients.ReasonNotFound, "network %s (%s) no longer exists in OpenStack: %s", known.Name, known.ID, e.Message)
				}
			}
			return net, err
		}
	}
	switch {
	case req.managed():
		return ensureManagedNetwork(ctx, s, req)
	case req.Spec.Network != nil:
		return findNetwork(ctx, s, req)
	}
	return nil, nil
}

// stillThere reports whether a network and all its known subnets exist.
func stillThere(ctx context.Context, s Scope, known *infrav1.NetworkStatusWithSubnets) (bool, error) {
	net, err := s.Clients.NetworkInfra.GetNetwork(ctx, known.ID)
	if err != nil {
		if e := clients.Classify(err, "reading network "+known.Name); e.Reason != clients.ReasonNotFound {
			return false, e
		}
		return false, nil
	}
	for _, sn := range known.Subnets {
		if !slices.Contains(net.Subnets, sn.ID) {
			return false, nil
		}
	}
	return true, nil
}

// LookupManagedNetwork finds the managed network and subnet by name
// without creating anything; nil when there is none.
func LookupManagedNetwork(ctx context.Context, s Scope, req Request) (*infrav1.NetworkStatusWithSubnets, error) {
	return managedNetwork(ctx, s, req, false)
}

func ensureManagedNetwork(ctx context.Context, s Scope, req Request) (*infrav1.NetworkStatusWithSubnets, error) {
	return managedNetwork(ctx, s, req, true)
}

func managedNetwork(ctx context.Context, s Scope, req Request, create bool) (*infrav1.NetworkStatusWithSubnets, error) {
	name := req.ResourceName()
	list, err := s.Clients.Network.ListNetworks(ctx, networks.ListOpts{Name: name, ProjectID: s.Clients.ProjectID})
	if err != nil {
		return nil, clients.Classify(err, "looking up network "+name)
	}
	var net *networks.Network
	switch len(list) {
	case 0:
		if !create {
			return nil, nil
		}
		opts := networkCreate{CreateOpts: networks.CreateOpts{Name: name, Description: "Created by ocp-capi for cluster " + req.Namespace + "/" + req.Name, AdminStateUp: new(bool)}}
		*opts.AdminStateUp = true
		if mn := req.Spec.ManagedNetwork; mn != nil {
			opts.mtu, opts.portSecurity = mn.MTU, mn.EnablePortSecurity
		}
		net, err = s.Clients.NetworkInfra.CreateNetwork(ctx, opts)
		if err != nil {
			return nil, clients.Classify(err, "creating network "+name)
		}
		s.Log.Info("Created network", "network", name, "id", net.ID)
		if err := tag(ctx, s, "networks", net.ID, req.Spec.Tags, &net.Tags); err != nil {
			return nil, err
		}
	case 1:
		net = &list[0]
	default:
		return nil, terminal(clients.ReasonAmbiguous, "%d networks are named %q; delete the extra ones", len(list), name)
	}
	out := &infrav1.NetworkStatusWithSubnets{NetworkStatus: infrav1.NetworkStatus{Name: net.Name, ID: net.ID, Tags: net.Tags}}

	want := req.Spec.ManagedSubnets[0]
	subs, err := s.Clients.Network.ListSubnets(ctx, subnets.ListOpts{Name: name, NetworkID: net.ID})
	if err != nil {
		return out, clients.Classify(err, "looking up subnet "+name)
	}
	var sub *subnets.Subnet
	switch len(subs) {
	case 0:
		if !create {
			return out, nil
		}
		opts := subnets.CreateOpts{NetworkID: net.ID, Name: name, CIDR: want.CIDR, IPVersion: gophercloud.IPv4,
			DNSNameservers: want.DNSNameservers, Description: "Created by ocp-capi for cluster " + req.Namespace + "/" + req.Name}
		if strings.Contains(want.CIDR, ":") {
			opts.IPVersion = gophercloud.IPv6
		}
		for _, p := range want.AllocationPools {
			opts.AllocationPools = append(opts.AllocationPools, subnets.AllocationPool{Start: p.Start, End: p.End})
		}
		sub, err = s.Clients.NetworkInfra.CreateSubnet(ctx, opts)
		if err != nil {
			return out, clients.Classify(err, "creating subnet "+name)
		}
		s.Log.Info("Created subnet", "subnet", name, "id", sub.ID)
		if err := tag(ctx, s, "subnets", sub.ID, req.Spec.Tags, &sub.Tags); err != nil {
			return out, err
		}
	case 1:
		sub = &subs[0]
	default:
		return out, terminal(clients.ReasonAmbiguous, "%d subnets are named %q; delete the extra ones", len(subs), name)
	}
	out.Subnets = []infrav1.Subnet{{Name: sub.Name, ID: sub.ID, CIDR: sub.CIDR, Tags: sub.Tags}}
	return out, nil
}

// networkCreate adds MTU and port security to gophercloud's request.
type networkCreate struct {
	networks.CreateOpts
	mtu          *int32
	portSecurity *bool
}

func (n networkCreate) ToNetworkCreateMap() (map[string]any, error) {
	body, err := n.CreateOpts.ToNetworkCreateMap()
	if err != nil {
		return nil, err
	}
	m := body["network"].(map[string]any)
	if n.mtu != nil {
		m["mtu"] = *n.mtu
	}
	if n.portSecurity != nil {
		m["port_security_enabled"] = *n.portSecurity
	}
	return body, nil
}

func findNetwork(ctx context.Context, s Scope, req Request) (*infrav1.NetworkStatusWithSubnets, error) {
	list, err := s.Clients.Network.ListNetworks(ctx, networkQuery(req.Spec.Network))
	if err != nil {
		return nil, clients.Classify(err, "looking up the cluster network")
	}
	switch len(list) {
	case 0:
		return nil, notFound("network", req.Spec.Network)
	case 1:
	default:
		return nil, terminal(clients.ReasonAmbiguous, "%d networks match %s; the filter must match exactly one", len(list), describe(req.Spec.Network))
	}
	net := list[0]
	out := &infrav1.NetworkStatusWithSubnets{NetworkStatus: infrav1.NetworkStatus{Name: net.Name, ID: net.ID, Tags: net.Tags}}
	params := req.Spec.Subnets
	if len(params) == 0 {
		// Every subnet of the network.
		subs, err := s.Clients.Network.ListSubnets(ctx, subnets.ListOpts{NetworkID: net.ID})
		if err != nil {
			return out, clients.Classify(err, "listing the subnets of network "+net.Name)
		}
		if len(subs) == 0 {
			return out, terminal(clients.ReasonNotFound, "network %s has no subnet", net.Name)
		}
		for _, sn := range subs {
			out.Subnets = append(out.Subnets, infrav1.Subnet{Name: sn.Name, ID: sn.ID, CIDR: sn.CIDR, Tags: sn.Tags})
		}
		return out, nil
	}
	for _, p := range params {
		subs, err := s.Clients.Network.ListSubnets(ctx, subnetQuery(net.ID, p))
		if err != nil {
			return out, clients.Classify(err, "looking up a subnet")
		}
		if len(subs) != 1 {
			if len(subs) == 0 {
				return out, notFound("subnet of network "+net.Name, p)
			}
			return out, terminal(clients.ReasonAmbiguous, "%d subnets match %s", len(subs), describe(p))
		}
		sn := subs[0]
		out.Subnets = append(out.Subnets, infrav1.Subnet{Name: sn.Name, ID: sn.ID, CIDR: sn.CIDR, Tags: sn.Tags})
	}
	return out, nil
}

// EnsureRouter gives a managed network a router with a gateway on the
// external network and an interface on the subnet. Nil means no router is
// needed (an existing network, or no external network).
func EnsureRouter(ctx context.Context, s Scope, req Request, net *infrav1.NetworkStatusWithSubnets, ext *infrav1.NetworkStatus, known *infrav1.Router) (*infrav1.Router, error) {
	if !req.managed() || net == nil || len(net.Subnets) == 0 {
		return nil, nil
	}
	if ext == nil && req.Spec.Router == nil {
		return nil, nil
	}
	if known != nil {
		// Read, not trusted: a router deleted out of band is looked up
		// again below (and recreated when it is the provider's).
		exists, err := routerExists(ctx, s, known)
		if err != nil || exists {
			return known, err
		}
	}
	var rt *routers.Router
	var err error
	if p := req.Spec.Router; p != nil {
		rt, err = userRouter(ctx, s, p)
	} else {
		rt, err = managedRouter(ctx, s, req, ext)
	}
	if err != nil {
		return nil, err
	}
	// The interface: adding it twice is refused with 400 "already has a
	// port on subnet", which is success here.
	if err := s.Clients.NetworkInfra.AddRouterInterface(ctx, rt.ID, net.Subnets[0].ID); err != nil {
		e := clients.Classify(err, "attaching the subnet to router "+rt.Name)
		if e.Reason != clients.ReasonInvalidSpec || !strings.Contains(strings.ToLower(e.Message), "already") {
			return nil, e
		}
	}
	out := &infrav1.Router{Name: rt.Name, ID: rt.ID, Tags: rt.Tags}
	for _, ip := range rt.GatewayInfo.ExternalFixedIPs {
		out.IPs = append(out.IPs, ip.IPAddress)
	}
	return out, nil
}

// routerExists reads the router the status names.
func routerExists(ctx context.Context, s Scope, known *infrav1.Router) (bool, error) {
	list, err := s.Clients.NetworkInfra.ListRouters(ctx, routers.ListOpts{ID: known.ID})
	if err != nil {
		if e := clients.Classify(err, "reading router "+known.Name); e.Reason != clients.ReasonNotFound {
			return false, e
		}
	}
	if len(list) == 1 {
		return true, nil
	}
	s.Log.Info("The cluster router is gone from OpenStack", "router", known.Name, "id", known.ID)
	return false, nil
}

// userRouter finds the router the spec names (by ID or filter).
func userRouter(ctx context.Context, s Scope, p *infrav1.RouterParam) (*routers.Router, error) {
	q := routers.ListOpts{}
	if p.ID != nil {
		q.ID = *p.ID
	} else {
		f := p.Filter
		q = routers.ListOpts{Name: f.Name, Description: f.Description, ProjectID: f.ProjectID,
			Tags: joinTags(f.Tags), TagsAny: joinTags(f.TagsAny), NotTags: joinTags(f.NotTags), NotTagsAny: joinTags(f.NotTagsAny)}
	}
	list, err := s.Clients.NetworkInfra.ListRouters(ctx, q)
	if err != nil {
		return nil, clients.Classify(err, "looking up the router")
	}
	switch len(list) {
	case 1:
		return &list[0], nil
	case 0:
		return nil, notFound("router", p)
	default:
		return nil, terminal(clients.ReasonAmbiguous, "%d routers match %s", len(list), describe(p))
	}
}

// managedRouter adopts the cluster's router by name, or creates it with
// its gateway on the external network.
func managedRouter(ctx context.Context, s Scope, req Request, ext *infrav1.NetworkStatus) (*routers.Router, error) {
	name := req.ResourceName()
	list, err := s.Clients.NetworkInfra.ListRouters(ctx, routers.ListOpts{Name: name, ProjectID: s.Clients.ProjectID})
	if err != nil {
		return nil, clients.Classify(err, "looking up router "+name)
	}
	switch len(list) {
	case 0:
	case 1:
		return &list[0], nil
	default:
		return nil, terminal(clients.ReasonAmbiguous, "%d routers are named %q; delete the extra ones", len(list), name)
	}
	gateway, err := gatewayInfo(ctx, s, req, ext)
	if err != nil {
		return nil, err
	}
	opts := routers.CreateOpts{Name: name, Description: "Created by ocp-capi for cluster " + req.Namespace + "/" + req.Name,
		GatewayInfo: gateway}
	rt, err := s.Clients.NetworkInfra.CreateRouter(ctx, opts)
	if err != nil {
		return nil, clients.Classify(err, "creating router "+name)
	}
	s.Log.Info("Created router", "router", name, "id", rt.ID)
	if err := tag(ctx, s, "routers", rt.ID, req.Spec.Tags, &rt.Tags); err != nil {
		return nil, err
	}
	return rt, nil
}

// gatewayInfo is the managed router's gateway: the external network, and
// the fixed addresses of managedRouter.externalIPs, each on a subnet of the
// external network (by ID or filter) and at fixedIP when given. Setting
// fixed addresses on a router gateway is an admin-only operation in
// Neutron's default policy; without the permission Neutron answers 403.
func gatewayInfo(ctx context.Context, s Scope, req Request, ext *infrav1.NetworkStatus) (*routers.GatewayInfo, error) {
	g := &routers.GatewayInfo{NetworkID: ext.ID}
	if req.Spec.ManagedRouter == nil {
		return g, nil
	}
	for _, ip := range req.Spec.ManagedRouter.ExternalIPs {
		subs, err := s.Clients.Network.ListSubnets(ctx, subnetQuery(ext.ID, ip.Subnet))
		if err != nil {
			return nil, clients.Classify(err, "looking up a subnet of the external network")
		}
		switch len(subs) {
		case 1:
		case 0:
			return nil, notFound("subnet of external network "+ext.Name+" (managedRouter.externalIPs)", ip.Subnet)
		default:
			return nil, terminal(clients.ReasonAmbiguous, "%d subnets of external network %s match %s", len(subs), ext.Name, describe(ip.Subnet))
		}
		g.ExternalFixedIPs = append(g.ExternalFixedIPs, routers.ExternalFixedIP{SubnetID: subs[0].ID, IPAddress: ip.FixedIP})
	}
	return g, nil
}

// tag replaces the tags of a new resource (Neutron of Zed ignores tags in
// create requests). Nothing to do without tags.
//
// On success *recorded becomes the tags, so that the status of a created
// resource says what a later adoption by name would read.
func tag(ctx context.Context, s Scope, resource, id string, tags []string, recorded *[]string) error {
	if len(tags) == 0 {
		return nil
	}
	ext, err := s.Clients.Network.Extensions(ctx)
	if err != nil {
		return clients.Classify(err, "listing Neutron extensions")
	}
	if !ext["standard-attr-tag"] {
		return nil
	}
	if err := s.Clients.Network.ReplaceAllTags(ctx, resource, id, tags); err != nil {
		return clients.Classify(err, "tagging "+resource+" "+id)
	}
	*recorded = slices.Clone(tags)
	return nil
}
