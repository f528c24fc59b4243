package fakeopenstack_test

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"sync"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/trunks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"

	"github.com/ocp-capi/ocp-capi/test/fakeopenstack"
)

type services struct {
	compute, network, volume *gophercloud.ServiceClient
}

// connect authenticates with gophercloud alone, so that the fake is tested
// without this project's clients.
func connect(t *testing.T, c *fakeopenstack.Cloud) services {
	t.Helper()
	ctx := context.Background()
	provider, err := openstack.AuthenticatedClient(ctx, gophercloud.AuthOptions{
		IdentityEndpoint: c.AuthURL(), Username: fakeopenstack.Username, Password: fakeopenstack.Password,
		TenantName: fakeopenstack.ProjectName, DomainName: fakeopenstack.DomainName, AllowReauth: true,
	})
	if err != nil {
		t.Fatalf("authenticate: %v", err)
	}
	eo := gophercloud.EndpointOpts{Region: fakeopenstack.Region}
	var s services
	if s.compute, err = openstack.NewComputeV2(provider, eo); err != nil {
		t.Fatal(err)
	}
	s.compute.Microversion = "2.67"
	if s.network, err = openstack.NewNetworkV2(provider, eo); err != nil {
		t.Fatal(err)
	}
	if s.volume, err = openstack.NewBlockStorageV3(provider, eo); err != nil {
		t.Fatal(err)
	}
	return s
}

// status is the HTTP status of a gophercloud error, 0 if none.
func status(err error) int {
	var e gophercloud.ErrUnexpectedResponseCode
	if errors.As(err, &e) {
		return e.Actual
	}
	return 0
}

func TestKeystone(t *testing.T) {
	c := fakeopenstack.New(t)
	_, err := openstack.AuthenticatedClient(context.Background(), gophercloud.AuthOptions{
		IdentityEndpoint: c.AuthURL(), Username: fakeopenstack.Username, Password: "wrong",
		TenantName: fakeopenstack.ProjectName, DomainName: fakeopenstack.DomainName,
	})
	if status(err) != http.StatusUnauthorized {
		t.Fatalf("wrong password: got %v, want 401", err)
	}

	s := connect(t, c)
	if got := c.Hits("POST", "/identity/v3/auth/tokens"); got != 2 {
		t.Errorf("token requests = %d, want 2", got)
	}
	// A revoked token is renewed once by gophercloud, transparently.
	c.RevokeTokens()
	if _, err := servers.List(s.compute, nil).AllPages(context.Background()); err != nil {
		t.Fatalf("list after revocation: %v", err)
	}
	if got := c.Hits("POST", "/identity/v3/auth/tokens"); got != 3 {
		t.Errorf("token requests after revocation = %d, want 3", got)
	}
}

func TestServerLifecycle(t *testing.T) {
	ctx := context.Background()
	c := fakeopenstack.New(t)
	flavor := c.AddFlavor("m1.large", 4, 16384, 100)
	image := c.AddImage("rhcos")
	net := c.AddNetwork("machines")
	c.AddSubnet(net, "machines-v4", "10.0.0.0/24")
	c.FailServer("broken", 500, "No valid host was found.")
	c.SetDeleteReads(1)
	s := connect(t, c)

	port, err := ports.Create(ctx, s.network, ports.CreateOpts{NetworkID: net, Name: "a-0"}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if len(port.FixedIPs) != 1 || port.FixedIPs[0].IPAddress != "10.0.0.10" {
		t.Errorf("fixed IPs = %+v, want 10.0.0.10", port.FixedIPs)
	}
	created, err := servers.Create(ctx, s.compute, servers.CreateOpts{
		Name: "a", FlavorRef: flavor, ImageRef: image, Networks: []servers.Network{{Port: port.ID}},
		BlockDevice: []servers.BlockDevice{
			{SourceType: servers.SourceImage, UUID: image, BootIndex: 0, DestinationType: servers.DestinationLocal},
			{SourceType: servers.SourceBlank, BootIndex: -1, DestinationType: servers.DestinationVolume, VolumeSize: 10, DeleteOnTermination: true},
		},
	}, nil).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if created.Status != "" {
		t.Errorf("create answer has status %q; Nova answers only the ID", created.Status)
	}
	for i, want := range []string{"BUILD", "ACTIVE"} {
		srv, err := servers.Get(ctx, s.compute, created.ID).Extract()
		if err != nil || srv.Status != want {
			t.Fatalf("read %d: status %v (%v), want %s", i, srv, err, want)
		}
		if want == "ACTIVE" {
			if len(srv.AttachedVolumes) != 1 || srv.Addresses["machines"] == nil {
				t.Errorf("active server: volumes %v, addresses %v", srv.AttachedVolumes, srv.Addresses)
			}
		}
	}
	if p := c.Object(fakeopenstack.Ports, port.ID); p["device_id"] != created.ID {
		t.Errorf("port device_id = %v, want the server", p["device_id"])
	}
	if _, err := ports.Create(ctx, s.network, ports.CreateOpts{NetworkID: net}).Extract(); err != nil {
		t.Fatal(err)
	}
	if err := servers.Delete(ctx, s.compute, created.ID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	if srv, err := servers.Get(ctx, s.compute, created.ID).Extract(); err != nil || srv.TaskState != "deleting" {
		t.Fatalf("first read after delete: %v %v, want task_state deleting", srv, err)
	}
	if _, err := servers.Get(ctx, s.compute, created.ID).Extract(); status(err) != 404 {
		t.Fatalf("second read after delete: %v, want 404", err)
	}
	if c.Len(fakeopenstack.Volumes) != 0 || c.Object(fakeopenstack.Ports, port.ID)["device_id"] != "" {
		t.Errorf("after delete: %d volumes, port %v", c.Len(fakeopenstack.Volumes), c.Object(fakeopenstack.Ports, port.ID))
	}

	// A server configured to fail ends in ERROR with Nova's fault.
	port2, _ := ports.Create(ctx, s.network, ports.CreateOpts{NetworkID: net}).Extract()
	bad, err := servers.Create(ctx, s.compute, servers.CreateOpts{Name: "broken", FlavorRef: flavor, ImageRef: image,
		Networks: []servers.Network{{Port: port2.ID}}}, nil).Extract()
	if err != nil {
		t.Fatal(err)
	}
	_, _ = servers.Get(ctx, s.compute, bad.ID).Extract()
	srv, _ := servers.Get(ctx, s.compute, bad.ID).Extract()
	if srv.Status != "ERROR" || srv.Fault.Code != 500 || srv.Fault.Message != "No valid host was found." {
		t.Errorf("failed server: %s %+v", srv.Status, srv.Fault)
	}
}

func TestServerNameFilterIsARegexp(t *testing.T) {
	ctx := context.Background()
	c := fakeopenstack.New(t)
	c.AddServer("a.b", "ACTIVE")
	c.AddServer("a.b-2", "ACTIVE")
	c.AddServer("axb", "ACTIVE")
	s := connect(t, c)
	for filter, want := range map[string]int{
		"a.b": 3, "^a.b$": 2, "^" + regexp.QuoteMeta("a.b") + "$": 1, "^" + regexp.QuoteMeta("a.b-2") + "$": 1,
	} {
		pages, err := servers.List(s.compute, servers.ListOpts{Name: filter}).AllPages(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := servers.ExtractServers(pages); len(got) != want {
			t.Errorf("name=%q: %d servers, want %d", filter, len(got), want)
		}
	}
}

func TestNeutron(t *testing.T) {
	ctx := context.Background()
	c := fakeopenstack.New(t)
	net := c.AddNetwork("n")
	c.AddSubnet(net, "s", "10.0.0.0/24")
	sg := c.AddSecurityGroup("workers", "cluster-a")
	s := connect(t, c)

	// Repeated name filters mean "any of".
	for _, n := range []string{"p-0", "p-1", "p-2"} {
		if _, err := ports.Create(ctx, s.network, ports.CreateOpts{NetworkID: net, Name: n, SecurityGroups: &[]string{sg}}).Extract(); err != nil {
			t.Fatal(err)
		}
	}
	var got []ports.Port
	pages, err := ports.List(s.network, query("?name=p-0&name=p-2&project_id="+fakeopenstack.ProjectID)).AllPages(ctx)
	if err == nil {
		got, err = ports.ExtractPorts(pages)
	}
	if err != nil || len(got) != 2 {
		t.Fatalf("ports by two names: %v %v", got, err)
	}

	// Tags at create need the tag-creation extension.
	c.SetExtensions("standard-attr-tag", "trunk")
	_, err = ports.Create(ctx, s.network, tagged{ports.CreateOpts{NetworkID: net}}).Extract()
	if status(err) != 400 {
		t.Errorf("tags without tag-creation: %v, want 400", err)
	}

	// A trunk parent cannot be deleted; a trunk is found by its port.
	p0 := c.Objects(fakeopenstack.Ports)[0]["id"].(string)
	tr, err := trunks.Create(ctx, s.network, trunks.CreateOpts{PortID: p0, Name: "p-0"}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if err := ports.Delete(ctx, s.network, p0).ExtractErr(); status(err) != 409 {
		t.Errorf("delete trunk parent: %v, want 409", err)
	}
	pages, _ = trunks.List(s.network, trunks.ListOpts{PortID: p0}).AllPages(ctx)
	if list, _ := trunks.ExtractTrunks(pages); len(list) != 1 || list[0].ID != tr.ID {
		t.Errorf("trunks of p-0: %v", list)
	}

	// Quota.
	c.SetQuota(fakeopenstack.QuotaPorts, 3)
	_, err = ports.Create(ctx, s.network, ports.CreateOpts{NetworkID: net}).Extract()
	if status(err) != 409 {
		t.Errorf("over quota: %v, want 409", err)
	}
}

type query string

func (q query) ToPortListQuery() (string, error) { return string(q), nil }

type tagged struct{ ports.CreateOpts }

func (t tagged) ToPortCreateMap() (map[string]any, error) {
	m, err := t.CreateOpts.ToPortCreateMap()
	m["port"].(map[string]any)["tags"] = []string{"a"}
	return m, err
}

func TestVolumesAndFaults(t *testing.T) {
	ctx := context.Background()
	c := fakeopenstack.New(t)
	s := connect(t, c)
	c.ResetRequests()

	c.Inject(fakeopenstack.Fault{Method: "POST", PathPrefix: "/volume/v3/{id}/volumes", Status: 429, RetryAfter: "7", Times: 2})
	for range 2 {
		_, err := volumes.Create(ctx, s.volume, volumes.CreateOpts{Size: 1, Name: "v"}, nil).Extract()
		var e gophercloud.ErrUnexpectedResponseCode
		if !errors.As(err, &e) || e.Actual != 429 || e.ResponseHeader.Get("Retry-After") != "7" {
			t.Fatalf("injected fault: %v", err)
		}
	}
	v, err := volumes.Create(ctx, s.volume, volumes.CreateOpts{Size: 1, Name: "v"}, nil).Extract()
	if err != nil || v.Status != "creating" {
		t.Fatalf("create after the fault: %v %v", v, err)
	}
	for _, want := range []string{"creating", "available"} {
		if got, _ := volumes.Get(ctx, s.volume, v.ID).Extract(); got.Status != want {
			t.Errorf("volume status %q, want %q", got.Status, want)
		}
	}
	counts := c.HitCounts()
	if counts["POST /volume/v3/{id}/volumes"] != 3 || counts["GET /volume/v3/{id}/volumes/{id}"] != 2 {
		t.Errorf("request counts: %v", counts)
	}
}

func TestConcurrentRequests(t *testing.T) {
	ctx := context.Background()
	c := fakeopenstack.New(t)
	net := c.AddNetwork("n")
	c.AddSubnet(net, "s", "10.0.0.0/24")
	s := connect(t, c)
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if _, err := ports.Create(ctx, s.network, ports.CreateOpts{NetworkID: net}).Extract(); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, p := range c.Objects(fakeopenstack.Ports) {
		ip := p["fixed_ips"].([]any)[0].(map[string]any)["ip_address"].(string)
		if seen[ip] {
			t.Errorf("address %s given twice", ip)
		}
		seen[ip] = true
	}
	if len(seen) != 20 {
		t.Errorf("%d ports, want 20", len(seen))
	}
}
