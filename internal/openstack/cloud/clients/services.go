package clients

import (
	"context"
	"regexp"
	"sync"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/openstack/common/extensions"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/availabilityzones"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/flavors"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servergroups"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/trunks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	"github.com/gophercloud/gophercloud/v2/pagination"
)

// The interfaces below are the whole surface of OpenStack this provider
// uses, one per service. They take and return gophercloud's types so that
// fakes are easy to write and nothing is translated twice. Every method
// makes exactly one HTTP request (list methods: one per page), which is
// what the call budget counts.

// Compute is the subset of Nova used here.
type Compute interface {
	GetServer(ctx context.Context, id string) (*servers.Server, error)
	// ListServersByName returns the servers whose name is exactly name.
	ListServersByName(ctx context.Context, name string) ([]servers.Server, error)
	CreateServer(ctx context.Context, opts servers.CreateOptsBuilder, hints servers.SchedulerHintOptsBuilder) (*servers.Server, error)
	DeleteServer(ctx context.Context, id string) error
	GetFlavor(ctx context.Context, id string) (*flavors.Flavor, error)
	ListFlavors(ctx context.Context) ([]flavors.Flavor, error)
	ListAvailabilityZones(ctx context.Context) ([]availabilityzones.AvailabilityZone, error)
	ListServerGroups(ctx context.Context) ([]servergroups.ServerGroup, error)
}

// Network is the subset of Neutron used here.
type Network interface {
	ListNetworks(ctx context.Context, opts networks.ListOpts) ([]networks.Network, error)
	ListSubnets(ctx context.Context, opts subnets.ListOpts) ([]subnets.Subnet, error)
	ListSecurityGroups(ctx context.Context, opts groups.ListOpts) ([]groups.SecGroup, error)
	ListPorts(ctx context.Context, opts ports.ListOptsBuilder) ([]ports.Port, error)
	CreatePort(ctx context.Context, opts ports.CreateOptsBuilder) (*ports.Port, error)
	DeletePort(ctx context.Context, id string) error
	ReplaceAllTags(ctx context.Context, resource, id string, tags []string) error
	ListTrunks(ctx context.Context, opts trunks.ListOpts) ([]trunks.Trunk, error)
	CreateTrunk(ctx context.Context, opts trunks.CreateOptsBuilder) (*trunks.Trunk, error)
	DeleteTrunk(ctx context.Context, id string) error
	// Extensions returns the aliases of the enabled Neutron extensions. It
	// is read once per client and cached.
	Extensions(ctx context.Context) (map[string]bool, error)
}

// Volume is the subset of Cinder used here.
type Volume interface {
	ListVolumes(ctx context.Context, opts volumes.ListOpts) ([]volumes.Volume, error)
	GetVolume(ctx context.Context, id string) (*volumes.Volume, error)
	CreateVolume(ctx context.Context, opts volumes.CreateOptsBuilder) (*volumes.Volume, error)
	DeleteVolume(ctx context.Context, id string) error
}

// Image is the subset of Glance used here.
type Image interface {
	GetImage(ctx context.Context, id string) (*images.Image, error)
	ListImages(ctx context.Context, opts images.ListOpts) ([]images.Image, error)
}

// ServiceClients are authenticated gophercloud service clients of one
// cloud: the factory's own, or a caller's (pkg/openstack/instance).
type ServiceClients struct {
	Compute *gophercloud.ServiceClient // required
	Network *gophercloud.ServiceClient // required
	Image   *gophercloud.ServiceClient // required
	// Volume (Cinder v3) is optional: without it, root volumes still work
	// through Nova's block device mappings.
	Volume *gophercloud.ServiceClient
	// LoadBalancer (Octavia) is optional: without it, a cluster's API
	// endpoint is a floating IP.
	LoadBalancer *gophercloud.ServiceClient
}

// NewServiceClients finds the services a server needs (ServiceClients
// without LoadBalancer) in the provider's catalog, for the region of eo.
// A missing required service is a Terminal error wrapping ErrNoEndpoint.
// It makes no request when the provider's EndpointLocator reads the
// catalog only, as the factory's does.
func NewServiceClients(provider *gophercloud.ProviderClient, eo gophercloud.EndpointOpts) (ServiceClients, error) {
	var sc ServiceClients
	var err error
	if sc.Compute, err = openstack.NewComputeV2(provider, eo); err != nil {
		return sc, noEndpoint("compute", err)
	}
	if sc.Network, err = openstack.NewNetworkV2(provider, eo); err != nil {
		return sc, noEndpoint("network", err)
	}
	if sc.Image, err = openstack.NewImageV2(provider, eo); err != nil {
		return sc, noEndpoint("image", err)
	}
	if v, err := openstack.NewBlockStorageV3(provider, eo); err == nil {
		sc.Volume = v
	}
	return sc, nil
}

// FromServiceClients puts service clients behind the narrow interfaces.
// Compute, Network and Image must be set. Nothing of sc is modified:
// Compute is copied to pin ComputeMicroversion. ProjectID is read from the
// Keystone v3 token of Compute's provider ("" without one); Region is left
// to the caller.
func FromServiceClients(sc ServiceClients) *Clients {
	compute := *sc.Compute
	compute.Microversion = ComputeMicroversion
	nc := &networkClient{c: sc.Network}
	c := &Clients{Compute: &computeClient{c: &compute}, Network: nc, NetworkInfra: nc, Image: &imageClient{c: sc.Image}}
	if p, err := projectID(sc.Compute.ProviderClient); err == nil {
		c.ProjectID = p
	}
	if sc.Volume != nil {
		c.Volume = &volumeClient{c: sc.Volume}
	}
	if sc.LoadBalancer != nil {
		c.LoadBalancer = &loadBalancerClient{c: sc.LoadBalancer}
	}
	return c
}

type computeClient struct{ c *gophercloud.ServiceClient }

func (c *computeClient) GetServer(ctx context.Context, id string) (*servers.Server, error) {
	return servers.Get(ctx, c.c, id).Extract()
}

func (c *computeClient) ListServersByName(ctx context.Context, name string) ([]servers.Server, error) {
	// Nova's name filter is a regular expression; anchor and quote it.
	pages, err := servers.List(c.c, servers.ListOpts{Name: "^" + regexp.QuoteMeta(name) + "$"}).AllPages(ctx)
	if err != nil {
		return nil, err
	}
	all, err := servers.ExtractServers(pages)
	if err != nil {
		return nil, err
	}
	// Belt and braces: some Nova versions treat the filter as a substring.
	out := all[:0]
	for _, s := range all {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out, nil
}

func (c *computeClient) CreateServer(ctx context.Context, opts servers.CreateOptsBuilder, hints servers.SchedulerHintOptsBuilder) (*servers.Server, error) {
	return servers.Create(ctx, c.c, opts, hints).Extract()
}

func (c *computeClient) DeleteServer(ctx context.Context, id string) error {
	return servers.Delete(ctx, c.c, id).ExtractErr()
}

func (c *computeClient) GetFlavor(ctx context.Context, id string) (*flavors.Flavor, error) {
	return flavors.Get(ctx, c.c, id).Extract()
}

func (c *computeClient) ListFlavors(ctx context.Context) ([]flavors.Flavor, error) {
	pages, err := flavors.ListDetail(c.c, flavors.ListOpts{AccessType: flavors.AllAccess}).AllPages(ctx)
	if err != nil {
		return nil, err
	}
	return flavors.ExtractFlavors(pages)
}

func (c *computeClient) ListAvailabilityZones(ctx context.Context) ([]availabilityzones.AvailabilityZone, error) {
	pages, err := availabilityzones.List(c.c).AllPages(ctx)
	if err != nil {
		return nil, err
	}
	return availabilityzones.ExtractAvailabilityZones(pages)
}

func (c *computeClient) ListServerGroups(ctx context.Context) ([]servergroups.ServerGroup, error) {
	pages, err := servergroups.List(c.c, servergroups.ListOpts{}).AllPages(ctx)
	if err != nil {
		return nil, err
	}
	return servergroups.ExtractServerGroups(pages)
}

type networkClient struct {
	c *gophercloud.ServiceClient

	extOnce sync.Mutex
	ext     map[string]bool
}

func (n *networkClient) ListNetworks(ctx context.Context, opts networks.ListOpts) ([]networks.Network, error) {
	return allPages(ctx, networks.List(n.c, opts), networks.ExtractNetworks)
}

func (n *networkClient) ListSubnets(ctx context.Context, opts subnets.ListOpts) ([]subnets.Subnet, error) {
	return allPages(ctx, subnets.List(n.c, opts), subnets.ExtractSubnets)
}

func (n *networkClient) ListSecurityGroups(ctx context.Context, opts groups.ListOpts) ([]groups.SecGroup, error) {
	return allPages(ctx, groups.List(n.c, opts), groups.ExtractGroups)
}

func (n *networkClient) ListPorts(ctx context.Context, opts ports.ListOptsBuilder) ([]ports.Port, error) {
	return allPages(ctx, ports.List(n.c, opts), ports.ExtractPorts)
}

func (n *networkClient) CreatePort(ctx context.Context, opts ports.CreateOptsBuilder) (*ports.Port, error) {
	return ports.Create(ctx, n.c, opts).Extract()
}

func (n *networkClient) DeletePort(ctx context.Context, id string) error {
	return ports.Delete(ctx, n.c, id).ExtractErr()
}

func (n *networkClient) ReplaceAllTags(ctx context.Context, resource, id string, tags []string) error {
	// PUT /v2.0/{resource}/{id}/tags {"tags": [...]}
	resp, err := n.c.Put(ctx, n.c.ServiceURL(resource, id, "tags"), map[string]any{"tags": tags}, nil, &gophercloud.RequestOpts{OkCodes: []int{200, 201}})
	if resp != nil && resp.Body != nil {
		_ = resp.Body.Close()
	}
	return err
}

func (n *networkClient) ListTrunks(ctx context.Context, opts trunks.ListOpts) ([]trunks.Trunk, error) {
	return allPages(ctx, trunks.List(n.c, opts), trunks.ExtractTrunks)
}

func (n *networkClient) CreateTrunk(ctx context.Context, opts trunks.CreateOptsBuilder) (*trunks.Trunk, error) {
	return trunks.Create(ctx, n.c, opts).Extract()
}

func (n *networkClient) DeleteTrunk(ctx context.Context, id string) error {
	return trunks.Delete(ctx, n.c, id).ExtractErr()
}

func (n *networkClient) Extensions(ctx context.Context) (map[string]bool, error) {
	n.extOnce.Lock()
	defer n.extOnce.Unlock()
	if n.ext != nil {
		return n.ext, nil
	}
	pages, err := extensions.List(n.c).AllPages(ctx)
	if err != nil {
		return nil, err
	}
	list, err := extensions.ExtractExtensions(pages)
	if err != nil {
		return nil, err
	}
	n.ext = make(map[string]bool, len(list))
	for _, e := range list {
		n.ext[e.Alias] = true
	}
	return n.ext, nil
}

type volumeClient struct{ c *gophercloud.ServiceClient }

func (v *volumeClient) ListVolumes(ctx context.Context, opts volumes.ListOpts) ([]volumes.Volume, error) {
	return allPages(ctx, volumes.List(v.c, opts), volumes.ExtractVolumes)
}

func (v *volumeClient) GetVolume(ctx context.Context, id string) (*volumes.Volume, error) {
	return volumes.Get(ctx, v.c, id).Extract()
}

func (v *volumeClient) CreateVolume(ctx context.Context, opts volumes.CreateOptsBuilder) (*volumes.Volume, error) {
	return volumes.Create(ctx, v.c, opts, nil).Extract()
}

func (v *volumeClient) DeleteVolume(ctx context.Context, id string) error {
	return volumes.Delete(ctx, v.c, id, volumes.DeleteOpts{}).ExtractErr()
}

type imageClient struct{ c *gophercloud.ServiceClient }

func (i *imageClient) GetImage(ctx context.Context, id string) (*images.Image, error) {
	return images.Get(ctx, i.c, id).Extract()
}

func (i *imageClient) ListImages(ctx context.Context, opts images.ListOpts) ([]images.Image, error) {
	return allPages(ctx, images.List(i.c, opts), images.ExtractImages)
}

func allPages[T any](ctx context.Context, p pagination.Pager, extract func(pagination.Page) ([]T, error)) ([]T, error) {
	pages, err := p.AllPages(ctx)
	if err != nil {
		return nil, err
	}
	return extract(pages)
}
