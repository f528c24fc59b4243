package server_test

import (
	"testing"

	"k8s.io/utils/ptr"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/clients"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/server"
	"github.com/ocp-capi/ocp-capi/test/fakeopenstack"
)

func zone(name string) *infrav1.VolumeAvailabilityZone {
	return &infrav1.VolumeAvailabilityZone{From: infrav1.VolumeAZFromName, Name: ptr.To(infrav1.VolumeAZName(name))}
}

// rootInZone asks for a 50 GiB root volume in availability zone az1.
func rootInZone(s *infrav1alpha1.OpenStackServerSpec) {
	s.RootVolume = &infrav1.RootVolume{SizeGiB: 50, BlockDeviceVolume: infrav1.BlockDeviceVolume{Type: "ssd", AvailabilityZone: zone("az1")}}
}

func twoZones(c *fakeopenstack.Cloud) { c.SetAvailabilityZones("nova", "az1") }

func TestEnsureVolumesNothingWithoutAnExplicitZone(t *testing.T) {
	e := newEnv(t)
	req := e.request("worker-a", e.spec(func(s *infrav1alpha1.OpenStackServerSpec) {
		s.RootVolume = &infrav1.RootVolume{SizeGiB: 50}
		s.AdditionalBlockDevices = []infrav1.AdditionalBlockDevice{
			{Name: "etcd", SizeGiB: 10, Storage: infrav1.BlockDeviceStorage{Type: infrav1.VolumeBlockDevice}},
			{Name: "scratch", SizeGiB: 10, Storage: infrav1.BlockDeviceStorage{Type: infrav1.LocalBlockDevice}},
		}
	}))
	got, err := server.EnsureVolumes(e.ctx, e.s, req, e.resolve(req), nil)
	if err != nil || got != nil {
		t.Errorf("got %v %v, want nothing", got, err)
	}
	e.wantCalls()
}

func TestEnsureVolumesCreatesAndWaits(t *testing.T) {
	e := newEnv(t, twoZones)
	req := e.request("worker-a", e.spec(rootInZone, func(s *infrav1alpha1.OpenStackServerSpec) {
		s.AdditionalBlockDevices = []infrav1.AdditionalBlockDevice{{Name: "etcd", SizeGiB: 10, Storage: infrav1.BlockDeviceStorage{
			Type: infrav1.VolumeBlockDevice, Volume: &infrav1.BlockDeviceVolume{AvailabilityZone: &infrav1.VolumeAvailabilityZone{From: infrav1.VolumeAZFromMachine}}}}}
	}))
	req.MachineAZ = "az1"
	resolved := e.resolve(req)

	known, err := server.EnsureVolumes(e.ctx, e.s, req, resolved, nil)
	if !progress(err) || len(known) != 2 || known[0].Name != "root" || known[1].Name != "etcd" {
		t.Fatalf("first pass: %v %v, want both volumes and a Progress", known, err)
	}
	e.wantCalls("GET "+pathVolumeList, "POST "+pathVolumes, "GET "+pathVolumeList, "POST "+pathVolumes)
	root, etcd := e.cloud.Object(fakeopenstack.Volumes, known[0].ID), e.cloud.Object(fakeopenstack.Volumes, known[1].ID)
	if root["name"] != "worker-a-root" || root["size"] != 50.0 || root["availability_zone"] != "az1" || root["volume_type"] != "ssd" ||
		root["bootable"] != "true" || root["volume_image_metadata"].(map[string]any)["image_id"] != e.image {
		t.Errorf("root volume %v", root)
	}
	if etcd["name"] != "worker-a-etcd" || etcd["availability_zone"] != "az1" || etcd["bootable"] != "false" {
		t.Errorf("etcd volume %v", etcd)
	}

	// Known volumes are read by ID until they are available.
	for pass := 2; ; pass++ {
		e.cloud.ResetRequests()
		got, err := server.EnsureVolumes(e.ctx, e.s, req, resolved, known)
		e.wantCalls("GET "+pathVolume, "GET "+pathVolume)
		if err == nil {
			if len(got) != 2 || got[0] != known[0] || got[1] != known[1] {
				t.Errorf("done: %v, want %v", got, known)
			}
			break
		}
		if !progress(err) || pass > 3 {
			t.Fatalf("pass %d: %v", pass, err)
		}
	}
}

func TestEnsureVolumesAdoptsByName(t *testing.T) {
	e := newEnv(t, twoZones)
	req := e.request("worker-a", e.spec(rootInZone))
	resolved := e.resolve(req)
	first, _ := server.EnsureVolumes(e.ctx, e.s, req, resolved, nil)
	e.cloud.ResetRequests()

	again, err := server.EnsureVolumes(e.ctx, e.s, req, resolved, nil)
	if !progress(err) || len(again) != 1 || again[0] != first[0] {
		t.Errorf("adopted %v %v, want %v", again, err, first)
	}
	if n := e.cloud.Len(fakeopenstack.Volumes); n != 1 {
		t.Errorf("%d volumes, want 1", n)
	}
	e.wantCalls("GET " + pathVolumeList)
}

// After a lost status the server exists and Nova has attached the volume:
// it is adopted, not waited for.
func TestEnsureVolumesAttachedAfterALostStatus(t *testing.T) {
	e := newEnv(t, twoZones)
	req := e.request("worker-a", e.spec(rootInZone))
	known, _ := e.converge(req)
	got, err := server.EnsureVolumes(e.ctx, e.s, req, known.Resolved, nil)
	if err != nil || len(got) != 1 || got[0].ID != known.Resources.Volumes[0].ID {
		t.Errorf("got %v %v, want the attached root volume %v", got, err, known.Resources.Volumes)
	}
}

func TestEnsureVolumesErrors(t *testing.T) {
	t.Run("volume in error", func(t *testing.T) {
		e := newEnv(t, twoZones)
		req := e.request("worker-a", e.spec(rootInZone))
		resolved := e.resolve(req)
		known, _ := server.EnsureVolumes(e.ctx, e.s, req, resolved, nil)
		e.cloud.Set(fakeopenstack.Volumes, known[0].ID, "status", "error")
		_, err := server.EnsureVolumes(e.ctx, e.s, req, resolved, known)
		wantError(t, err, clients.Terminal, clients.ReasonInvalidSpec, "worker-a-root", "error state")
	})
	t.Run("no Cinder", func(t *testing.T) {
		e := newEnv(t, twoZones, func(c *fakeopenstack.Cloud) { c.HideService("block-storage") })
		req := e.request("worker-a", e.spec(rootInZone))
		_, err := server.EnsureVolumes(e.ctx, e.s, req, e.resolve(req), nil)
		wantError(t, err, clients.Terminal, clients.ReasonInvalidSpec, "Cinder")
	})
	t.Run("unknown zone", func(t *testing.T) {
		e := newEnv(t)
		req := e.request("worker-a", e.spec(rootInZone))
		_, err := server.EnsureVolumes(e.ctx, e.s, req, e.resolve(req), nil)
		wantError(t, err, clients.Terminal, clients.ReasonInvalidSpec, "creating volume worker-a-root", "az1")
	})
	t.Run("quota", func(t *testing.T) {
		e := newEnv(t, twoZones, func(c *fakeopenstack.Cloud) { c.SetQuota(fakeopenstack.QuotaVolumes, 0) })
		req := e.request("worker-a", e.spec(rootInZone))
		_, err := server.EnsureVolumes(e.ctx, e.s, req, e.resolve(req), nil)
		wantError(t, err, clients.Terminal, clients.ReasonQuota, "creating volume worker-a-root")
	})
}
