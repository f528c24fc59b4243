package server_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"k8s.io/utils/ptr"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/clients"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/server"
	"github.com/ocp-capi/ocp-capi/test/fakeopenstack"
)

// Path templates of the fake, for counting calls.
const (
	pathServers    = "/compute/v2.1/servers"
	pathServer     = "/compute/v2.1/servers/{id}"
	pathServerList = "/compute/v2.1/servers/detail"
	pathPorts      = "/network/v2.0/ports"
	pathPort       = "/network/v2.0/ports/{id}"
	pathPortTags   = "/network/v2.0/ports/{id}/tags"
	pathTrunks     = "/network/v2.0/trunks"
	pathTrunk      = "/network/v2.0/trunks/{id}"
	pathTrunkTags  = "/network/v2.0/trunks/{id}/tags"
	pathExtensions = "/network/v2.0/extensions"
	pathVolumes    = "/volume/v3/{id}/volumes"
	pathVolumeList = "/volume/v3/{id}/volumes/detail"
	pathVolume     = "/volume/v3/{id}/volumes/{id}"
)

// env is a fake cloud with a flavor, an image, a network with a subnet and
// a security group, and authenticated clients for it.
type env struct {
	t     *testing.T
	ctx   context.Context
	cloud *fakeopenstack.Cloud
	s     server.Scope

	flavor, image, net, subnet, sg string
}

// newEnv starts the cloud; configure(cloud) runs before the clients are
// built. The request log starts empty.
func newEnv(t *testing.T, configure ...func(*fakeopenstack.Cloud)) *env {
	t.Helper()
	cloud := fakeopenstack.New(t)
	e := &env{t: t, ctx: context.Background(), cloud: cloud}
	e.flavor = cloud.AddFlavor("m1.large", 4, 16384, 100)
	e.image = cloud.AddImage("rhcos-4.18", "ocp")
	e.net = cloud.AddNetwork("machines", "cluster-a")
	e.subnet = cloud.AddSubnet(e.net, "machines-v4", "10.0.0.0/24")
	e.sg = cloud.AddSecurityGroup("workers", "cluster-a")
	for _, f := range configure {
		f(cloud)
	}
	c, err := clients.NewFactory(clients.Options{}).For(e.ctx, clients.Identity{
		Key: "ns/cloud-config", Version: "1", CloudsYAML: cloud.Clouds("openstack"), CloudName: "openstack"})
	if err != nil {
		t.Fatal(err)
	}
	e.s = server.Scope{Clients: c, Log: logr.Discard()}
	cloud.ResetRequests()
	return e
}

// spec is a server with image and flavor by ID and one port on the
// network by ID.
func (e *env) spec(mods ...func(*infrav1alpha1.OpenStackServerSpec)) *infrav1alpha1.OpenStackServerSpec {
	s := &infrav1alpha1.OpenStackServerSpec{
		Image:    infrav1.ImageParam{ID: ptr.To(e.image)},
		FlavorID: ptr.To(e.flavor),
		Ports:    []infrav1.PortOpts{{Network: &infrav1.NetworkParam{ID: ptr.To(e.net)}}},
	}
	for _, m := range mods {
		m(s)
	}
	return s
}

func (e *env) request(name string, spec *infrav1alpha1.OpenStackServerSpec) server.Request {
	return server.Request{Name: name, Spec: spec, UserData: []byte(`{"ignition":{"version":"3.2.0"}}`)}
}

func (e *env) resolve(req server.Request) *infrav1alpha1.ResolvedServerSpec {
	e.t.Helper()
	r, err := server.Resolve(e.ctx, e.s, req)
	if err != nil {
		e.t.Fatalf("Resolve: %v", err)
	}
	return r
}

func (e *env) ports(resolved *infrav1alpha1.ResolvedServerSpec, known []infrav1.PortStatus) []infrav1.PortStatus {
	e.t.Helper()
	p, err := server.EnsurePorts(e.ctx, e.s, resolved.Ports, known)
	if err != nil {
		e.t.Fatalf("EnsurePorts: %v", err)
	}
	return p
}

// converge runs the create steps as the OpenStackServer controller does,
// pass after pass, until the server is ACTIVE (or ERROR), and returns
// what its status would hold.
func (e *env) converge(req server.Request) (server.Known, *servers.Server) {
	e.t.Helper()
	known := server.Known{Resources: &infrav1alpha1.ServerResources{}}
	for range 10 {
		if known.Resolved == nil {
			known.Resolved = e.resolve(req)
		}
		ports, err := server.EnsurePorts(e.ctx, e.s, known.Resolved.Ports, known.Resources.Ports)
		known.Resources.Ports = ports
		if err != nil {
			e.t.Fatalf("EnsurePorts: %v", err)
		}
		if known.InstanceID == "" {
			vols, err := server.EnsureVolumes(e.ctx, e.s, req, known.Resolved, known.Resources.Volumes)
			if vols != nil {
				known.Resources.Volumes = vols
			}
			if progress(err) {
				continue
			}
			if err != nil {
				e.t.Fatalf("EnsureVolumes: %v", err)
			}
		}
		srv, err := server.EnsureInstance(e.ctx, e.s, req, known.Resolved, known.Resources, known.InstanceID)
		if err != nil {
			e.t.Fatalf("EnsureInstance: %v", err)
		}
		known.InstanceID = srv.ID
		if srv.Status == "ACTIVE" || srv.Status == "ERROR" {
			return known, srv
		}
	}
	e.t.Fatal("the server did not converge in 10 passes")
	return known, nil
}

// deleteAll runs Delete pass after pass until it is done, and returns the
// number of passes.
func (e *env) deleteAll(req server.Request, known server.Known) int {
	e.t.Helper()
	for pass := 1; pass <= 10; pass++ {
		err := server.Delete(e.ctx, e.s, req, known)
		if err == nil {
			return pass
		}
		if !progress(err) {
			e.t.Fatalf("Delete pass %d: %v", pass, err)
		}
	}
	e.t.Fatal("Delete did not finish in 10 passes")
	return 0
}

func progress(err error) bool {
	var p *server.Progress
	return errors.As(err, &p)
}

// wantError asserts err is a *clients.Error of this class and reason whose
// message holds every want.
func wantError(t *testing.T, err error, class clients.Class, reason string, want ...string) *clients.Error {
	t.Helper()
	var e *clients.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T), want a *clients.Error %s", err, err, reason)
	}
	if e.Class != class || e.Reason != reason {
		t.Errorf("class %v reason %q, want %v %q: %s", e.Class, e.Reason, class, reason, e.Message)
	}
	for _, w := range want {
		if !strings.Contains(e.Message, w) {
			t.Errorf("message %q lacks %q", e.Message, w)
		}
	}
	return e
}

// wantCalls asserts the request log, as "METHOD template" lines.
func (e *env) wantCalls(want ...string) {
	e.t.Helper()
	got := e.cloud.Calls()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		e.t.Errorf("calls:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// body returns the JSON body of the latest request to a template, under key.
func (e *env) body(method, template, key string) map[string]any {
	e.t.Helper()
	r, ok := e.cloud.Last(method, template)
	if !ok {
		e.t.Fatalf("no %s %s request", method, template)
	}
	m, _ := r.JSON()[key].(map[string]any)
	return m
}
