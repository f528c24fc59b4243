package server

import (
	"context"
	"fmt"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/clients"
)

// Volumes are made by Nova from block device mappings whenever possible:
// that costs no Cinder call and no wait. A volume is created through
// Cinder first only when it must land in an explicit availability zone,
// which block device mappings cannot express.

// volumeSpec is one volume the server needs.
type volumeSpec struct {
	// Name is root or the block device's name.
	Name string
	// VolumeName is the Cinder name.
	VolumeName string
	SizeGiB    int
	Type       string
	// AZ is non-empty when the volume must be created through Cinder.
	AZ string
	// Root is the boot volume, made from the image.
	Root bool
}

// volumeAZ returns the explicit zone of a volume, or "".
func volumeAZ(v *infrav1.BlockDeviceVolume, machineAZ string) string {
	if v == nil || v.AvailabilityZone == nil {
		return ""
	}
	if v.AvailabilityZone.From == infrav1.VolumeAZFromMachine {
		return machineAZ
	}
	if v.AvailabilityZone.Name != nil {
		return string(*v.AvailabilityZone.Name)
	}
	return ""
}

// volumeSpecs lists the Cinder volumes of the request (not local disks).
func volumeSpecs(req Request) []volumeSpec {
	var out []volumeSpec
	if rv := req.Spec.RootVolume; rv != nil && rv.SizeGiB > 0 {
		out = append(out, volumeSpec{Name: "root", VolumeName: RootVolumeName(req.Name), SizeGiB: int(rv.SizeGiB),
			Type: rv.Type, AZ: volumeAZ(&rv.BlockDeviceVolume, req.MachineAZ), Root: true})
	}
	for _, bd := range req.Spec.AdditionalBlockDevices {
		if bd.Storage.Type != infrav1.VolumeBlockDevice {
			continue
		}
		vs := volumeSpec{Name: bd.Name, VolumeName: BlockDeviceVolumeName(req.Name, bd.Name), SizeGiB: int(bd.SizeGiB)}
		if bd.Storage.Volume != nil {
			vs.Type = bd.Storage.Volume.Type
			vs.AZ = volumeAZ(bd.Storage.Volume, req.MachineAZ)
		}
		out = append(out, vs)
	}
	return out
}

// EnsureVolumes creates, or adopts by name, the volumes that must exist
// before the server boots, and reports them once all are available.
// Calls: none when no volume needs an explicit zone; else per volume one
// lookup (by ID when known, else by name) and one create when missing.
func EnsureVolumes(ctx context.Context, s Scope, req Request, resolved *infrav1alpha1.ResolvedServerSpec, known []infrav1alpha1.VolumeStatus) ([]infrav1alpha1.VolumeStatus, error) {
	var pre []volumeSpec
	for _, v := range volumeSpecs(req) {
		if v.AZ != "" {
			pre = append(pre, v)
		}
	}
	if len(pre) == 0 {
		return nil, nil
	}
	if s.Clients.Volume == nil {
		return nil, &clients.Error{Class: clients.Terminal, Reason: clients.ReasonInvalidSpec,
			Message: "a volume needs an explicit availability zone, but the cloud has no Cinder (volumev3) endpoint"}
	}
	knownID := map[string]string{}
	for _, k := range known {
		knownID[k.Name] = k.ID
	}
	var out []infrav1alpha1.VolumeStatus
	var pending []string
	for _, v := range pre {
		vol, err := findOrCreateVolume(ctx, s, req.Name, v, knownID[v.Name], resolved)
		if err != nil {
			return out, err
		}
		out = append(out, infrav1alpha1.VolumeStatus{Name: v.Name, ID: vol.ID})
		switch vol.Status {
		// in-use: Nova has attached it, so the server exists although the
		// caller did not know (a lost status); the server step adopts it.
		case "available", "in-use":
		case "error":
			return out, &clients.Error{Class: clients.Terminal, Reason: clients.ReasonInvalidSpec,
				Message: fmt.Sprintf("volume %s (%s) is in error state in Cinder; delete it to have it recreated", v.VolumeName, vol.ID)}
		default:
			pending = append(pending, fmt.Sprintf("%s is %s", v.VolumeName, vol.Status))
		}
	}
	if len(pending) > 0 {
		return out, waitFor("VolumesCreating", "waiting for volumes: %v", 2*time.Second, pending)
	}
	return out, nil
}

func findOrCreateVolume(ctx context.Context, s Scope, server string, v volumeSpec, id string, resolved *infrav1alpha1.ResolvedServerSpec) (*volumes.Volume, error) {
	if id != "" {
		vol, err := s.Clients.Volume.GetVolume(ctx, id)
		if err == nil {
			return vol, nil
		}
		if e := clients.Classify(err, "reading volume "+v.VolumeName); e.Reason != clients.ReasonNotFound {
			return nil, e
		}
	}
	list, err := s.Clients.Volume.ListVolumes(ctx, volumes.ListOpts{Name: v.VolumeName})
	if err != nil {
		return nil, clients.Classify(err, "looking up volume "+v.VolumeName)
	}
	switch len(list) {
	case 0:
	case 1:
		return &list[0], nil
	default:
		return nil, &clients.Error{Class: clients.Terminal, Reason: clients.ReasonAmbiguous,
			Message: fmt.Sprintf("more than one volume is named %q; delete the extra one", v.VolumeName)}
	}
	opts := volumes.CreateOpts{Name: v.VolumeName, Size: v.SizeGiB, VolumeType: v.Type, AvailabilityZone: v.AZ,
		Description: "Created by ocp-capi for server " + server}
	if v.Root {
		opts.ImageID = resolved.ImageID
	}
	vol, err := s.Clients.Volume.CreateVolume(ctx, opts)
	if err != nil {
		return nil, clients.Classify(err, "creating volume "+v.VolumeName)
	}
	s.Log.V(2).Info("Created volume", "volume", v.VolumeName, "id", vol.ID)
	return vol, nil
}
