package server

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/trunks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"k8s.io/utils/ptr"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/clients"
)

// Neutron extension aliases this package looks for.
const (
	extTrunk       = "trunk"
	extTagCreation = "tag-creation"
	extTags        = "standard-attr-tag"
	// extUplinkStatus is Neutron's uplink-status-propagation (the ML2
	// extension driver uplink_status_propagation).
	extUplinkStatus = "uplink-status-propagation"
)

// portsByName lists the ports with any of the names, in one request
// (Neutron turns repeated filters into IN), limited to one project so that
// an admin credential cannot adopt another project's port.
type portsByName struct {
	projectID string
	names     []string
}

func (p portsByName) ToPortListQuery() (string, error) {
	q := url.Values{}
	for _, n := range p.names {
		q.Add("name", n)
	}
	if p.projectID != "" {
		q.Set("project_id", p.projectID)
	}
	return "?" + q.Encode(), nil
}

// EnsurePorts makes every resolved port, and its trunk, exist, and returns
// them in spec order. A port is reported only once its trunk (if any)
// exists too, so a crash between the two is repaired on the next pass.
//
// Calls: none when every port is known; otherwise one list for the unknown
// names, one create per missing port (plus a tag call if the cloud cannot
// tag at create), one trunk lookup per adopted trunk port and one create
// per missing trunk.
func EnsurePorts(ctx context.Context, s Scope, resolved []infrav1.ResolvedPortSpec, known []infrav1.PortStatus) ([]infrav1.PortStatus, error) {
	if allKnown(resolved, known) {
		return known, nil
	}
	byName, err := portsToAdopt(ctx, s, resolved, known)
	if err != nil {
		return known, err
	}
	ext := &neutronExtensions{s: s}
	out := make([]infrav1.PortStatus, 0, len(resolved))
	for i, rp := range resolved {
		if i < len(known) && known[i].ID != "" {
			out = append(out, known[i])
			continue
		}
		st, err := ensurePort(ctx, s, ext, rp, byName)
		if err != nil {
			return out, err
		}
		out = append(out, st)
	}
	return out, nil
}

// allKnown reports whether the status already names every port.
func allKnown(resolved []infrav1.ResolvedPortSpec, known []infrav1.PortStatus) bool {
	if len(known) != len(resolved) || len(resolved) == 0 {
		return false
	}
	for _, p := range known {
		if p.ID == "" {
			return false
		}
	}
	return true
}

// portsToAdopt looks up, in one list, the ports the status does not name,
// by name. Several ports with one name are what a create whose answer was
// lost leaves (a timeout, a killed manager): the one attached to a device
// is kept, or the oldest if none is, and the unattached others are
// deleted. Two attached ports with one name are refused, not guessed.
func portsToAdopt(ctx context.Context, s Scope, resolved []infrav1.ResolvedPortSpec, known []infrav1.PortStatus) (map[string]ports.Port, error) {
	byName := map[string]ports.Port{}
	var missing []string
	for i, rp := range resolved {
		if i < len(known) && known[i].ID != "" {
			continue
		}
		missing = append(missing, rp.Name)
	}
	if len(missing) == 0 {
		return byName, nil
	}
	existing, err := s.Clients.Network.ListPorts(ctx, portsByName{projectID: s.Clients.ProjectID, names: missing})
	if err != nil {
		return nil, clients.Classify(err, "listing the server's ports")
	}
	trunked := map[string]bool{}
	for _, rp := range resolved {
		trunked[rp.Name] = ptr.Deref(rp.Trunk, false)
	}
	same := map[string][]ports.Port{}
	for _, p := range existing {
		same[p.Name] = append(same[p.Name], p)
	}
	for name, ps := range same {
		keep, extra, err := keepOnePort(name, ps)
		if err != nil {
			return nil, err
		}
		for _, p := range extra {
			// A lost create of a trunk port may have made its trunk too.
			if trunked[name] {
				if err := deleteTrunks(ctx, s, p); err != nil {
					return nil, err
				}
			}
			if err := s.Clients.Network.DeletePort(ctx, p.ID); err != nil {
				if e := clients.Classify(err, "deleting the extra port "+name); e.Reason != clients.ReasonNotFound {
					return nil, e
				}
			}
			s.Log.Info("Deleted an extra port left by a lost create", "port", name, "id", p.ID, "kept", keep.ID)
		}
		byName[name] = keep
	}
	return byName, nil
}

// keepOnePort chooses, among the ports that carry one name, the one to
// adopt: the one attached to a device, else the oldest (then the lowest
// ID). The others are extras to delete; two attached ones are refused.
func keepOnePort(name string, ps []ports.Port) (ports.Port, []ports.Port, error) {
	sorted := slices.Clone(ps)
	slices.SortFunc(sorted, func(a, b ports.Port) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	keep := -1
	for i, p := range sorted {
		if p.DeviceID == "" {
			continue
		}
		if keep >= 0 {
			return ports.Port{}, nil, &clients.Error{Class: clients.Terminal, Reason: clients.ReasonAmbiguous,
				Message: fmt.Sprintf("more than one port is named %q and attached; delete the extra one", name)}
		}
		keep = i
	}
	if keep < 0 {
		keep = 0
	}
	extra := append(slices.Clone(sorted[:keep]), sorted[keep+1:]...)
	return sorted[keep], extra, nil
}

// neutronExtensions reads Neutron's extensions when a step first needs
// them: a pass that only adopts tagged ports never asks.
type neutronExtensions struct {
	s   Scope
	ext map[string]bool
}

func (n *neutronExtensions) get(ctx context.Context) (map[string]bool, error) {
	if n.ext != nil {
		return n.ext, nil
	}
	e, err := n.s.Clients.Network.Extensions(ctx)
	if err != nil {
		return nil, clients.Classify(err, "listing Neutron extensions")
	}
	n.ext = e
	return e, nil
}

// ensurePort adopts the port named for rp (byName) or creates it, then
// its trunk if it asks for one.
func ensurePort(ctx context.Context, s Scope, ext *neutronExtensions, rp infrav1.ResolvedPortSpec, byName map[string]ports.Port) (infrav1.PortStatus, error) {
	port, adopted := byName[rp.Name]
	if !adopted {
		e, err := ext.get(ctx)
		if err != nil {
			return infrav1.PortStatus{}, err
		}
		created, err := createPort(ctx, s, rp, e)
		if err != nil {
			return infrav1.PortStatus{}, err
		}
		port = *created
		s.Log.V(2).Info("Created port", "port", rp.Name, "id", port.ID)
	} else {
		s.Log.V(2).Info("Adopted port", "port", rp.Name, "id", port.ID)
		if err := retagPort(ctx, s, ext, rp, port); err != nil {
			return infrav1.PortStatus{}, err
		}
	}
	if ptr.Deref(rp.Trunk, false) {
		e, err := ext.get(ctx)
		if err != nil {
			return infrav1.PortStatus{}, err
		}
		if !e[extTrunk] {
			return infrav1.PortStatus{}, &clients.Error{Class: clients.Terminal, Reason: clients.ReasonInvalidSpec,
				Message: fmt.Sprintf("port %s asks for a trunk but Neutron has no %q extension", rp.Name, extTrunk)}
		}
		if err := ensureTrunk(ctx, s, rp, port.ID, adopted, e); err != nil {
			return infrav1.PortStatus{}, err
		}
	}
	return infrav1.PortStatus{ID: port.ID, MACAddress: port.MACAddress}, nil
}

// retagPort makes again a tag call that failed after an adopted port was
// created. The port keeps the tags it has: one adopted from another
// actuator (a Machine API machine that moved to Cluster API) keeps its.
func retagPort(ctx context.Context, s Scope, ext *neutronExtensions, rp infrav1.ResolvedPortSpec, port ports.Port) error {
	tags := tagStrings(rp.Tags)
	if subset(tags, port.Tags) {
		return nil
	}
	e, err := ext.get(ctx)
	if err != nil || !e[extTags] {
		return err
	}
	if err := s.Clients.Network.ReplaceAllTags(ctx, "ports", port.ID, union(port.Tags, tags)); err != nil {
		return clients.Classify(err, "tagging port "+rp.Name)
	}
	return nil
}

// portCreate is a port create request with the extension attributes
// gophercloud keeps in separate builders.
type portCreate struct {
	ports.CreateOpts
	rp   infrav1.ResolvedPortSpec
	tags []string
}

func (p portCreate) ToPortCreateMap() (map[string]any, error) {
	body, err := p.CreateOpts.ToPortCreateMap()
	if err != nil {
		return nil, err
	}
	port := body["port"].(map[string]any)
	if p.rp.HostID != nil {
		port["binding:host_id"] = *p.rp.HostID
	}
	if p.rp.VNICType != nil {
		port["binding:vnic_type"] = *p.rp.VNICType
	}
	if prof := bindingProfile(p.rp.Profile); len(prof) > 0 {
		port["binding:profile"] = prof
	}
	if p.rp.EnablePortSecurity != nil {
		port["port_security_enabled"] = *p.rp.EnablePortSecurity
	}
	if len(p.tags) > 0 {
		port["tags"] = p.tags
	}
	return body, nil
}

func bindingProfile(b *infrav1.BindingProfile) map[string]any {
	if b == nil {
		return nil
	}
	out := map[string]any{}
	if ptr.Deref(b.OVSHWOffload, false) {
		out["capabilities"] = []string{"switchdev"}
	}
	if ptr.Deref(b.TrustedVF, false) {
		out["trusted"] = true
	}
	return out
}

func tagStrings(t []infrav1.NeutronTag) []string {
	out := make([]string, len(t))
	for i := range t {
		out[i] = string(t[i])
	}
	return out
}

func createPort(ctx context.Context, s Scope, rp infrav1.ResolvedPortSpec, ext map[string]bool) (*ports.Port, error) {
	opts := ports.CreateOpts{
		NetworkID:    rp.NetworkID,
		Name:         rp.Name,
		Description:  rp.Description,
		AdminStateUp: rp.AdminStateUp,
		MACAddress:   ptr.Deref(rp.MACAddress, ""),
	}
	if rp.PropagateUplinkStatus != nil {
		if !ext[extUplinkStatus] {
			return nil, &clients.Error{Class: clients.Terminal, Reason: clients.ReasonInvalidSpec,
				Message: fmt.Sprintf("port %s sets propagateUplinkStatus but Neutron has no %q extension (ML2 extension driver uplink_status_propagation)", rp.Name, extUplinkStatus)}
		}
		opts.PropagateUplinkStatus = ptr.To(*rp.PropagateUplinkStatus)
	}
	if len(rp.FixedIPs) > 0 {
		ips := make([]ports.IP, 0, len(rp.FixedIPs))
		for _, f := range rp.FixedIPs {
			ips = append(ips, ports.IP{SubnetID: ptr.Deref(f.Subnet, ""), IPAddress: ptr.Deref(f.IPAddress, "")})
		}
		opts.FixedIPs = ips
	}
	if len(rp.SecurityGroups) > 0 {
		opts.SecurityGroups = ptr.To(append([]string(nil), rp.SecurityGroups...))
	} else if !ptr.Deref(rp.EnablePortSecurity, true) {
		// Port security off: Neutron refuses the default group.
		opts.SecurityGroups = &[]string{}
	}
	for _, ap := range rp.AllowedAddressPairs {
		opts.AllowedAddressPairs = append(opts.AllowedAddressPairs, ports.AddressPair{IPAddress: ap.IPAddress, MACAddress: ptr.Deref(ap.MACAddress, "")})
	}
	if len(rp.ValueSpecs) > 0 {
		vs := map[string]string{}
		for _, v := range rp.ValueSpecs {
			vs[v.Key] = v.Value
		}
		opts.ValueSpecs = &vs
	}
	tags := tagStrings(rp.Tags)
	req := portCreate{CreateOpts: opts, rp: rp}
	tagAtCreate := ext[extTagCreation]
	if tagAtCreate {
		req.tags = tags
	}
	port, err := s.Clients.Network.CreatePort(ctx, req)
	if err != nil {
		return nil, clients.Classify(err, "creating port "+rp.Name)
	}
	if len(tags) > 0 && !tagAtCreate {
		if !ext[extTags] {
			s.Log.Info("Neutron cannot tag ports; tags dropped", "port", rp.Name)
		} else if err := s.Clients.Network.ReplaceAllTags(ctx, "ports", port.ID, tags); err != nil {
			// The port exists and is adopted by name next time; tagging
			// it again is cheap, so fail this pass.
			return nil, clients.Classify(err, "tagging port "+rp.Name)
		}
		port.Tags = tags
	}
	return port, nil
}

func ensureTrunk(ctx context.Context, s Scope, rp infrav1.ResolvedPortSpec, portID string, adopted bool, ext map[string]bool) error {
	if adopted {
		// Only an adopted port can already be a trunk parent.
		existing, err := s.Clients.Network.ListTrunks(ctx, trunks.ListOpts{PortID: portID})
		if err != nil {
			return clients.Classify(err, "looking up the trunk of port "+rp.Name)
		}
		if len(existing) > 0 {
			// A tag call that failed after the create is made again.
			if tags := tagStrings(rp.Tags); len(existing) == 1 && !subset(tags, existing[0].Tags) && ext[extTags] {
				if err := s.Clients.Network.ReplaceAllTags(ctx, "trunks", existing[0].ID, union(existing[0].Tags, tags)); err != nil {
					return clients.Classify(err, "tagging the trunk of port "+rp.Name)
				}
			}
			return nil
		}
	}
	opts := trunks.CreateOpts{PortID: portID, Name: TrunkName(rp.Name), Description: rp.Description}
	tr, err := s.Clients.Network.CreateTrunk(ctx, opts)
	if err != nil {
		return clients.Classify(err, "creating the trunk of port "+rp.Name)
	}
	if tags := tagStrings(rp.Tags); len(tags) > 0 && ext[extTags] {
		if err := s.Clients.Network.ReplaceAllTags(ctx, "trunks", tr.ID, tags); err != nil {
			return clients.Classify(err, "tagging the trunk of port "+rp.Name)
		}
	}
	return nil
}

// portIDs lists the IDs of the known ports.
func portIDs(r *infrav1alpha1.ServerResources) []string {
	if r == nil {
		return nil
	}
	out := make([]string, 0, len(r.Ports))
	for _, p := range r.Ports {
		if p.ID != "" {
			out = append(out, p.ID)
		}
	}
	return out
}

// union is have followed by the tags of add it lacks.
func union(have, add []string) []string {
	out := slices.Clone(have)
	for _, t := range add {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

func subset(want, have []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}
