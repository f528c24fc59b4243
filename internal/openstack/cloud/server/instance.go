package server

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/clients"
)

// ErrInstanceGone means a server that was created before no longer exists.
var ErrInstanceGone = errors.New("the server no longer exists in OpenStack")

// EnsureInstance returns the server, creating it when it does not exist.
//
// Calls: with a known ID, one GET (the steady-state read). Without one,
// one lookup by name (adoption after a lost status write) and, when
// nothing is found, one create.
func EnsureInstance(ctx context.Context, s Scope, req Request, resolved *infrav1alpha1.ResolvedServerSpec, res *infrav1alpha1.ServerResources, knownID string) (*servers.Server, error) {
	if knownID != "" {
		srv, err := s.Clients.Compute.GetServer(ctx, knownID)
		if err == nil {
			return srv, nil
		}
		e := clients.Classify(err, "reading server "+req.Name)
		if e.Reason == clients.ReasonNotFound {
			return nil, ErrInstanceGone
		}
		return nil, e
	}
	found, err := s.Clients.Compute.ListServersByName(ctx, req.Name)
	if err != nil {
		return nil, clients.Classify(err, "looking up server "+req.Name)
	}
	live := found[:0]
	for _, f := range found {
		if f.Status != string(infrav1.InstanceStateDeleted) && f.Status != string(infrav1.InstanceStateSoftDeleted) {
			live = append(live, f)
		}
	}
	switch len(live) {
	case 0:
	case 1:
		s.Log.V(2).Info("Adopted server", "server", req.Name, "id", live[0].ID)
		return &live[0], nil
	default:
		return nil, &clients.Error{Class: clients.Terminal, Reason: clients.ReasonAmbiguous,
			Message: fmt.Sprintf("%d servers are named %q in this project; delete the extra ones", len(live), req.Name)}
	}

	opts, hints, err := createOpts(req, resolved, res)
	if err != nil {
		return nil, err
	}
	srv, err := s.Clients.Compute.CreateServer(ctx, opts, hints)
	if err != nil {
		return nil, clients.Classify(err, "creating server "+req.Name)
	}
	s.Log.Info("Created server", "server", req.Name, "id", srv.ID)
	// The create answer holds only the ID; the status comes with the next
	// read.
	if srv.Status == "" {
		srv.Status = string(infrav1.InstanceStateBuild)
	}
	return srv, nil
}

// serverCreate adds key_name to gophercloud's create request (it lives in
// a separate extension builder there).
type serverCreate struct {
	servers.CreateOpts
	keyName string
}

func (c serverCreate) ToServerCreateMap() (map[string]any, error) {
	body, err := c.CreateOpts.ToServerCreateMap()
	if err != nil {
		return nil, err
	}
	if c.keyName != "" {
		body["server"].(map[string]any)["key_name"] = c.keyName
	}
	return body, nil
}

func createOpts(req Request, resolved *infrav1alpha1.ResolvedServerSpec, res *infrav1alpha1.ServerResources) (servers.CreateOptsBuilder, servers.SchedulerHintOptsBuilder, error) {
	spec := req.Spec
	if res == nil || len(res.Ports) != len(resolved.Ports) {
		return nil, nil, &clients.Error{Class: clients.Terminal, Reason: clients.ReasonInvalidSpec, Message: "the server's ports are not ready"}
	}
	opts := servers.CreateOpts{
		Name:             req.Name,
		FlavorRef:        resolved.FlavorID,
		ImageRef:         resolved.ImageID,
		UserData:         req.UserData,
		AvailabilityZone: ptr.Deref(spec.AvailabilityZone, ""),
		ConfigDrive:      spec.ConfigDrive,
		Tags:             append([]string(nil), spec.Tags...),
	}
	nets := make([]servers.Network, 0, len(res.Ports))
	for _, p := range res.Ports {
		nets = append(nets, servers.Network{Port: p.ID})
	}
	opts.Networks = nets
	if len(spec.ServerMetadata) > 0 {
		opts.Metadata = map[string]string{}
		for _, m := range spec.ServerMetadata {
			opts.Metadata[m.Key] = m.Value
		}
	}
	if rv := spec.RootVolume; rv != nil && rv.SizeGiB > 0 {
		// Booted from the root volume, which the mapping makes.
		opts.ImageRef = ""
	}
	opts.BlockDevice = blockDevices(spec, resolved, res)
	return serverCreate{CreateOpts: opts, keyName: spec.SSHKeyName}, schedulerHints(spec, resolved), nil
}

// blockDevices maps the root volume and the additional block devices;
// volumes created before the server (res.Volumes) are attached by ID.
func blockDevices(spec *infrav1alpha1.OpenStackServerSpec, resolved *infrav1alpha1.ResolvedServerSpec, res *infrav1alpha1.ServerResources) []servers.BlockDevice {
	pre := map[string]string{}
	for _, v := range res.Volumes {
		pre[v.Name] = v.ID
	}
	var bdm []servers.BlockDevice
	if rv := spec.RootVolume; rv != nil && rv.SizeGiB > 0 {
		if id, ok := pre["root"]; ok {
			bdm = append(bdm, servers.BlockDevice{SourceType: servers.SourceVolume, UUID: id, BootIndex: 0,
				DestinationType: servers.DestinationVolume, DeleteOnTermination: true, Tag: "root"})
		} else {
			bdm = append(bdm, servers.BlockDevice{SourceType: servers.SourceImage, UUID: resolved.ImageID, BootIndex: 0,
				DestinationType: servers.DestinationVolume, VolumeSize: int(rv.SizeGiB), VolumeType: rv.Type,
				DeleteOnTermination: true, Tag: "root"})
		}
	} else if len(spec.AdditionalBlockDevices) > 0 {
		// With any mapping, the image must be mapped too.
		bdm = append(bdm, servers.BlockDevice{SourceType: servers.SourceImage, UUID: resolved.ImageID, BootIndex: 0,
			DestinationType: servers.DestinationLocal, DeleteOnTermination: true})
	}
	for _, bd := range spec.AdditionalBlockDevices {
		d := servers.BlockDevice{BootIndex: -1, DeleteOnTermination: true, Tag: bd.Name, VolumeSize: int(bd.SizeGiB)}
		switch {
		case bd.Storage.Type == infrav1.LocalBlockDevice:
			d.SourceType, d.DestinationType = servers.SourceBlank, servers.DestinationLocal
		case pre[bd.Name] != "":
			d.SourceType, d.DestinationType, d.UUID, d.VolumeSize = servers.SourceVolume, servers.DestinationVolume, pre[bd.Name], 0
		default:
			d.SourceType, d.DestinationType = servers.SourceBlank, servers.DestinationVolume
			if bd.Storage.Volume != nil {
				d.VolumeType = bd.Storage.Volume.Type
			}
		}
		bdm = append(bdm, d)
	}
	return bdm
}

// schedulerHints are the server group and the additional hints; nil when
// there are none.
func schedulerHints(spec *infrav1alpha1.OpenStackServerSpec, resolved *infrav1alpha1.ResolvedServerSpec) servers.SchedulerHintOptsBuilder {
	if resolved.ServerGroupID == "" && len(spec.SchedulerHintAdditionalProperties) == 0 {
		return nil
	}
	h := servers.SchedulerHintOpts{Group: resolved.ServerGroupID}
	if len(spec.SchedulerHintAdditionalProperties) > 0 {
		h.AdditionalProperties = map[string]any{}
		for _, p := range spec.SchedulerHintAdditionalProperties {
			switch p.Value.Type {
			case infrav1.SchedulerHintTypeBool:
				h.AdditionalProperties[p.Name] = ptr.Deref(p.Value.Bool, false)
			case infrav1.SchedulerHintTypeNumber:
				h.AdditionalProperties[p.Name] = ptr.Deref(p.Value.Number, 0)
			default:
				h.AdditionalProperties[p.Name] = ptr.Deref(p.Value.String, "")
			}
		}
	}
	return h
}

// Addresses turns Nova's address map into machine addresses: fixed
// addresses are internal, floating ones external, and the server name is
// its internal DNS name. Sorted, so an unchanged server gives an unchanged
// status.
func Addresses(srv *servers.Server) []clusterv1.MachineAddress {
	if srv == nil {
		return nil
	}
	out := []clusterv1.MachineAddress{}
	nets := make([]string, 0, len(srv.Addresses))
	for n := range srv.Addresses {
		nets = append(nets, n)
	}
	sort.Strings(nets)
	for _, n := range nets {
		list, ok := srv.Addresses[n].([]any)
		if !ok {
			continue
		}
		for _, a := range list {
			m, ok := a.(map[string]any)
			if !ok {
				continue
			}
			addr, _ := m["addr"].(string)
			if addr == "" {
				continue
			}
			t := clusterv1.MachineInternalIP
			if typ, _ := m["OS-EXT-IPS:type"].(string); typ == "floating" {
				t = clusterv1.MachineExternalIP
			}
			out = append(out, clusterv1.MachineAddress{Type: t, Address: addr})
		}
	}
	if srv.Name != "" {
		out = append(out, clusterv1.MachineAddress{Type: clusterv1.MachineInternalDNS, Address: srv.Name})
	}
	return out
}

// AttachedVolumes returns the IDs of the volumes Nova reports attached,
// by device tag when it is known (root first).
func AttachedVolumes(srv *servers.Server, known []infrav1alpha1.VolumeStatus) []infrav1alpha1.VolumeStatus {
	if srv == nil || len(srv.AttachedVolumes) == 0 {
		return known
	}
	byID := map[string]string{}
	for _, k := range known {
		byID[k.ID] = k.Name
	}
	out := make([]infrav1alpha1.VolumeStatus, 0, len(srv.AttachedVolumes))
	for _, v := range srv.AttachedVolumes {
		out = append(out, infrav1alpha1.VolumeStatus{Name: byID[v.ID], ID: v.ID})
	}
	return out
}

// FaultMessage is Nova's reason for an ERROR server.
func FaultMessage(srv *servers.Server) string {
	if srv == nil || srv.Fault.Message == "" {
		return ""
	}
	if srv.Fault.Code != 0 {
		return fmt.Sprintf("%s (code %d)", srv.Fault.Message, srv.Fault.Code)
	}
	return srv.Fault.Message
}
