package server_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/clients"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/server"
	"github.com/ocp-capi/ocp-capi/test/fakeopenstack"
)

// threePorts is a spec with ports named by suffix, by index, by suffix.
func threePorts(s *infrav1alpha1.OpenStackServerSpec) {
	net := s.Ports[0].Network
	s.Ports = []infrav1.PortOpts{{Network: net, NameSuffix: ptr.To("api")}, {Network: net}, {Network: net, NameSuffix: ptr.To("storage")}}
}

func TestEnsurePortsCreatesInOrder(t *testing.T) {
	e := newEnv(t)
	resolved := e.resolve(e.request("worker-a", e.spec(threePorts)))
	got := e.ports(resolved, nil)

	wantNames := []string{"worker-a-api", "worker-a-1", "worker-a-storage"}
	if names := e.cloud.Names(fakeopenstack.Ports); !reflect.DeepEqual(names, wantNames) {
		t.Errorf("ports created %v, want %v in this order", names, wantNames)
	}
	objs := e.cloud.Objects(fakeopenstack.Ports)
	for i, p := range got {
		if p.ID != objs[i]["id"] || p.MACAddress != objs[i]["mac_address"] || p.MACAddress == "" {
			t.Errorf("status %d = %+v, want port %v", i, p, objs[i])
		}
	}
	e.wantCalls("GET "+pathPorts, "GET "+pathExtensions, "POST "+pathPorts, "POST "+pathPorts, "POST "+pathPorts)
	if r, _ := e.cloud.Last("GET", pathPorts); r.Query != "name=worker-a-api&name=worker-a-1&name=worker-a-storage&project_id="+fakeopenstack.ProjectID {
		t.Errorf("adoption lookup query %q", r.Query)
	}
}

func TestEnsurePortsAdoptsAfterALostStatus(t *testing.T) {
	e := newEnv(t)
	resolved := e.resolve(e.request("worker-a", e.spec(threePorts)))
	first := e.ports(resolved, nil)
	e.cloud.ResetRequests()

	// The status write was lost: nothing is known.
	again := e.ports(resolved, nil)
	if !reflect.DeepEqual(again, first) {
		t.Errorf("adopted %v, want %v", again, first)
	}
	if n := e.cloud.Len(fakeopenstack.Ports); n != 3 {
		t.Errorf("%d ports, want 3", n)
	}
	e.wantCalls("GET " + pathPorts)

	// A crash after the first port: the next pass makes only the others,
	// whether it knows the first (status written) or not (status lost).
	for _, lost := range []bool{false, true} {
		e := newEnv(t)
		resolved := e.resolve(e.request("worker-a", e.spec(threePorts)))
		e.cloud.Inject(fakeopenstack.Fault{Method: "POST", PathPrefix: pathPorts, After: 1, Status: 503})
		partial, err := server.EnsurePorts(e.ctx, e.s, resolved.Ports, nil)
		wantError(t, err, clients.Transient, clients.ReasonUnavailable, "creating port worker-a-1")
		if len(partial) != 1 {
			t.Fatalf("after a failure on the second port: %v, want the first", partial)
		}
		if lost {
			partial = nil
		}
		got := e.ports(resolved, partial)
		if n := e.cloud.Len(fakeopenstack.Ports); n != 3 || got[0].ID != e.cloud.Objects(fakeopenstack.Ports)[0]["id"] {
			t.Errorf("lost=%v: %d ports, statuses %v", lost, n, got)
		}
	}
}

func TestEnsurePortsKnownMakesNoCalls(t *testing.T) {
	e := newEnv(t)
	resolved := e.resolve(e.request("worker-a", e.spec(threePorts)))
	known := e.ports(resolved, nil)
	e.cloud.ResetRequests()
	if got := e.ports(resolved, known); !reflect.DeepEqual(got, known) {
		t.Errorf("got %v, want %v", got, known)
	}
	e.wantCalls()
}

func TestEnsurePortsTrunks(t *testing.T) {
	e := newEnv(t)
	spec := e.spec(threePorts, func(s *infrav1alpha1.OpenStackServerSpec) {
		s.Trunk = ptr.To(true)
		s.Ports[1].Trunk = ptr.To(false)
		s.Tags = []string{"cluster-a"}
	})
	resolved := e.resolve(e.request("worker-a", spec))
	first := e.ports(resolved, nil)
	trunks := e.cloud.Objects(fakeopenstack.Trunks)
	if len(trunks) != 2 || trunks[0]["name"] != "worker-a-api" || trunks[0]["port_id"] != first[0].ID ||
		trunks[1]["name"] != "worker-a-storage" || trunks[1]["port_id"] != first[2].ID {
		t.Fatalf("trunks %v", trunks)
	}
	if !reflect.DeepEqual(trunks[0]["tags"], []any{"cluster-a"}) {
		t.Errorf("trunk tags %v, want the server's", trunks[0]["tags"])
	}

	// Adopted ports: their trunks are looked up, not made again.
	e.cloud.ResetRequests()
	e.ports(resolved, nil)
	if n := e.cloud.Len(fakeopenstack.Trunks); n != 2 {
		t.Errorf("%d trunks after adoption, want 2", n)
	}
	e.wantCalls("GET "+pathPorts, "GET "+pathTrunks, "GET "+pathTrunks)

	// A crash between a port and its trunk: the next pass makes the trunk.
	e2 := newEnv(t)
	resolved = e2.resolve(e2.request("worker-a", spec))
	e2.cloud.Inject(fakeopenstack.Fault{Method: "POST", PathPrefix: pathTrunks, Status: 503})
	partial, err := server.EnsurePorts(e2.ctx, e2.s, resolved.Ports, nil)
	wantError(t, err, clients.Transient, clients.ReasonUnavailable, "creating the trunk of port worker-a-api")
	if len(partial) != 0 {
		t.Errorf("a port without its trunk is reported: %v", partial)
	}
	e2.ports(resolved, partial)
	if p, tr := e2.cloud.Len(fakeopenstack.Ports), e2.cloud.Len(fakeopenstack.Trunks); p != 3 || tr != 2 {
		t.Errorf("%d ports %d trunks, want 3 and 2", p, tr)
	}
}

func TestEnsurePortsTrunkNeedsTheExtension(t *testing.T) {
	e := newEnv(t, func(c *fakeopenstack.Cloud) { c.SetExtensions("standard-attr-tag", "tag-creation") })
	resolved := e.resolve(e.request("worker-a", e.spec(func(s *infrav1alpha1.OpenStackServerSpec) { s.Trunk = ptr.To(true) })))
	_, err := server.EnsurePorts(e.ctx, e.s, resolved.Ports, nil)
	wantError(t, err, clients.Terminal, clients.ReasonInvalidSpec, `"trunk" extension`)
}

func TestEnsurePortsTags(t *testing.T) {
	tagged := func(s *infrav1alpha1.OpenStackServerSpec) {
		s.Tags = []string{"cluster-a"}
		s.Ports[0].Tags = []infrav1.NeutronTag{"api"}
	}
	wantTags := []any{"cluster-a", "api"}

	t.Run("at create with tag-creation", func(t *testing.T) {
		e := newEnv(t)
		e.ports(e.resolve(e.request("worker-a", e.spec(tagged))), nil)
		if got := e.body("POST", pathPorts, "port")["tags"]; !reflect.DeepEqual(got, wantTags) {
			t.Errorf("create body tags %v, want %v", got, wantTags)
		}
		if n := e.cloud.Hits("PUT", pathPortTags); n != 0 {
			t.Errorf("%d tag calls, want none", n)
		}
	})

	t.Run("afterwards without tag-creation", func(t *testing.T) {
		e := newEnv(t, func(c *fakeopenstack.Cloud) { c.SetExtensions("standard-attr-tag", "trunk") })
		e.ports(e.resolve(e.request("worker-a", e.spec(tagged))), nil)
		if _, ok := e.body("POST", pathPorts, "port")["tags"]; ok {
			t.Error("tags sent at create without the tag-creation extension")
		}
		if got := e.cloud.Objects(fakeopenstack.Ports)[0]["tags"]; !reflect.DeepEqual(got, wantTags) {
			t.Errorf("port tags %v, want %v", got, wantTags)
		}
		e.wantCalls("GET "+pathPorts, "GET "+pathExtensions, "POST "+pathPorts, "PUT "+pathPortTags)
	})

	t.Run("not at all without standard-attr-tag", func(t *testing.T) {
		e := newEnv(t, func(c *fakeopenstack.Cloud) { c.SetExtensions("trunk") })
		e.ports(e.resolve(e.request("worker-a", e.spec(tagged))), nil)
		e.wantCalls("GET "+pathPorts, "GET "+pathExtensions, "POST "+pathPorts)
	})

	// The port is made but tagging it fails: the next pass adopts it by
	// name, and must tag it then, or it stays untagged for ever.
	t.Run("retried after a failed tag call", func(t *testing.T) {
		e := newEnv(t, func(c *fakeopenstack.Cloud) { c.SetExtensions("standard-attr-tag", "trunk") })
		resolved := e.resolve(e.request("worker-a", e.spec(tagged)))
		e.cloud.Inject(fakeopenstack.Fault{Method: "PUT", PathPrefix: pathPortTags, Status: 503})
		_, err := server.EnsurePorts(e.ctx, e.s, resolved.Ports, nil)
		wantError(t, err, clients.Transient, clients.ReasonUnavailable, "tagging port worker-a-0")
		e.ports(resolved, nil)
		if got := e.cloud.Objects(fakeopenstack.Ports)[0]["tags"]; !reflect.DeepEqual(got, wantTags) {
			t.Errorf("adopted port tags %v, want %v", got, wantTags)
		}
	})
	// A port and trunk another actuator made (MAPO, for a machine that moved
	// to Cluster API) are adopted by name with their own tags, and get
	// ours besides: no tag of theirs is lost.
	t.Run("adopted from another actuator: its tags kept", func(t *testing.T) {
		e := newEnv(t)
		resolved := e.resolve(e.request("worker-a", e.spec(tagged, trunked)))
		// The other actuator's port and trunk, tagged its way.
		_, err := server.EnsurePorts(e.ctx, e.s, resolved.Ports, nil)
		if err != nil {
			t.Fatal(err)
		}
		theirs := []any{"openshiftClusterID=x", "cluster-api-provider-openstack"}
		for _, kind := range []fakeopenstack.Kind{fakeopenstack.Ports, fakeopenstack.Trunks} {
			for _, o := range e.cloud.Objects(kind) {
				if err := e.s.Clients.Network.ReplaceAllTags(e.ctx, string(kind), o["id"].(string), []string{"openshiftClusterID=x", "cluster-api-provider-openstack"}); err != nil {
					t.Fatal(err)
				}
			}
		}
		before := len(e.cloud.Calls())
		e.ports(resolved, nil)
		want := append(append([]any{}, theirs...), wantTags...)
		for _, kind := range []fakeopenstack.Kind{fakeopenstack.Ports, fakeopenstack.Trunks} {
			if got := e.cloud.Objects(kind)[0]["tags"]; !reflect.DeepEqual(got, want) {
				t.Errorf("%s tags %v, want %v", kind, got, want)
			}
		}
		for _, c := range e.cloud.Calls()[before:] {
			if strings.HasPrefix(c, "POST ") || strings.HasPrefix(c, "DELETE ") {
				t.Errorf("adoption made %s", c)
			}
		}
	})
	t.Run("trunk retried after a failed tag call", func(t *testing.T) {
		e := newEnv(t)
		resolved := e.resolve(e.request("worker-a", e.spec(tagged, trunked)))
		e.cloud.Inject(fakeopenstack.Fault{Method: "PUT", PathPrefix: pathTrunkTags, Status: 503})
		_, err := server.EnsurePorts(e.ctx, e.s, resolved.Ports, nil)
		wantError(t, err, clients.Transient, clients.ReasonUnavailable, "tagging the trunk of port worker-a-0")
		e.ports(resolved, nil)
		if got := e.cloud.Objects(fakeopenstack.Trunks)[0]["tags"]; !reflect.DeepEqual(got, wantTags) {
			t.Errorf("adopted trunk tags %v, want %v", got, wantTags)
		}
	})
}

func TestEnsurePortsOptions(t *testing.T) {
	e := newEnv(t)
	resolved := e.resolve(e.request("worker-a", e.spec(func(s *infrav1alpha1.OpenStackServerSpec) {
		s.SecurityGroups = []infrav1.SecurityGroupParam{{ID: ptr.To(e.sg)}}
		p := &s.Ports[0]
		p.Description = ptr.To("API port")
		p.FixedIPs = []infrav1.FixedIP{{Subnet: &infrav1.SubnetParam{ID: ptr.To(e.subnet)}, IPAddress: ptr.To("10.0.0.42")}}
		p.AllowedAddressPairs = []infrav1.AddressPair{{IPAddress: "10.0.0.5"}}
		p.VNICType = ptr.To("direct")
		p.HostID = ptr.To("compute-7")
		p.Profile = &infrav1.BindingProfile{TrustedVF: ptr.To(true), OVSHWOffload: ptr.To(true)}
		p.ValueSpecs = []infrav1.ValueSpec{{Name: "qos", Key: "qos_policy_id", Value: "gold"}}
	})))
	e.ports(resolved, nil)
	port := e.cloud.Objects(fakeopenstack.Ports)[0]
	want := map[string]any{
		"description":           "API port",
		"fixed_ips":             []any{map[string]any{"subnet_id": e.subnet, "ip_address": "10.0.0.42"}},
		"allowed_address_pairs": []any{map[string]any{"ip_address": "10.0.0.5"}},
		"security_groups":       []any{e.sg},
		"binding:vnic_type":     "direct",
		"binding:host_id":       "compute-7",
		"binding:profile":       map[string]any{"trusted": true, "capabilities": []any{"switchdev"}},
		"qos_policy_id":         "gold",
	}
	for k, v := range want {
		if !reflect.DeepEqual(port[k], v) {
			t.Errorf("port %s = %#v, want %#v", k, port[k], v)
		}
	}
}

func TestEnsurePortsPortSecurityDisabled(t *testing.T) {
	e := newEnv(t)
	resolved := e.resolve(e.request("worker-a", e.spec(func(s *infrav1alpha1.OpenStackServerSpec) {
		s.SecurityGroups = []infrav1.SecurityGroupParam{{ID: ptr.To(e.sg)}}
		s.Ports[0].EnablePortSecurity = ptr.To(false)
	})))
	e.ports(resolved, nil)
	body := e.body("POST", pathPorts, "port")
	if body["port_security_enabled"] != false || !reflect.DeepEqual(body["security_groups"], []any{}) {
		t.Errorf("create body: port_security_enabled %v security_groups %v, want false and []",
			body["port_security_enabled"], body["security_groups"])
	}
	if got := e.cloud.Objects(fakeopenstack.Ports)[0]["security_groups"]; !reflect.DeepEqual(got, []any{}) {
		t.Errorf("port security groups %v, want none (not even default)", got)
	}
}

func TestEnsurePortsErrors(t *testing.T) {
	t.Run("quota", func(t *testing.T) {
		e := newEnv(t, func(c *fakeopenstack.Cloud) { c.SetQuota(fakeopenstack.QuotaPorts, 0) })
		_, err := server.EnsurePorts(e.ctx, e.s, e.resolve(e.request("worker-a", e.spec())).Ports, nil)
		wantError(t, err, clients.Terminal, clients.ReasonQuota, "creating port worker-a-0", "Quota exceeded")
	})
	t.Run("rate limited", func(t *testing.T) {
		e := newEnv(t)
		e.cloud.Inject(fakeopenstack.Fault{Method: "POST", PathPrefix: pathPorts, Status: 429, RetryAfter: "17"})
		_, err := server.EnsurePorts(e.ctx, e.s, e.resolve(e.request("worker-a", e.spec())).Ports, nil)
		if got := wantError(t, err, clients.Transient, clients.ReasonRateLimited); got.RetryAfter.Seconds() != 17 {
			t.Errorf("RetryAfter %v, want 17s", got.RetryAfter)
		}
	})
	t.Run("two attached ports with the name", func(t *testing.T) {
		e := newEnv(t)
		a := e.cloud.AddPort(e.net, "worker-a-0")
		b := e.cloud.AddPort(e.net, "worker-a-0")
		e.cloud.Set(fakeopenstack.Ports, a, "device_id", "server-1")
		e.cloud.Set(fakeopenstack.Ports, b, "device_id", "server-2")
		_, err := server.EnsurePorts(e.ctx, e.s, e.resolve(e.request("worker-a", e.spec())).Ports, nil)
		wantError(t, err, clients.Terminal, clients.ReasonAmbiguous, `"worker-a-0"`)
		if n := e.cloud.Len(fakeopenstack.Ports); n != 2 {
			t.Errorf("%d ports, want both kept", n)
		}
	})
	t.Run("another project's port is not adopted", func(t *testing.T) {
		e := newEnv(t)
		foreign := e.cloud.AddPort(e.net, "worker-a-0")
		e.cloud.Set(fakeopenstack.Ports, foreign, "project_id", "another-project")
		got := e.ports(e.resolve(e.request("worker-a", e.spec())), nil)
		if got[0].ID == foreign || e.cloud.Len(fakeopenstack.Ports) != 2 {
			t.Errorf("adopted another project's port: %v", got)
		}
	})
}

// TestPropagateUplinkStatus: ports[].propagateUplinkStatus is sent with the
// port when Neutron has the uplink-status-propagation extension; without
// it the port is refused before anything is created, saying why.
func TestPropagateUplinkStatus(t *testing.T) {
	uplink := func(s *infrav1alpha1.OpenStackServerSpec) { s.Ports[0].PropagateUplinkStatus = ptr.To(true) }

	e := newEnv(t)
	resolved := e.resolve(e.request("sriov", e.spec(uplink)))
	_, err := server.EnsurePorts(e.ctx, e.s, resolved.Ports, nil)
	wantError(t, err, clients.Terminal, clients.ReasonInvalidSpec, `Neutron has no "uplink-status-propagation" extension`)
	if n := e.cloud.Len(fakeopenstack.Ports); n != 0 {
		t.Errorf("%d ports created", n)
	}

	e = newEnv(t, func(c *fakeopenstack.Cloud) {
		c.SetExtensions(append(slices.Clone(fakeopenstack.DefaultExtensions), "uplink-status-propagation")...)
	})
	resolved = e.resolve(e.request("sriov", e.spec(uplink)))
	got := e.ports(resolved, nil)
	if b := e.body("POST", pathPorts, "port"); b["propagate_uplink_status"] != true {
		t.Errorf("create request: %v", b)
	}
	if p := e.cloud.Object(fakeopenstack.Ports, got[0].ID); p["propagate_uplink_status"] != true {
		t.Errorf("port: %v", p)
	}
}

// TestEnsurePortsAfterLostCreates: creates whose answers were lost (a
// timeout, a killed manager) left several ports with one name. The kill
// storm found machines stuck on this (a terminal Ambiguous) with 2 or 3
// ports per name. The next pass keeps one (the attached one, else the
// oldest) and deletes the others.
func TestEnsurePortsAfterLostCreates(t *testing.T) {
	for _, attached := range []int{-1, 0, 1, 2} {
		e := newEnv(t)
		resolved := e.resolve(e.request("worker-a", e.spec()))
		ids := []string{e.cloud.AddPort(e.net, "worker-a-0"), e.cloud.AddPort(e.net, "worker-a-0"), e.cloud.AddPort(e.net, "worker-a-0")}
		// The oldest is the second made (not the lowest ID).
		for i, at := range []string{"2026-01-02T00:00:00Z", "2026-01-01T00:00:00Z", "2026-01-03T00:00:00Z"} {
			e.cloud.Set(fakeopenstack.Ports, ids[i], "created_at", at)
		}
		want := ids[1]
		if attached >= 0 {
			e.cloud.Set(fakeopenstack.Ports, ids[attached], "device_id", "server-1")
			want = ids[attached]
		}
		got, err := server.EnsurePorts(e.ctx, e.s, resolved.Ports, nil)
		if err != nil {
			t.Fatalf("attached %d: %v", attached, err)
		}
		if len(got) != 1 || got[0].ID != want {
			t.Errorf("attached %d: adopted %v, want %s", attached, got, want)
		}
		if objs := e.cloud.Objects(fakeopenstack.Ports); len(objs) != 1 || objs[0]["id"] != want {
			t.Errorf("attached %d: ports left %v, want only %s", attached, objs, want)
		}
	}

}
