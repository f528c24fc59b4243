package server_test

import (
	"encoding/base64"
	"errors"
	"reflect"
	"testing"

	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/clients"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/server"
	"github.com/ocp-capi/ocp-capi/test/fakeopenstack"
)

// prepared resolves a request and makes its ports.
func (e *env) prepared(req server.Request) (*infrav1alpha1.ResolvedServerSpec, *infrav1alpha1.ServerResources) {
	e.t.Helper()
	resolved := e.resolve(req)
	res := &infrav1alpha1.ServerResources{Ports: e.ports(resolved, nil)}
	e.cloud.ResetRequests()
	return resolved, res
}

func TestEnsureInstanceCreatesOnceThenReads(t *testing.T) {
	e := newEnv(t)
	req := e.request("worker-a", e.spec())
	resolved, res := e.prepared(req)

	srv, err := server.EnsureInstance(e.ctx, e.s, req, resolved, res, "")
	if err != nil || srv.ID == "" || srv.Status != "BUILD" {
		t.Fatalf("create: %+v %v, want an ID in BUILD", srv, err)
	}
	e.wantCalls("GET "+pathServerList, "POST "+pathServers)
	if r, _ := e.cloud.Last("POST", pathServers); r.Header.Get("X-OpenStack-Nova-API-Version") != clients.ComputeMicroversion {
		t.Errorf("microversion %q, want %s", r.Header.Get("X-OpenStack-Nova-API-Version"), clients.ComputeMicroversion)
	}

	// With the ID known: exactly one GET per pass.
	for _, want := range []string{"BUILD", "ACTIVE"} {
		e.cloud.ResetRequests()
		got, err := server.EnsureInstance(e.ctx, e.s, req, resolved, res, srv.ID)
		if err != nil || got.ID != srv.ID || got.Status != want {
			t.Fatalf("read: %+v %v, want %s", got, err, want)
		}
		e.wantCalls("GET " + pathServer)
		if want == "ACTIVE" {
			addrs := server.Addresses(got)
			wantAddrs := []clusterv1.MachineAddress{{Type: clusterv1.MachineInternalIP, Address: "10.0.0.10"},
				{Type: clusterv1.MachineInternalDNS, Address: "worker-a"}}
			if !reflect.DeepEqual(addrs, wantAddrs) {
				t.Errorf("addresses %v, want %v", addrs, wantAddrs)
			}
		}
	}
	if n := e.cloud.Len(fakeopenstack.Servers); n != 1 {
		t.Errorf("%d servers, want 1", n)
	}
}

func TestEnsureInstanceAdoptsByName(t *testing.T) {
	e := newEnv(t)
	req := e.request("worker-a", e.spec())
	resolved, res := e.prepared(req)
	first, err := server.EnsureInstance(e.ctx, e.s, req, resolved, res, "")
	if err != nil {
		t.Fatal(err)
	}
	// The status write was lost: no ID.
	again, err := server.EnsureInstance(e.ctx, e.s, req, resolved, res, "")
	if err != nil || again.ID != first.ID {
		t.Fatalf("adopted %+v %v, want %s", again, err, first.ID)
	}
	if n := e.cloud.Hits("POST", pathServers); n != 1 {
		t.Errorf("%d creates, want 1", n)
	}
	// A similar name is not adopted (the name filter is a regexp).
	req2 := e.request("worker-a.0", e.spec())
	req2.Spec.Ports[0].NameSuffix = ptr.To("x")
	resolved2, res2 := e.prepared(req2)
	other, err := server.EnsureInstance(e.ctx, e.s, req2, resolved2, res2, "")
	if err != nil || other.ID == first.ID {
		t.Errorf("worker-a.0: %+v %v, want a new server", other, err)
	}
}

func TestEnsureInstanceErrors(t *testing.T) {
	t.Run("two servers with the name", func(t *testing.T) {
		e := newEnv(t)
		e.cloud.AddServer("worker-a", "ACTIVE")
		e.cloud.AddServer("worker-a", "ACTIVE")
		req := e.request("worker-a", e.spec())
		resolved, res := e.prepared(req)
		_, err := server.EnsureInstance(e.ctx, e.s, req, resolved, res, "")
		wantError(t, err, clients.Terminal, clients.ReasonAmbiguous, `2 servers are named "worker-a"`)
		if n := e.cloud.Hits("POST", pathServers); n != 0 {
			t.Errorf("%d creates, want 0", n)
		}
	})
	t.Run("known ID gone", func(t *testing.T) {
		e := newEnv(t)
		req := e.request("worker-a", e.spec())
		resolved, res := e.prepared(req)
		_, err := server.EnsureInstance(e.ctx, e.s, req, resolved, res, "00000000-0000-4000-8000-0000000000ff")
		if !errors.Is(err, server.ErrInstanceGone) {
			t.Errorf("error %v, want ErrInstanceGone", err)
		}
		e.wantCalls("GET " + pathServer)
	})
	t.Run("quota", func(t *testing.T) {
		e := newEnv(t, func(c *fakeopenstack.Cloud) { c.SetQuota(fakeopenstack.QuotaServers, 0) })
		req := e.request("worker-a", e.spec())
		resolved, res := e.prepared(req)
		_, err := server.EnsureInstance(e.ctx, e.s, req, resolved, res, "")
		wantError(t, err, clients.Terminal, clients.ReasonQuota, "creating server worker-a", "Quota exceeded for instances")
	})
	t.Run("rate limited", func(t *testing.T) {
		e := newEnv(t)
		req := e.request("worker-a", e.spec())
		resolved, res := e.prepared(req)
		e.cloud.Inject(fakeopenstack.Fault{Method: "GET", PathPrefix: pathServer, Status: 429, RetryAfter: "17"})
		_, err := server.EnsureInstance(e.ctx, e.s, req, resolved, res, "00000000-0000-4000-8000-0000000000ff")
		if got := wantError(t, err, clients.Transient, clients.ReasonRateLimited, "reading server worker-a"); got.RetryAfter.Seconds() != 17 {
			t.Errorf("RetryAfter %v, want 17s", got.RetryAfter)
		}
	})
	t.Run("ports not ready", func(t *testing.T) {
		e := newEnv(t)
		req := e.request("worker-a", e.spec())
		_, err := server.EnsureInstance(e.ctx, e.s, req, e.resolve(req), nil, "")
		wantError(t, err, clients.Terminal, clients.ReasonInvalidSpec, "ports are not ready")
	})
	t.Run("ERROR with Nova's fault", func(t *testing.T) {
		e := newEnv(t, func(c *fakeopenstack.Cloud) { c.FailServer("worker-a", 500, "No valid host was found.") })
		_, srv := e.converge(e.request("worker-a", e.spec()))
		if srv.Status != "ERROR" || server.FaultMessage(srv) != "No valid host was found. (code 500)" {
			t.Errorf("status %s, fault %q", srv.Status, server.FaultMessage(srv))
		}
	})
}

func TestEnsureInstanceCreateRequest(t *testing.T) {
	e := newEnv(t)
	group := e.cloud.AddServerGroup("workers", "soft-anti-affinity")
	req := e.request("worker-a", e.spec(func(s *infrav1alpha1.OpenStackServerSpec) {
		s.ServerGroup = &infrav1.ServerGroupParam{ID: ptr.To(group)}
		s.AvailabilityZone = ptr.To("nova")
		s.ConfigDrive = ptr.To(true)
		s.SSHKeyName = "ops"
		s.Tags = []string{"cluster-a"}
		s.ServerMetadata = []infrav1.ServerMetadata{{Key: "role", Value: "worker"}}
		s.SchedulerHintAdditionalProperties = []infrav1.SchedulerHintAdditionalProperty{
			{Name: "different_cell", Value: infrav1.SchedulerHintAdditionalValue{Type: infrav1.SchedulerHintTypeBool, Bool: ptr.To(true)}}}
		s.Ports = append(s.Ports, infrav1.PortOpts{Network: s.Ports[0].Network})
	}))
	resolved, res := e.prepared(req)
	if _, err := server.EnsureInstance(e.ctx, e.s, req, resolved, res, ""); err != nil {
		t.Fatal(err)
	}
	r, _ := e.cloud.Last("POST", pathServers)
	body := r.JSON()
	s := body["server"].(map[string]any)
	want := map[string]any{
		"name": "worker-a", "flavorRef": e.flavor, "imageRef": e.image, "availability_zone": "nova", "config_drive": true,
		"key_name": "ops", "tags": []any{"cluster-a"}, "metadata": map[string]any{"role": "worker"},
		"networks":  []any{map[string]any{"port": res.Ports[0].ID}, map[string]any{"port": res.Ports[1].ID}},
		"user_data": base64.StdEncoding.EncodeToString(req.UserData),
	}
	for k, v := range want {
		if !reflect.DeepEqual(s[k], v) {
			t.Errorf("server.%s = %#v, want %#v", k, s[k], v)
		}
	}
	if _, ok := s["block_device_mapping_v2"]; ok {
		t.Errorf("block devices without any asked for: %v", s["block_device_mapping_v2"])
	}
	hints := body["os:scheduler_hints"]
	if wantHints := map[string]any{"group": group, "different_cell": true}; !reflect.DeepEqual(hints, wantHints) {
		t.Errorf("scheduler hints %v, want %v", hints, wantHints)
	}
}

func TestEnsureInstanceBlockDevices(t *testing.T) {
	bdm := func(kv ...any) map[string]any {
		m := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name      string
		configure func(*fakeopenstack.Cloud)
		mod       func(*infrav1alpha1.OpenStackServerSpec)
		want      func(e *env, vols []infrav1alpha1.VolumeStatus) []any
		imageRef  bool
		attached  int
	}{{
		name: "root volume from the image",
		mod: func(s *infrav1alpha1.OpenStackServerSpec) {
			s.RootVolume = &infrav1.RootVolume{SizeGiB: 50, BlockDeviceVolume: infrav1.BlockDeviceVolume{Type: "ssd"}}
		},
		want: func(e *env, _ []infrav1alpha1.VolumeStatus) []any {
			return []any{bdm("source_type", "image", "uuid", e.image, "boot_index", 0.0, "destination_type", "volume",
				"volume_size", 50.0, "volume_type", "ssd", "delete_on_termination", true, "tag", "root")}
		},
		attached: 1,
	}, {
		name: "additional local and volume devices",
		mod: func(s *infrav1alpha1.OpenStackServerSpec) {
			s.AdditionalBlockDevices = []infrav1.AdditionalBlockDevice{
				{Name: "scratch", SizeGiB: 5, Storage: infrav1.BlockDeviceStorage{Type: infrav1.LocalBlockDevice}},
				{Name: "etcd", SizeGiB: 10, Storage: infrav1.BlockDeviceStorage{Type: infrav1.VolumeBlockDevice,
					Volume: &infrav1.BlockDeviceVolume{Type: "fast"}}},
			}
		},
		want: func(e *env, _ []infrav1alpha1.VolumeStatus) []any {
			return []any{
				bdm("source_type", "image", "uuid", e.image, "boot_index", 0.0, "destination_type", "local", "delete_on_termination", true),
				bdm("source_type", "blank", "boot_index", -1.0, "destination_type", "local", "volume_size", 5.0,
					"delete_on_termination", true, "tag", "scratch"),
				bdm("source_type", "blank", "boot_index", -1.0, "destination_type", "volume", "volume_size", 10.0,
					"volume_type", "fast", "delete_on_termination", true, "tag", "etcd"),
			}
		},
		imageRef: true,
		attached: 1,
	}, {
		name:      "root volume made first in a zone",
		configure: twoZones,
		mod:       rootInZone,
		want: func(e *env, vols []infrav1alpha1.VolumeStatus) []any {
			return []any{bdm("source_type", "volume", "uuid", vols[0].ID, "boot_index", 0.0, "destination_type", "volume",
				"delete_on_termination", true, "tag", "root")}
		},
		attached: 1,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var configure []func(*fakeopenstack.Cloud)
			if tt.configure != nil {
				configure = append(configure, tt.configure)
			}
			e := newEnv(t, configure...)
			known, srv := e.converge(e.request("worker-a", e.spec(tt.mod)))
			s := e.body("POST", pathServers, "server")
			if got, want := s["block_device_mapping_v2"], tt.want(e, known.Resources.Volumes); !reflect.DeepEqual(got, want) {
				t.Errorf("block devices\n  %v\nwant\n  %v", got, want)
			}
			if got := s["imageRef"]; (got != "") != tt.imageRef {
				t.Errorf("imageRef %q", got)
			}
			if len(srv.AttachedVolumes) != tt.attached {
				t.Errorf("attached volumes %v, want %d", srv.AttachedVolumes, tt.attached)
			}
		})
	}
}
