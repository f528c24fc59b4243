package server

import (
	"context"
	"fmt"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/trunks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"k8s.io/utils/ptr"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/clients"
)

// Delete removes the server, then its trunks and ports, then the volumes
// Nova did not delete with it. It works from names alone when the status
// was lost (clusterctl move), and never waits: while the server is going
// away it returns a *Progress.
//
// Calls for a server with one port and a known ID: one GET and one DELETE
// on the first pass, one GET (404) and one port DELETE on the next.
func Delete(ctx context.Context, s Scope, req Request, known Known) error {
	if err := deleteInstance(ctx, s, req, known.InstanceID); err != nil {
		return err
	}
	if err := deletePorts(ctx, s, req, known); err != nil {
		return err
	}
	return deleteVolumes(ctx, s, req)
}

func deleteInstance(ctx context.Context, s Scope, req Request, id string) error {
	var ids []string
	pending := false
	if id != "" {
		srv, err := s.Clients.Compute.GetServer(ctx, id)
		switch {
		case err == nil && srv.TaskState == "deleting":
			pending = true
		case err == nil:
			if !gone(srv.Status) {
				ids = append(ids, srv.ID)
			}
		case clients.Classify(err, "").Reason == clients.ReasonNotFound:
		default:
			return clients.Classify(err, "reading server "+req.Name)
		}
	} else {
		found, err := s.Clients.Compute.ListServersByName(ctx, req.Name)
		if err != nil {
			return clients.Classify(err, "looking up server "+req.Name)
		}
		for _, f := range found {
			if f.TaskState == "deleting" {
				pending = true
			} else if !gone(f.Status) {
				ids = append(ids, f.ID)
			}
		}
	}
	if len(ids) == 0 && !pending {
		return nil
	}
	for _, sid := range ids {
		if err := s.Clients.Compute.DeleteServer(ctx, sid); err != nil {
			if e := clients.Classify(err, "deleting server "+req.Name); e.Reason != clients.ReasonNotFound {
				return e
			}
		}
		s.Log.Info("Deleting server", "server", req.Name, "id", sid)
	}
	return waitFor(infrav1.DeletingReason, "waiting for Nova to delete server %s", 3*time.Second, req.Name)
}

func gone(status string) bool {
	return status == string(infrav1.InstanceStateDeleted) || status == string(infrav1.InstanceStateSoftDeleted)
}

func deletePorts(ctx context.Context, s Scope, req Request, known Known) error {
	// The port names follow from the spec alone, so a lost status still
	// finds them.
	names := make([]string, 0, len(req.Spec.Ports))
	trunked := map[string]bool{}
	for i, p := range req.Spec.Ports {
		n := PortName(req.Name, i, p)
		names = append(names, n)
		trunk := ptr.Deref(req.Spec.Trunk, false)
		if p.Trunk != nil {
			trunk = *p.Trunk
		}
		trunked[n] = trunk
	}
	var list []ports.Port
	if ids := portIDs(known.Resources); len(ids) == len(names) && len(names) > 0 {
		for i, id := range ids {
			list = append(list, ports.Port{ID: id, Name: names[i]})
		}
	} else if len(names) > 0 {
		found, err := s.Clients.Network.ListPorts(ctx, portsByName{projectID: s.Clients.ProjectID, names: names})
		if err != nil {
			return clients.Classify(err, "listing the server's ports")
		}
		list = found
	}
	for _, p := range list {
		if trunked[p.Name] {
			if err := deleteTrunks(ctx, s, p); err != nil {
				return err
			}
		}
		if err := s.Clients.Network.DeletePort(ctx, p.ID); err != nil {
			if e := clients.Classify(err, "deleting port "+p.Name); e.Reason != clients.ReasonNotFound {
				return e
			}
		}
		s.Log.V(2).Info("Deleted port", "port", p.Name, "id", p.ID)
	}
	return nil
}

func deleteTrunks(ctx context.Context, s Scope, p ports.Port) error {
	list, err := s.Clients.Network.ListTrunks(ctx, trunks.ListOpts{PortID: p.ID})
	if err != nil {
		return clients.Classify(err, "looking up the trunk of port "+p.Name)
	}
	for _, t := range list {
		if err := s.Clients.Network.DeleteTrunk(ctx, t.ID); err != nil {
			if e := clients.Classify(err, "deleting trunk "+t.Name); e.Reason != clients.ReasonNotFound {
				// 409: the trunk is still bound while Nova unplugs; retry.
				return e
			}
		}
	}
	return nil
}

// deleteVolumes deletes the volumes created through Cinder (those with an
// explicit zone). Nova deletes them with the server once attached, so this
// only finds volumes whose server was never created.
func deleteVolumes(ctx context.Context, s Scope, req Request) error {
	var pending []string
	for _, v := range volumeSpecs(req) {
		if v.AZ == "" {
			continue
		}
		if s.Clients.Volume == nil {
			return nil
		}
		list, err := s.Clients.Volume.ListVolumes(ctx, volumes.ListOpts{Name: v.VolumeName})
		if err != nil {
			return clients.Classify(err, "looking up volume "+v.VolumeName)
		}
		for _, vol := range list {
			switch vol.Status {
			case "deleting":
				pending = append(pending, v.VolumeName)
				continue
			case "in-use", "attaching", "detaching", "creating":
				pending = append(pending, fmt.Sprintf("%s (%s)", v.VolumeName, vol.Status))
				continue
			}
			if err := s.Clients.Volume.DeleteVolume(ctx, vol.ID); err != nil {
				if e := clients.Classify(err, "deleting volume "+v.VolumeName); e.Reason != clients.ReasonNotFound {
					return e
				}
			}
			pending = append(pending, v.VolumeName)
		}
	}
	if len(pending) > 0 {
		return waitFor(infrav1.DeletingReason, "waiting for volumes to go away: %v", 3*time.Second, pending)
	}
	return nil
}
