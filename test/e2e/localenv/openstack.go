package localenv

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/trunks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"

	"github.com/ocp-capi/ocp-capi/test/openstackproxy"
)

// OSResource is one OpenStack resource as the leak check sees it.
type OSResource struct {
	Kind, ID, Name, Description string
	Tags                        []string
}

func (r OSResource) String() string { return fmt.Sprintf("%s %q (%s)", r.Kind, r.Name, r.ID) }

// OpenStack reads the local cloud through its API, as the project's user
// that the clusters use (the leak check must see what the provider made).
type OpenStack struct {
	compute, network, volume, lb *gophercloud.ServiceClient
}

// NewOpenStack authenticates as cloud of cloudsYAML.
func NewOpenStack(ctx context.Context, cloudsYAML, cloud string) (*OpenStack, error) {
	c, err := openstackproxy.LoadCloud(cloudsYAML, cloud)
	if err != nil {
		return nil, err
	}
	provider, err := openstack.AuthenticatedClient(ctx, c.AuthOptions())
	if err != nil {
		return nil, fmt.Errorf("authenticating to %s as %s: %w", c.Auth.AuthURL, cloud, err)
	}
	eo := c.EndpointOpts()
	o := &OpenStack{}
	if o.compute, err = openstack.NewComputeV2(provider, eo); err != nil {
		return nil, err
	}
	if o.network, err = openstack.NewNetworkV2(provider, eo); err != nil {
		return nil, err
	}
	// Cinder and Octavia are optional in a cloud; the local one has both.
	if o.volume, err = openstack.NewBlockStorageV3(provider, eo); err != nil {
		o.volume = nil
	}
	if o.lb, err = openstack.NewLoadBalancerV2(provider, eo); err != nil {
		o.lb = nil
	}
	return o, nil
}

// All lists every resource of the kinds a cluster makes: servers, ports,
// trunks, networks, subnets, routers, security groups, floating IPs,
// volumes and load balancers.
func (o *OpenStack) All(ctx context.Context) ([]OSResource, error) {
	var out []OSResource
	add := func(kind, id, name, desc string, tags []string) {
		out = append(out, OSResource{Kind: kind, ID: id, Name: name, Description: desc, Tags: tags})
	}
	pages, err := servers.List(o.compute, servers.ListOpts{}).AllPages(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing servers: %w", err)
	}
	ss, err := servers.ExtractServers(pages)
	if err != nil {
		return nil, err
	}
	for _, s := range ss {
		var tags []string
		if s.Tags != nil {
			tags = *s.Tags
		}
		add("server", s.ID, s.Name, "", tags)
	}
	if pages, err = ports.List(o.network, ports.ListOpts{}).AllPages(ctx); err != nil {
		return nil, fmt.Errorf("listing ports: %w", err)
	}
	ps, err := ports.ExtractPorts(pages)
	if err != nil {
		return nil, err
	}
	for _, p := range ps {
		add("port", p.ID, p.Name, p.Description, p.Tags)
	}
	if pages, err = trunks.List(o.network, trunks.ListOpts{}).AllPages(ctx); err != nil {
		return nil, fmt.Errorf("listing trunks: %w", err)
	}
	ts, err := trunks.ExtractTrunks(pages)
	if err != nil {
		return nil, err
	}
	for _, t := range ts {
		add("trunk", t.ID, t.Name, t.Description, t.Tags)
	}
	if pages, err = networks.List(o.network, networks.ListOpts{}).AllPages(ctx); err != nil {
		return nil, fmt.Errorf("listing networks: %w", err)
	}
	ns, err := networks.ExtractNetworks(pages)
	if err != nil {
		return nil, err
	}
	for _, n := range ns {
		add("network", n.ID, n.Name, n.Description, n.Tags)
	}
	if pages, err = subnets.List(o.network, subnets.ListOpts{}).AllPages(ctx); err != nil {
		return nil, fmt.Errorf("listing subnets: %w", err)
	}
	sns, err := subnets.ExtractSubnets(pages)
	if err != nil {
		return nil, err
	}
	for _, s := range sns {
		add("subnet", s.ID, s.Name, s.Description, s.Tags)
	}
	if pages, err = routers.List(o.network, routers.ListOpts{}).AllPages(ctx); err != nil {
		return nil, fmt.Errorf("listing routers: %w", err)
	}
	rs, err := routers.ExtractRouters(pages)
	if err != nil {
		return nil, err
	}
	for _, r := range rs {
		add("router", r.ID, r.Name, r.Description, r.Tags)
	}
	if pages, err = groups.List(o.network, groups.ListOpts{}).AllPages(ctx); err != nil {
		return nil, fmt.Errorf("listing security groups: %w", err)
	}
	sgs, err := groups.ExtractGroups(pages)
	if err != nil {
		return nil, err
	}
	for _, g := range sgs {
		add("security group", g.ID, g.Name, g.Description, g.Tags)
	}
	if pages, err = floatingips.List(o.network, floatingips.ListOpts{}).AllPages(ctx); err != nil {
		return nil, fmt.Errorf("listing floating IPs: %w", err)
	}
	fips, err := floatingips.ExtractFloatingIPs(pages)
	if err != nil {
		return nil, err
	}
	for _, f := range fips {
		add("floating IP", f.ID, f.FloatingIP, f.Description, f.Tags)
	}
	if o.volume != nil {
		if pages, err = volumes.List(o.volume, volumes.ListOpts{}).AllPages(ctx); err != nil {
			return nil, fmt.Errorf("listing volumes: %w", err)
		}
		vs, err := volumes.ExtractVolumes(pages)
		if err != nil {
			return nil, err
		}
		for _, v := range vs {
			add("volume", v.ID, v.Name, v.Description, nil)
		}
	}
	if o.lb != nil {
		if pages, err = loadbalancers.List(o.lb, loadbalancers.ListOpts{}).AllPages(ctx); err != nil {
			return nil, fmt.Errorf("listing load balancers: %w", err)
		}
		lbs, err := loadbalancers.ExtractLoadBalancers(pages)
		if err != nil {
			return nil, err
		}
		for _, l := range lbs {
			add("load balancer", l.ID, l.Name, l.Description, l.Tags)
		}
	}
	return out, nil
}

// ClusterResources are the resources that belong to cluster: named,
// described or tagged with its name (the provider's names are
// k8s-clusterapi-cluster-<namespace>-<name>[-...], the machines' servers,
// ports and volumes carry the Machine's name, and the template tags
// everything with the cluster's name), the VIP ports Octavia makes for the
// cluster's load balancers (octavia-lb-<id>), and anything whose ID is in
// known (the cluster's resources recorded while it ran).
func ClusterResources(all []OSResource, cluster string, known map[string]OSResource) []OSResource {
	lbs := map[string]bool{}
	for _, r := range all {
		if r.Kind == "load balancer" && belongs(r, cluster) {
			lbs[r.ID] = true
		}
	}
	for _, r := range known {
		if r.Kind == "load balancer" {
			lbs[r.ID] = true
		}
	}
	var out []OSResource
	for _, r := range all {
		_, wasKnown := known[r.Kind+"/"+r.ID]
		vip := r.Kind == "port" && strings.HasPrefix(r.Name, "octavia-lb-") && lbs[strings.TrimPrefix(r.Name, "octavia-lb-")]
		if wasKnown || vip || belongs(r, cluster) {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

func belongs(r OSResource, cluster string) bool {
	return strings.Contains(r.Name, cluster) || strings.Contains(r.Description, cluster) || slices.Contains(r.Tags, cluster)
}

// ByKey indexes resources by kind and ID.
func ByKey(rs []OSResource) map[string]OSResource {
	m := make(map[string]OSResource, len(rs))
	for _, r := range rs {
		m[r.Kind+"/"+r.ID] = r
	}
	return m
}

// Kinds counts resources by kind, for the log.
func Kinds(rs []OSResource) map[string]int {
	m := map[string]int{}
	for _, r := range rs {
		m[r.Kind]++
	}
	return m
}
