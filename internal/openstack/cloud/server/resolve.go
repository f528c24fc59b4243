package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	"k8s.io/utils/ptr"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/clients"
)

// Resolve turns every reference of the spec into an ID. It makes one call
// per reference given by name or filter (a filter used twice is looked up
// once) and none for references given by ID. The caller stores the result
// before creating anything, so that it is resolved only once.
func Resolve(ctx context.Context, s Scope, req Request) (*infrav1alpha1.ResolvedServerSpec, error) {
	r := &resolver{s: s, memo: map[string]string{}}
	spec := req.Spec
	out := &infrav1alpha1.ResolvedServerSpec{}
	var err error

	if out.ImageID, err = r.image(ctx, spec.Image); err != nil {
		return nil, err
	}
	if out.FlavorID, err = r.flavor(ctx, spec); err != nil {
		return nil, err
	}
	if spec.ServerGroup != nil {
		if out.ServerGroupID, err = r.serverGroup(ctx, *spec.ServerGroup); err != nil {
			return nil, err
		}
	}
	for i, p := range spec.Ports {
		rp, err := r.port(ctx, req, i, p)
		if err != nil {
			return nil, err
		}
		out.Ports = append(out.Ports, rp)
	}
	return out, nil
}

type resolver struct {
	s    Scope
	memo map[string]string
}

func notFound(what string, filter any) error {
	return &clients.Error{Class: clients.Terminal, Reason: clients.ReasonNotFound,
		Message: fmt.Sprintf("no %s matches %s", what, describe(filter))}
}

// only is the ID (id(i) of list[i]) of the one resource of kind what
// that matched filter: a terminal NotFound when none did, Ambiguous when
// several did.
func only[T any](what string, filter any, list []T, id func(i int) string) (string, error) {
	switch len(list) {
	case 0:
		return "", notFound(what, filter)
	case 1:
		return id(0), nil
	}
	return "", ambiguous(what, filter, len(list))
}

func ambiguous(what string, filter any, n int) error {
	return &clients.Error{Class: clients.Terminal, Reason: clients.ReasonAmbiguous,
		Message: fmt.Sprintf("%d %ss match %s; the filter must match exactly one", n, what, describe(filter))}
}

func describe(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return string(b)
}

// once runs lookup for a filter the first time it is seen in this pass.
func (r *resolver) once(kind string, filter any, lookup func() (string, error)) (string, error) {
	key := kind + describe(filter)
	if id, ok := r.memo[key]; ok {
		return id, nil
	}
	id, err := lookup()
	if err != nil {
		return "", err
	}
	r.memo[key] = id
	return id, nil
}

func (r *resolver) image(ctx context.Context, p infrav1.ImageParam) (string, error) {
	switch {
	case p.ID != nil:
		return *p.ID, nil
	case p.Filter != nil:
		return r.once("image", p.Filter, func() (string, error) {
			opts := images.ListOpts{Name: ptr.Deref(p.Filter.Name, ""), Tags: p.Filter.Tags}
			list, err := r.s.Clients.Image.ListImages(ctx, opts)
			if err != nil {
				return "", clients.Classify(err, "looking up the image")
			}
			return only("image", p.Filter, list, func(i int) string { return list[i].ID })
		})
	}
	return "", &clients.Error{Class: clients.Terminal, Reason: clients.ReasonInvalidSpec, Message: "spec.image needs id or filter"}
}

func (r *resolver) flavor(ctx context.Context, spec *infrav1alpha1.OpenStackServerSpec) (string, error) {
	if spec.FlavorID != nil && *spec.FlavorID != "" {
		return *spec.FlavorID, nil
	}
	name := ptr.Deref(spec.Flavor, "")
	if name == "" {
		return "", &clients.Error{Class: clients.Terminal, Reason: clients.ReasonInvalidSpec, Message: "spec.flavor or spec.flavorID must be set"}
	}
	return r.once("flavor", name, func() (string, error) {
		list, err := r.s.Clients.Compute.ListFlavors(ctx)
		if err != nil {
			return "", clients.Classify(err, "looking up the flavor")
		}
		var ids []string
		for _, f := range list {
			if f.Name == name {
				ids = append(ids, f.ID)
			}
		}
		return only("flavor", map[string]string{"name": name}, ids, func(i int) string { return ids[i] })
	})
}

func (r *resolver) serverGroup(ctx context.Context, p infrav1.ServerGroupParam) (string, error) {
	if p.ID != nil {
		return *p.ID, nil
	}
	if p.Filter == nil || p.Filter.Name == nil {
		return "", &clients.Error{Class: clients.Terminal, Reason: clients.ReasonInvalidSpec, Message: "spec.serverGroup needs id or filter.name"}
	}
	name := *p.Filter.Name
	return r.once("servergroup", name, func() (string, error) {
		list, err := r.s.Clients.Compute.ListServerGroups(ctx)
		if err != nil {
			return "", clients.Classify(err, "looking up the server group")
		}
		var ids []string
		for _, g := range list {
			if g.Name == name {
				ids = append(ids, g.ID)
			}
		}
		return only("server group", p.Filter, ids, func(i int) string { return ids[i] })
	})
}

func joinTags(t []infrav1.NeutronTag) string {
	s := make([]string, len(t))
	for i := range t {
		s[i] = string(t[i])
	}
	return strings.Join(s, ",")
}

func (r *resolver) network(ctx context.Context, p *infrav1.NetworkParam) (string, error) {
	if p == nil {
		return "", &clients.Error{Class: clients.Terminal, Reason: clients.ReasonInvalidSpec, Message: "a port has no network"}
	}
	if p.ID != nil {
		return *p.ID, nil
	}
	f := p.Filter
	if f == nil {
		return "", &clients.Error{Class: clients.Terminal, Reason: clients.ReasonInvalidSpec, Message: "a port's network needs id or filter"}
	}
	return r.once("network", f, func() (string, error) {
		list, err := r.s.Clients.Network.ListNetworks(ctx, networks.ListOpts{
			Name: f.Name, Description: f.Description, ProjectID: f.ProjectID,
			Tags: joinTags(f.Tags), TagsAny: joinTags(f.TagsAny), NotTags: joinTags(f.NotTags), NotTagsAny: joinTags(f.NotTagsAny),
		})
		if err != nil {
			return "", clients.Classify(err, "looking up a network")
		}
		return only("network", f, list, func(i int) string { return list[i].ID })
	})
}

func (r *resolver) subnet(ctx context.Context, networkID string, p *infrav1.SubnetParam) (string, error) {
	if p.ID != nil {
		return *p.ID, nil
	}
	f := p.Filter
	if f == nil {
		return "", nil
	}
	return r.once("subnet"+networkID, f, func() (string, error) {
		list, err := r.s.Clients.Network.ListSubnets(ctx, subnets.ListOpts{
			NetworkID: networkID, Name: f.Name, Description: f.Description, ProjectID: f.ProjectID,
			IPVersion: int(f.IPVersion), GatewayIP: f.GatewayIP, CIDR: f.CIDR,
			IPv6AddressMode: f.IPv6AddressMode, IPv6RAMode: f.IPv6RAMode,
			Tags: joinTags(f.Tags), TagsAny: joinTags(f.TagsAny), NotTags: joinTags(f.NotTags), NotTagsAny: joinTags(f.NotTagsAny),
		})
		if err != nil {
			return "", clients.Classify(err, "looking up a subnet")
		}
		return only("subnet", f, list, func(i int) string { return list[i].ID })
	})
}

func (r *resolver) securityGroup(ctx context.Context, p infrav1.SecurityGroupParam) (string, error) {
	if p.ID != nil {
		return *p.ID, nil
	}
	f := p.Filter
	if f == nil {
		return "", &clients.Error{Class: clients.Terminal, Reason: clients.ReasonInvalidSpec, Message: "a security group needs id or filter"}
	}
	return r.once("secgroup", f, func() (string, error) {
		list, err := r.s.Clients.Network.ListSecurityGroups(ctx, groups.ListOpts{
			Name: f.Name, Description: f.Description, ProjectID: f.ProjectID,
			Tags: joinTags(f.Tags), TagsAny: joinTags(f.TagsAny), NotTags: joinTags(f.NotTags), NotTagsAny: joinTags(f.NotTagsAny),
		})
		if err != nil {
			return "", clients.Classify(err, "looking up a security group")
		}
		return only("security group", f, list, func(i int) string { return list[i].ID })
	})
}

func (r *resolver) port(ctx context.Context, req Request, i int, p infrav1.PortOpts) (infrav1.ResolvedPortSpec, error) {
	spec := req.Spec
	netID, err := r.network(ctx, p.Network)
	if err != nil {
		return infrav1.ResolvedPortSpec{}, err
	}
	rp := infrav1.ResolvedPortSpec{
		Name:                   PortName(req.Name, i, p),
		Description:            ptr.Deref(p.Description, ""),
		NetworkID:              netID,
		ResolvedPortSpecFields: *p.ResolvedPortSpecFields.DeepCopy(),
	}
	trunk := ptr.Deref(spec.Trunk, false)
	if p.Trunk != nil {
		trunk = *p.Trunk
	}
	rp.Trunk = ptr.To(trunk)

	// Port tags are the server's tags plus the port's own.
	seen := map[infrav1.NeutronTag]bool{}
	for _, t := range spec.Tags {
		if !seen[infrav1.NeutronTag(t)] {
			seen[infrav1.NeutronTag(t)] = true
			rp.Tags = append(rp.Tags, infrav1.NeutronTag(t))
		}
	}
	for _, t := range p.Tags {
		if !seen[t] {
			seen[t] = true
			rp.Tags = append(rp.Tags, t)
		}
	}

	for _, f := range p.FixedIPs {
		var fip infrav1.ResolvedFixedIP
		fip.IPAddress = f.IPAddress
		if f.Subnet != nil {
			id, err := r.subnet(ctx, netID, f.Subnet)
			if err != nil {
				return rp, err
			}
			if id != "" {
				fip.Subnet = ptr.To(id)
			}
		}
		rp.FixedIPs = append(rp.FixedIPs, fip)
	}

	// A port with port security disabled takes no security groups; else
	// its own, or the server's.
	if !ptr.Deref(p.EnablePortSecurity, true) {
		return rp, nil
	}
	sgs := p.SecurityGroups
	if len(sgs) == 0 {
		sgs = spec.SecurityGroups
	}
	for _, sg := range sgs {
		id, err := r.securityGroup(ctx, sg)
		if err != nil {
			return rp, err
		}
		rp.SecurityGroups = append(rp.SecurityGroups, id)
	}
	return rp, nil
}
