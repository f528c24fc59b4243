package instance_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"

	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/clients"
	"github.com/ocp-capi/ocp-capi/pkg/openstack/instance"
	"github.com/ocp-capi/ocp-capi/test/fakeopenstack"
)

// fullSpec has something of every kind the package makes: two ports (one
// a trunk parent), a root volume created through Cinder (explicit zone),
// a Cinder data volume made by Nova and a local disk.
func fullSpec(f *fake) instance.Spec {
	return instance.Spec{
		Name:   "worker-a",
		Image:  instance.Ref{Name: "rhcos-4.18", Tags: []string{"ocp"}},
		Flavor: instance.Ref{ID: f.flavor},
		Ports: []instance.Port{
			{Network: instance.Ref{ID: f.net}, FixedIPs: []instance.FixedIP{{Subnet: instance.Ref{Name: "machines-v4"}}}},
			{Network: instance.Ref{Name: "machines", Tags: []string{"cluster-a"}}, NameSuffix: "storage", Trunk: ptr(true)},
		},
		SecurityGroups: []instance.Ref{{ID: f.sg}},
		Tags:           []string{"cluster-a"},
		Metadata:       map[string]string{"role": "worker"},
		RootVolume:     &instance.RootVolume{SizeGiB: 20, AvailabilityZone: "nova"},
		Volumes: []instance.Volume{
			{Name: "data", SizeGiB: 10},
			{Name: "scratch", SizeGiB: 5, Local: true},
		},
	}
}

func ptr[T any](v T) *T { return &v }

func TestCreateThenDeleteLeavesNothing(t *testing.T) {
	f := startFake(t)
	c := newClient(t, f)
	spec := fullSpec(f)

	res := create(t, c, spec, false)
	if res.State != "ACTIVE" || !res.Provisioned || res.ID == "" {
		t.Fatalf("result %+v", res)
	}
	if got := []string{res.Ports[0].Name, res.Ports[1].Name}; got[0] != "worker-a-0" || got[1] != "worker-a-storage" {
		t.Errorf("port names %v", got)
	}
	if res.Ports[0].Trunk || !res.Ports[1].Trunk {
		t.Errorf("trunk flags %+v", res.Ports)
	}
	if len(res.Volumes) != 2 {
		t.Errorf("volumes %+v, want root and data", res.Volumes)
	}
	if f.Len(fakeopenstack.Servers) != 1 || f.Len(fakeopenstack.Ports) != 2 || f.Len(fakeopenstack.Trunks) != 1 {
		t.Fatalf("in the cloud: %v", f.left())
	}

	deleteAll(t, c, spec, res)
	if left := f.left(); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
	// Deleting again is a no-op.
	if n := deleteAll(t, c, spec, res); n != 1 {
		t.Errorf("a second Delete took %d calls", n)
	}
}

// Create twice, the second time without the first's Result (as after a
// crash): the same server, nothing new.
func TestCreateTwiceMakesOneServer(t *testing.T) {
	f := startFake(t)
	c := newClient(t, f)
	spec := fullSpec(f)

	first := create(t, c, spec, false)
	before := f.left()
	second := create(t, c, spec, true)
	if second.ID != first.ID {
		t.Errorf("second Create gave server %s, first %s", second.ID, first.ID)
	}
	for i := range first.Ports {
		if second.Ports[i].ID != first.Ports[i].ID {
			t.Errorf("port %d: %s then %s", i, first.Ports[i].ID, second.Ports[i].ID)
		}
	}
	if after := f.left(); !equalCounts(before, after) {
		t.Errorf("resources before the second Create %v, after %v", before, after)
	}
	if f.Len(fakeopenstack.Servers) != 1 {
		t.Errorf("%d servers", f.Len(fakeopenstack.Servers))
	}
}

// Every Result lost, from the first call on: the calls still converge on
// one server with one set of ports and volumes.
func TestCreateWithEveryResultLost(t *testing.T) {
	f := startFake(t)
	c := newClient(t, f)
	spec := fullSpec(f)
	res := create(t, c, spec, true)
	if f.Len(fakeopenstack.Servers) != 1 || f.Len(fakeopenstack.Ports) != 2 || f.Len(fakeopenstack.Trunks) != 1 {
		t.Errorf("in the cloud: %v", f.left())
	}
	deleteAll(t, c, spec, nil)
	if left := f.left(); len(left) > 0 {
		t.Errorf("left behind: %v (server %s)", left, res.ID)
	}
}

// A Delete that has only the spec (the Result was lost) finds and deletes
// everything, at any point of the creation.
func TestDeleteAfterALostResult(t *testing.T) {
	for calls := 1; calls <= 4; calls++ {
		f := startFake(t)
		c := newClient(t, f)
		spec := fullSpec(f)
		var res *instance.Result
		for range calls {
			var err error
			if res, err = c.Create(context.Background(), spec, res); err != nil {
				t.Fatal(err)
			}
		}
		if len(f.left()) == 0 {
			t.Fatalf("after %d Create calls nothing exists", calls)
		}
		deleteAll(t, c, spec, nil)
		if left := f.left(); len(left) > 0 {
			t.Errorf("after %d Create calls, Delete left %v", calls, left)
		}
	}
}

// The steady state costs one request: a GET of the server.
func TestCreateWhenDoneReadsOnce(t *testing.T) {
	f := startFake(t)
	c := newClient(t, f)
	res := create(t, c, fullSpec(f), false)
	f.ResetRequests()
	if _, err := c.Create(context.Background(), fullSpec(f), res); err != nil {
		t.Fatal(err)
	}
	if calls := f.Calls(); len(calls) != 1 || calls[0] != "GET /compute/v2.1/servers/{id}" {
		t.Errorf("calls %v, want one GET of the server", calls)
	}
}

func TestCreateInvalidSpecCallsNothing(t *testing.T) {
	f := startFake(t)
	c := newClient(t, f)
	f.ResetRequests()
	spec := fullSpec(f)
	spec.Ports[1].Network = instance.Ref{}
	res, err := c.Create(context.Background(), spec, nil)
	e := wantError(t, err, instance.ReasonInvalidSpec, "Ports[1].Network")
	if e.Transient || !strings.Contains(err.Error(), "Ports[1].Network") {
		t.Errorf("error %v, transient %v", err, e.Transient)
	}
	if res == nil || res.Done {
		t.Errorf("result %+v", res)
	}
	if calls := f.Calls(); len(calls) > 0 {
		t.Errorf("an invalid spec made calls: %v", calls)
	}
	// What Create refused, Delete still deletes (there is nothing).
	if n := deleteAll(t, c, spec, res); n != 1 {
		t.Errorf("Delete took %d calls", n)
	}
}

func TestCreateNotFound(t *testing.T) {
	f := startFake(t)
	c := newClient(t, f)
	spec := fullSpec(f)
	spec.Image = instance.Ref{Name: "no-such-image"}
	_, err := c.Create(context.Background(), spec, nil)
	e := wantError(t, err, instance.ReasonNotFound, "")
	if e.Transient || !strings.Contains(e.Message, "no-such-image") {
		t.Errorf("error %+v", e)
	}
	if left := f.left(); len(left) > 0 {
		t.Errorf("a failed resolution made %v", left)
	}
}

func TestCreateServerInError(t *testing.T) {
	f := startFake(t)
	c := newClient(t, f)
	spec := fullSpec(f)
	f.FailServer(spec.Name, 500, "No valid host was found.")
	var res *instance.Result
	var err error
	for range 5 {
		if res, err = c.Create(context.Background(), spec, res); err != nil || res.Done {
			break
		}
	}
	e := wantError(t, err, instance.ReasonInstanceError, "")
	if !strings.Contains(e.Message, "No valid host") || res.State != "ERROR" || res.ID == "" || res.Done {
		t.Errorf("error %v, result %+v", e, res)
	}
	deleteAll(t, c, spec, res)
	if left := f.left(); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// A server that vanishes while building is created again; one that was
// ACTIVE is reported, not replaced.
func TestCreateServerDeletedOutOfBand(t *testing.T) {
	f := startFake(t)
	c := newClient(t, f)
	compute := computeClient(t, f)
	spec := fullSpec(f)
	spec.RootVolume = nil

	res, err := c.Create(context.Background(), spec, nil)
	if err != nil || res.ID == "" || res.Done {
		t.Fatalf("first call: %+v, %v", res, err)
	}
	if err := servers.Delete(context.Background(), compute, res.ID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	if res, err = c.Create(context.Background(), spec, res); err != nil || res.ID != "" || res.RequeueAfter == 0 {
		t.Fatalf("after deletion while building: %+v, %v", res, err)
	}
	res = create(t, c, spec, false)
	if f.Len(fakeopenstack.Servers) != 1 {
		t.Fatalf("%d servers", f.Len(fakeopenstack.Servers))
	}

	if err := servers.Delete(context.Background(), compute, res.ID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	res, err = c.Create(context.Background(), spec, res)
	wantError(t, err, instance.ReasonInstanceDeleted, "")
	if f.Len(fakeopenstack.Servers) != 0 {
		t.Errorf("a provisioned server was replaced")
	}
	deleteAll(t, c, spec, res)
	if left := f.left(); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// providerClient authenticates to the fake with gophercloud alone, as a
// caller with its own credentials handling would.
func providerClient(t *testing.T, f *fake) *gophercloud.ProviderClient {
	t.Helper()
	p, err := openstack.AuthenticatedClient(context.Background(), gophercloud.AuthOptions{
		IdentityEndpoint: f.AuthURL(), Username: fakeopenstack.Username, Password: fakeopenstack.Password,
		DomainName: fakeopenstack.DomainName, TenantName: fakeopenstack.ProjectName,
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func computeClient(t *testing.T, f *fake) *gophercloud.ServiceClient {
	t.Helper()
	sc, err := openstack.NewComputeV2(providerClient(t, f), gophercloud.EndpointOpts{Region: fakeopenstack.Region})
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// The same flow through caller-made gophercloud clients.
func TestProviderAndServiceClients(t *testing.T) {
	for _, via := range []string{"Provider", "Services"} {
		t.Run(via, func(t *testing.T) {
			f := startFake(t)
			p := providerClient(t, f)
			cloud := instance.Cloud{Provider: p, Region: fakeopenstack.Region}
			if via == "Services" {
				eo := gophercloud.EndpointOpts{Region: fakeopenstack.Region}
				var sc instance.ServiceClients
				var err error
				for _, mk := range []func() error{
					func() error { sc.Compute, err = openstack.NewComputeV2(p, eo); return err },
					func() error { sc.Network, err = openstack.NewNetworkV2(p, eo); return err },
					func() error { sc.Image, err = openstack.NewImageV2(p, eo); return err },
					func() error { sc.Volume, err = openstack.NewBlockStorageV3(p, eo); return err },
				} {
					if err := mk(); err != nil {
						t.Fatal(err)
					}
				}
				cloud = instance.Cloud{Services: &sc}
				defer func() {
					if sc.Compute.Microversion != "" {
						t.Errorf("the caller's compute client was modified: microversion %q", sc.Compute.Microversion)
					}
				}()
			}
			c, err := instance.New(context.Background(), cloud)
			if err != nil {
				t.Fatal(err)
			}
			spec := fullSpec(f)
			res := create(t, c, spec, false)
			if f.Len(fakeopenstack.Servers) != 1 || f.Len(fakeopenstack.Trunks) != 1 {
				t.Errorf("in the cloud: %v", f.left())
			}
			create(t, c, spec, true)
			if f.Len(fakeopenstack.Servers) != 1 {
				t.Errorf("%d servers after a second Create", f.Len(fakeopenstack.Servers))
			}
			deleteAll(t, c, spec, res)
			if left := f.left(); len(left) > 0 {
				t.Errorf("left behind: %v", left)
			}
		})
	}
}

func TestNewErrors(t *testing.T) {
	f := startFake(t)
	p := providerClient(t, f)
	for _, tc := range []struct {
		name   string
		cloud  instance.Cloud
		reason string
		field  string
	}{
		{"nothing", instance.Cloud{}, instance.ReasonInvalidSpec, "Cloud"},
		{"two", instance.Cloud{CloudsYAML: f.Clouds("openstack"), CloudName: "openstack", Provider: p}, instance.ReasonInvalidSpec, "Cloud"},
		{"no cloud name", instance.Cloud{CloudsYAML: f.Clouds("openstack")}, instance.ReasonInvalidSpec, "Cloud.CloudName"},
		{"no image client", instance.Cloud{Services: &instance.ServiceClients{Compute: &gophercloud.ServiceClient{}, Network: &gophercloud.ServiceClient{}}},
			instance.ReasonInvalidSpec, "Cloud.Services.Image"},
		{"unknown cloud", instance.Cloud{CloudsYAML: f.Clouds("openstack"), CloudName: "other"}, instance.ReasonAuthenticationFailed, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := instance.New(context.Background(), tc.cloud)
			wantError(t, err, tc.reason, tc.field)
		})
	}

	f.SetPassword("changed")
	_, err := instance.New(context.Background(), instance.Cloud{CloudsYAML: f.Clouds("openstack"), CloudName: "openstack"})
	if e := wantError(t, err, instance.ReasonAuthenticationFailed, ""); !e.Transient {
		t.Errorf("a refused credential must be transient (fixing it heals): %+v", e)
	}
}

// A Provider whose catalog lacks a required service is refused as the
// Provider's fault, the same error the controller's clients give.
func TestProviderWithoutService(t *testing.T) {
	f := startFake(t)
	f.HideService("image")
	_, err := instance.New(context.Background(), instance.Cloud{Provider: providerClient(t, f), Region: fakeopenstack.Region})
	if e := wantError(t, err, instance.ReasonInvalidSpec, "Cloud.Provider"); e.Transient || !strings.Contains(e.Message, "no image endpoint") {
		t.Errorf("want a terminal error naming the image service: %+v", e)
	}
	if !errors.Is(err, clients.ErrNoEndpoint) {
		t.Errorf("error %v does not wrap clients.ErrNoEndpoint", err)
	}
}

func TestContextErrorsAreReachable(t *testing.T) {
	f := startFake(t)
	c := newClient(t, f)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := c.Create(ctx, fullSpec(f), nil)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v does not wrap context.Canceled", err)
	}
	wantError(t, err, instance.ReasonUnavailable, "")
}

func equalCounts(a, b map[fakeopenstack.Kind]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
