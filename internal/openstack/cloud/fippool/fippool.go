// Package fippool is the OpenStack side of an OpenStackFloatingIPPool:
// find the pool's external network, find, create, tag and delete its
// floating IPs. It knows nothing of Kubernetes objects.
package fippool

import (
	"context"
	"fmt"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/clients"
)

// Neutron is the part of Neutron a pool uses.
type Neutron interface {
	ListExternalNetworks(ctx context.Context, opts networks.ListOpts) ([]networks.Network, error)
	ListFloatingIPs(ctx context.Context, opts floatingips.ListOpts) ([]floatingips.FloatingIP, error)
	CreateFloatingIP(ctx context.Context, opts floatingips.CreateOptsBuilder) (*floatingips.FloatingIP, error)
	DeleteFloatingIP(ctx context.Context, id string) error
	ReplaceAllTags(ctx context.Context, resource, id string, tags []string) error
}

// From is the Neutron of a client set.
func From(c *clients.Clients) Neutron {
	return struct {
		clients.NetworkInfra
		tagger
	}{c.NetworkInfra, c.Network}
}

type tagger interface {
	ReplaceAllTags(ctx context.Context, resource, id string, tags []string) error
}

func terminal(reason, format string, args ...any) error {
	return &clients.Error{Class: clients.Terminal, Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// ExternalNetwork is the network p selects among the external ones, or
// the only external network when p is nil.
func ExternalNetwork(ctx context.Context, n Neutron, p *infrav1.NetworkParam) (*infrav1.NetworkStatus, error) {
	var q networks.ListOpts
	if p != nil {
		if p.ID != nil {
			q.ID = *p.ID
		} else if f := p.Filter; f != nil {
			q = networks.ListOpts{Name: f.Name, Description: f.Description, ProjectID: f.ProjectID,
				Tags: join(f.Tags), TagsAny: join(f.TagsAny), NotTags: join(f.NotTags), NotTagsAny: join(f.NotTagsAny)}
		}
	}
	list, err := n.ListExternalNetworks(ctx, q)
	if err != nil {
		return nil, clients.Classify(err, "looking up the floating IP network")
	}
	switch len(list) {
	case 1:
		return &infrav1.NetworkStatus{ID: list[0].ID, Name: list[0].Name, Tags: list[0].Tags}, nil
	case 0:
		return nil, terminal(clients.ReasonNotFound, "no external network matches spec.floatingIPNetwork")
	}
	return nil, terminal(clients.ReasonAmbiguous, "%d external networks match; set spec.floatingIPNetwork", len(list))
}

func join(t []infrav1.NeutronTag) string {
	out := ""
	for i, s := range t {
		if i > 0 {
			out += ","
		}
		out += string(s)
	}
	return out
}

// Find is the floating IP with that address, nil when there is none.
func Find(ctx context.Context, n Neutron, address string) (*floatingips.FloatingIP, error) {
	list, err := n.ListFloatingIPs(ctx, floatingips.ListOpts{FloatingIP: address})
	if err != nil {
		return nil, clients.Classify(err, "looking up floating IP "+address)
	}
	if len(list) == 0 {
		return nil, nil
	}
	return &list[0], nil
}

// Tagged lists the addresses of the floating IPs that carry tag.
func Tagged(ctx context.Context, n Neutron, tag string) ([]string, error) {
	list, err := n.ListFloatingIPs(ctx, floatingips.ListOpts{Tags: tag})
	if err != nil {
		return nil, clients.Classify(err, "listing the pool's floating IPs")
	}
	out := make([]string, 0, len(list))
	for _, f := range list {
		out = append(out, f.FloatingIP)
	}
	return out, nil
}

// Create makes a floating IP on networkID and tags it. A floating IP
// whose tagging failed is deleted again, so that none exists that the
// pool cannot find by its tag.
func Create(ctx context.Context, n Neutron, networkID, description, tag string) (string, error) {
	f, err := n.CreateFloatingIP(ctx, floatingips.CreateOpts{FloatingNetworkID: networkID, Description: description})
	if err != nil {
		return "", clients.Classify(err, "creating a floating IP")
	}
	if err := n.ReplaceAllTags(ctx, "floatingips", f.ID, []string{tag}); err != nil {
		if derr := n.DeleteFloatingIP(ctx, f.ID); derr != nil && !isNotFound(derr) {
			return "", clients.Classify(derr, fmt.Sprintf("deleting untagged floating IP %s", f.FloatingIP))
		}
		return "", clients.Classify(err, "tagging floating IP "+f.FloatingIP)
	}
	return f.FloatingIP, nil
}

// Delete deletes the floating IP with that address; one already gone is
// done.
func Delete(ctx context.Context, n Neutron, address string) error {
	f, err := Find(ctx, n, address)
	if err != nil || f == nil {
		return err
	}
	if err := n.DeleteFloatingIP(ctx, f.ID); err != nil && !isNotFound(err) {
		return clients.Classify(err, "deleting floating IP "+address)
	}
	return nil
}

func isNotFound(err error) bool {
	return clients.Classify(err, "").Reason == clients.ReasonNotFound
}
