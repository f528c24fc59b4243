package openstackproxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/flavors"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/utils"
)

func newProxy(t *testing.T, keystoneURL string) *Proxy {
	t.Helper()
	p, err := New(keystoneURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func fakeAuthOptions(authURL string) gophercloud.AuthOptions {
	return gophercloud.AuthOptions{
		IdentityEndpoint: authURL, Username: "demo", Password: "demo", DomainName: "Default",
		Scope: &gophercloud.AuthScope{ProjectName: "demo", DomainName: "Default"},
	}
}

// clients authenticates through the proxy and builds every service client the provider uses.
type clients struct {
	provider                                 *gophercloud.ProviderClient
	compute, network, image, volume, loadbal *gophercloud.ServiceClient
}

func newClients(t *testing.T, ctx context.Context, ao gophercloud.AuthOptions, eo gophercloud.EndpointOpts) *clients {
	t.Helper()
	provider, err := openstack.AuthenticatedClient(ctx, ao)
	if err != nil {
		t.Fatalf("authenticate through the proxy: %v", err)
	}
	c := &clients{provider: provider}
	for _, x := range []struct {
		dst **gophercloud.ServiceClient
		new func(*gophercloud.ProviderClient, gophercloud.EndpointOpts) (*gophercloud.ServiceClient, error)
	}{
		{&c.compute, openstack.NewComputeV2},
		{&c.network, openstack.NewNetworkV2},
		{&c.image, openstack.NewImageV2},
		{&c.volume, openstack.NewBlockStorageV3},
		{&c.loadbal, openstack.NewLoadBalancerV2},
	} {
		sc, err := x.new(provider, eo)
		if err != nil {
			t.Fatalf("service client: %v", err)
		}
		*x.dst = sc
	}
	return c
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestTemplate(t *testing.T) {
	for in, want := range map[string]string{
		"/v2.1/servers/0a1b2c3d-0000-4000-8000-00000000000f/action": "/v2.1/servers/{id}/action",
		"/v3/0123456789abcdef0123456789abcdef/volumes/detail":       "/v3/{id}/volumes/detail",
		"/v2.0/ports":  "/v2.0/ports",
		"/v2.0/ports/": "/v2.0/ports/",
		"/v2/images/ABCDEF01-2345-6789-abcd-ef0123456789/file": "/v2/images/{id}/file",
		"/v2.1/flavors/1":                  "/v2.1/flavors/1",
		"/v2.1/os-keypairs/mykey":          "/v2.1/os-keypairs/mykey",
		"/v3/auth/tokens":                  "/v3/auth/tokens",
		"/0123456789abcdef0123456789abcde": "/0123456789abcdef0123456789abcde", // 31 hex: kept
	} {
		if got := Template(in); got != want {
			t.Errorf("Template(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRootOf(t *testing.T) {
	for in, want := range map[string]string{
		"": "", "/": "", "/v2.1": "", "/v2.1/": "", "/v3/abc": "", "/compute/v2.1": "/compute",
		"/identity": "/identity", "/identity/v3": "/identity", "/v3/%(project_id)s": "",
		"/volume/v3/0123456789abcdef0123456789abcdef": "/volume",
	} {
		if got := rootOf(in); got != want {
			t.Errorf("rootOf(%q) = %q, want %q", in, got, want)
		}
	}
}

// The whole gophercloud flow through the proxy against fake upstreams: authentication, catalog
// rewriting, every service client, pagination with absolute (Nova) and relative (Glance)
// next links, microversion discovery; nothing may bypass the proxy.
func TestGophercloudThroughProxy(t *testing.T) {
	ctx := ctxT(t)
	fc := newFakeCloud(t)
	p := newProxy(t, fc.keystone.URL+"/v3")
	if !strings.HasPrefix(p.AuthURL(), p.URL()) || !strings.HasSuffix(p.AuthURL(), "/v3") {
		t.Fatalf("AuthURL %q, URL %q", p.AuthURL(), p.URL())
	}
	c := newClients(t, ctx, fakeAuthOptions(p.AuthURL()), gophercloud.EndpointOpts{Region: "RegionOne"})

	upstreams := []string{fc.keystone.URL, fc.compute.URL, fc.network.URL, fc.image.URL, fc.volume.URL, fc.lb.URL}
	for _, sc := range []*gophercloud.ServiceClient{c.compute, c.network, c.image, c.volume, c.loadbal} {
		for _, u := range upstreams {
			if strings.HasPrefix(sc.Endpoint, u) {
				t.Errorf("%s endpoint %s points at the upstream %s", sc.Type, sc.Endpoint, u)
			}
		}
		if !strings.HasPrefix(sc.Endpoint, "http://127.0.0.1:") {
			t.Errorf("%s endpoint %s", sc.Type, sc.Endpoint)
		}
	}
	if got := len(p.Endpoints()); got != 6 {
		t.Errorf("Endpoints() = %v, want 6 origins", p.Endpoints())
	}

	pages, err := flavors.ListDetail(c.compute, nil).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fl, _ := flavors.ExtractFlavors(pages)
	if len(fl) != 2 {
		t.Errorf("flavors over 2 pages: got %d", len(fl))
	}
	pages, err = images.List(c.image, nil).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	im, _ := images.ExtractImages(pages)
	if len(im) != 2 {
		t.Errorf("images over 2 pages: got %d", len(im))
	}
	pages, err = networks.List(c.network, nil).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	nets, _ := networks.ExtractNetworks(pages)
	if len(nets) != 1 || nets[0].Name != "public" {
		t.Errorf("networks: %+v", nets)
	}
	if _, err := volumes.List(c.volume, nil).AllPages(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := loadbalancers.List(c.loadbal, nil).AllPages(ctx); err != nil {
		t.Fatal(err)
	}
	mv, err := utils.GetSupportedMicroversions(ctx, c.compute)
	if err != nil {
		t.Fatal(err)
	}
	if mv.MaxMajor != 2 || mv.MaxMinor != 93 {
		t.Errorf("nova microversions through the proxy: %+v", mv)
	}

	// everything the upstreams got came through the proxy, and was counted
	for _, svc := range []string{ServiceIdentity, ServiceCompute, ServiceNetwork, ServiceImage, ServiceVolume, ServiceLoadBalancer} {
		if up, seen := fc.Hits(svc), p.Count(Match{Service: svc}); up != seen || up == 0 {
			t.Errorf("%s: upstream got %d requests, proxy counted %d", svc, up, seen)
		}
	}
	for m, want := range map[Match]int{
		{Service: ServiceIdentity, Method: "POST", Path: "/v3/auth/tokens"}:              1,
		{Service: ServiceCompute, Method: "GET", Path: "/v2.1/flavors/detail"}:           2,
		{Service: ServiceImage, Method: "GET", Path: "/v2/images"}:                       2,
		{Service: ServiceNetwork, Method: "GET", Path: "/v2.0/networks"}:                 1,
		{Service: ServiceVolume, Method: "GET", Path: "/v3/{id}/volumes/detail"}:         1,
		{Service: ServiceLoadBalancer, Method: "GET", Path: "/v2.0/lbaas/loadbalancers"}: 1,
		{Service: ServiceCompute, Method: "GET", Path: "/v2.1/"}:                         1,
		{Service: ServiceCompute, PathPrefix: "/v2.1/flavors"}:                           2,
		{Status: 200}: p.CountFunc(func(c Call) bool { return c.Status == 200 }),
	} {
		if got := p.Count(m); got != want {
			t.Errorf("Count(%+v) = %d, want %d", m, got, want)
		}
	}
	if n := p.Count(Match{Service: ServiceUnknown}); n != 0 {
		t.Errorf("%d calls of unknown service:\n%s", n, p.Summary())
	}
	t.Logf("\n%s", p.Summary())
}

// Authenticating with an unversioned auth URL makes gophercloud read Keystone's version
// document (GET /): its links must point at the proxy.
func TestKeystoneVersionDiscovery(t *testing.T) {
	ctx := ctxT(t)
	fc := newFakeCloud(t)
	p := newProxy(t, fc.keystone.URL)
	if p.AuthURL() != p.URL() {
		t.Fatalf("AuthURL %q != URL %q for an unversioned keystone URL", p.AuthURL(), p.URL())
	}
	c := newClients(t, ctx, fakeAuthOptions(p.URL()), gophercloud.EndpointOpts{})
	if _, err := networks.List(c.network, nil).AllPages(ctx); err != nil {
		t.Fatal(err)
	}
	if n := p.Count(Match{Service: ServiceIdentity, Method: "GET", Path: "/"}); n != 1 {
		t.Errorf("version discovery through the proxy: %d GET /\n%s", n, p.Summary())
	}
	if fc.Hits("identity") != p.Count(Match{Service: ServiceIdentity}) {
		t.Errorf("identity requests bypassed the proxy")
	}
}

func get(t *testing.T, url string) (int, http.Header, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

// authenticate posts a token request through the proxy so that it learns the catalog.
func authenticate(t *testing.T, p *Proxy) {
	t.Helper()
	resp, err := http.Post(p.URL()+"/v3/auth/tokens", "application/json", strings.NewReader(`{"auth":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 201 {
		t.Fatalf("token: %d %s", resp.StatusCode, b)
	}
	if resp.Header.Get("X-Subject-Token") != "fake-token" {
		t.Errorf("X-Subject-Token not passed through: %v", resp.Header)
	}
}

func TestCatalogAndLinksRewritten(t *testing.T) {
	fc := newFakeCloud(t)
	p := newProxy(t, fc.keystone.URL+"/v3/")
	authenticate(t, p)
	upstreams := []string{fc.keystone.URL, fc.compute.URL, fc.network.URL, fc.image.URL, fc.volume.URL, fc.lb.URL}

	_, _, body := get(t, p.URL()+"/v3/auth/catalog")
	var cat struct {
		Catalog []struct {
			Type      string
			Endpoints []struct{ URL string }
		}
	}
	if err := json.Unmarshal(body, &cat); err != nil {
		t.Fatal(err)
	}
	if len(cat.Catalog) != 7 {
		t.Fatalf("catalog: %s", body)
	}
	for _, s := range cat.Catalog {
		for _, e := range s.Endpoints {
			want := p.Rewrite(map[string]string{"identity": fc.keystone.URL + "/v3/", "compute": fc.compute.URL + "/v2.1",
				"network": fc.network.URL, "image": fc.image.URL, "volumev3": fc.volume.URL + "/v3/" + fakeProjectID,
				"block-storage": fc.volume.URL + "/v3/" + fakeProjectID, "load-balancer": fc.lb.URL}[s.Type])
			if e.URL != want || strings.HasPrefix(e.URL, "http://127.0.0.1:") == false {
				t.Errorf("%s endpoint %s, want %s", s.Type, e.URL, want)
			}
		}
	}
	// version documents: links of nova's root, cinder's root (300), keystone's root (300)
	for _, u := range []string{p.Rewrite(fc.compute.URL) + "/", p.Rewrite(fc.volume.URL) + "/", p.URL() + "/", p.URL() + "/v3"} {
		_, _, body := get(t, u)
		for _, up := range upstreams {
			if strings.Contains(string(body), up) {
				t.Errorf("GET %s still names upstream %s: %s", u, up, body)
			}
		}
		if !strings.Contains(string(body), `"href":"http://127.0.0.1:`) {
			t.Errorf("GET %s: no rewritten href: %s", u, body)
		}
	}
	// Location header of a create
	resp, err := http.Post(p.Rewrite(fc.compute.URL)+"/v2.1/servers", "application/json", strings.NewReader(`{"server":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if loc := resp.Header.Get("Location"); loc != p.Rewrite(fc.compute.URL)+"/v2.1/servers/"+fakeServerID {
		t.Errorf("Location %q", loc)
	}
	if strings.Contains(string(b), fc.compute.URL) || resp.ContentLength != int64(len(b)) {
		t.Errorf("body %s (Content-Length %d, read %d)", b, resp.ContentLength, len(b))
	}
	// the same path template counted for both catalog types of cinder
	get(t, p.Rewrite(fc.volume.URL)+"/v3/"+fakeProjectID+"/volumes/detail")
	if n := p.Count(Match{Service: ServiceVolume, Path: "/v3/{id}/volumes/detail"}); n != 1 {
		t.Errorf("volume calls: %d\n%s", n, p.Summary())
	}
}

func TestCountingResetAndSummary(t *testing.T) {
	fc := newFakeCloud(t)
	p := newProxy(t, fc.keystone.URL+"/v3")
	authenticate(t, p)
	nova := p.Rewrite(fc.compute.URL)
	for _, id := range []string{fakeServerID, "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee", "0123456789abcdef0123456789abcdef"} {
		get(t, nova+"/v2.1/servers/"+id)
	}
	resp, err := http.Post(nova+"/v2.1/servers/"+fakeServerID+"/action", "application/json", strings.NewReader(`{"os-start":null}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	get(t, nova+"/v2.1/no-such-thing")

	if n := p.Count(Match{Service: ServiceCompute, Method: "GET", Path: "/v2.1/servers/{id}"}); n != 3 {
		t.Errorf("GET servers/{id}: %d", n)
	}
	if n := p.Count(Match{Service: ServiceCompute, Method: "post", PathPrefix: "/v2.1/servers/{id}/action"}); n != 1 {
		t.Errorf("POST action: %d", n)
	}
	if n := p.Count(Match{PathPrefix: "/v2.1/servers/" + fakeServerID}); n != 2 {
		t.Errorf("raw path prefix: %d", n)
	}
	if n := p.Count(Match{Status: 404}); n != 1 {
		t.Errorf("404s: %d", n)
	}
	calls := p.Calls()
	if len(calls) != 6 {
		t.Fatalf("calls: %+v", calls)
	}
	last := calls[len(calls)-1]
	if last.Service != ServiceCompute || last.Method != "GET" || last.Path != "/v2.1/no-such-thing" || last.Status != 404 || last.UpstreamStatus != 404 || last.Fault != "" {
		t.Errorf("last call %+v", last)
	}
	sum := p.Summary()
	for _, want := range []string{
		"SERVICE", "compute   GET     /v2.1/servers/{id}", "200x3", "compute   POST    /v2.1/servers/{id}/action  1      202x1",
		"identity  POST    /v3/auth/tokens", "201x1", "TOTAL", "6",
	} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary lacks %q:\n%s", want, sum)
		}
	}
	p.Reset()
	if len(p.Calls()) != 0 || p.Count(Match{}) != 0 {
		t.Errorf("Reset kept calls")
	}
	t.Logf("\n%s", sum)
}

// Each kind of fault, seen through gophercloud or plain net/http.
func TestFaultRateLimitGophercloud(t *testing.T) {
	ctx := ctxT(t)
	fc := newFakeCloud(t)
	p := newProxy(t, fc.keystone.URL+"/v3")
	c := newClients(t, ctx, fakeAuthOptions(p.AuthURL()), gophercloud.EndpointOpts{})
	rule := p.AddFault(Fault{Match: Match{Service: ServiceCompute, Method: "GET", PathPrefix: "/v2.1/flavors"},
		Kind: FaultRateLimit, RetryAfter: 1500 * time.Millisecond, Times: 1})
	before := fc.HitsOf("compute GET /v2.1/flavors/detail")

	_, err := flavors.ListDetail(c.compute, nil).AllPages(ctx)
	var ue gophercloud.ErrUnexpectedResponseCode
	if !errors.As(err, &ue) {
		t.Fatalf("want gophercloud.ErrUnexpectedResponseCode, got %T %v", err, err)
	}
	if ue.Actual != 429 || ue.ResponseHeader.Get("Retry-After") != "2" || !gophercloud.ResponseCodeIs(err, http.StatusTooManyRequests) {
		t.Errorf("429 error: actual %d, Retry-After %q, %v", ue.Actual, ue.ResponseHeader.Get("Retry-After"), err)
	}
	if fc.HitsOf("compute GET /v2.1/flavors/detail") != before {
		t.Errorf("a 429 was forwarded")
	}
	if rule.Fired() != 1 || rule.Seen() != 1 {
		t.Errorf("fired %d seen %d", rule.Fired(), rule.Seen())
	}
	// Times: 1 -> the next one passes
	if _, err := flavors.ListDetail(c.compute, nil).AllPages(ctx); err != nil {
		t.Fatalf("after the one fault: %v", err)
	}
	// gophercloud's RetryBackoffFunc hook sees the error (with the header) and may retry
	p.AddFault(Fault{Match: Match{Service: ServiceCompute, Path: "/v2.1/flavors/detail"}, Kind: FaultRateLimit, Times: 2})
	var seen []string
	c.provider.RetryBackoffFunc = func(ctx context.Context, e *gophercloud.ErrUnexpectedResponseCode, _ error, retries uint) error {
		seen = append(seen, e.ResponseHeader.Get("Retry-After"))
		return nil // retry at once
	}
	if _, err := flavors.ListDetail(c.compute, nil).AllPages(ctx); err != nil {
		t.Fatalf("with RetryBackoffFunc: %v", err)
	}
	if strings.Join(seen, ",") != "1,1" {
		t.Errorf("backoff saw Retry-After %v", seen)
	}
	if n := p.Count(Match{Service: ServiceCompute, Status: 429}); n != 3 {
		t.Errorf("429s counted: %d\n%s", n, p.Summary())
	}
	if n := p.CountFunc(func(c Call) bool { return c.Fault == FaultRateLimit && c.UpstreamStatus == 0 }); n != 3 {
		t.Errorf("rate-limit calls: %d", n)
	}
}

func doReq(client *http.Client, method, url string) (*http.Response, []byte, error) {
	req, _ := http.NewRequest(method, url, strings.NewReader(`{}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

func TestFaultStatuses(t *testing.T) {
	fc := newFakeCloud(t)
	p := newProxy(t, fc.keystone.URL+"/v3")
	authenticate(t, p)
	nova := p.Rewrite(fc.compute.URL)
	for _, tc := range []struct {
		f          Fault
		status     int
		retryAfter string
	}{
		{Fault{Kind: FaultUnavailable}, 503, ""},
		{Fault{Kind: FaultUnavailable, RetryAfter: 3 * time.Second}, 503, "3"},
		{Fault{Kind: FaultServerError}, 500, ""},
		{Fault{Kind: FaultStatus, Status: 409}, 409, ""},
		{Fault{Kind: FaultRateLimit}, 429, "1"},
	} {
		p.ClearFaults()
		tc.f.Match = Match{Service: ServiceCompute, Method: "GET", Path: "/v2.1/servers/{id}"}
		p.AddFault(tc.f)
		before := fc.Hits("compute")
		resp, body, err := doReq(http.DefaultClient, "GET", nova+"/v2.1/servers/"+fakeServerID)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != tc.status || resp.Header.Get("Retry-After") != tc.retryAfter ||
			!strings.Contains(string(body), `"code":`+fmt.Sprint(tc.status)) || resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s: %d Retry-After %q %s", tc.f.Kind, resp.StatusCode, resp.Header.Get("Retry-After"), body)
		}
		if fc.Hits("compute") != before {
			t.Errorf("%s: forwarded", tc.f.Kind)
		}
		// other paths, methods and services are not affected
		if resp, _, err := doReq(http.DefaultClient, "DELETE", nova+"/v2.1/servers/"+fakeServerID); err != nil || resp.StatusCode != 204 {
			t.Errorf("%s: DELETE affected: %v %v", tc.f.Kind, resp, err)
		}
		if resp, _, err := doReq(http.DefaultClient, "GET", p.Rewrite(fc.network.URL)+"/v2.0/networks"); err != nil || resp.StatusCode != 200 {
			t.Errorf("%s: network affected: %v %v", tc.f.Kind, resp, err)
		}
	}
}

func TestFaultDrop(t *testing.T) {
	fc := newFakeCloud(t)
	p := newProxy(t, fc.keystone.URL+"/v3")
	authenticate(t, p)
	nova := p.Rewrite(fc.compute.URL)
	p.AddFault(Fault{Match: Match{Service: ServiceCompute, Method: "POST", Path: "/v2.1/servers"}, Kind: FaultDrop, Times: 1})
	before := fc.HitsOf("compute POST /v2.1/servers")
	if _, _, err := doReq(http.DefaultClient, "POST", nova+"/v2.1/servers"); err == nil {
		t.Fatal("dropped connection: no error")
	} else {
		t.Logf("client error for a drop: %v", err)
	}
	if fc.HitsOf("compute POST /v2.1/servers") != before {
		t.Errorf("a dropped request was forwarded")
	}
	if resp, _, err := doReq(http.DefaultClient, "POST", nova+"/v2.1/servers"); err != nil || resp.StatusCode != 202 {
		t.Fatalf("after the drop: %v %v", resp, err)
	}
	calls := p.Calls()
	var dropped []Call
	for _, c := range calls {
		if c.Fault == FaultDrop {
			dropped = append(dropped, c)
		}
	}
	if len(dropped) != 1 || dropped[0].Status != 0 || dropped[0].UpstreamStatus != 0 {
		t.Errorf("dropped calls: %+v", dropped)
	}
	if !strings.Contains(p.Summary(), "0x1 202x1 (drop x1)") {
		t.Errorf("summary:\n%s", p.Summary())
	}
}

func TestFaultDropAfterForward(t *testing.T) {
	ctx := ctxT(t)
	fc := newFakeCloud(t)
	p := newProxy(t, fc.keystone.URL+"/v3")
	c := newClients(t, ctx, fakeAuthOptions(p.AuthURL()), gophercloud.EndpointOpts{})
	p.AddFault(Fault{Match: Match{Service: ServiceCompute, Method: "POST", Path: "/v2.1/servers"}, Kind: FaultDropAfterForward})
	before := fc.HitsOf("compute POST /v2.1/servers")
	_, err := c.compute.Post(ctx, c.compute.ServiceURL("servers"), map[string]any{"server": map[string]any{"name": "x"}}, nil, nil)
	if err == nil {
		t.Fatal("no error")
	}
	var ue gophercloud.ErrUnexpectedResponseCode
	var urlErr *url.Error
	if errors.As(err, &ue) || !errors.As(err, &urlErr) {
		t.Errorf("a dropped connection is a *url.Error, not an HTTP status error: %T %v", err, err)
	}
	t.Logf("gophercloud error for a drop after forward: %v", err)
	if fc.HitsOf("compute POST /v2.1/servers") != before+1 {
		t.Errorf("the request did not reach the service")
	}
	calls := p.Calls()
	last := calls[len(calls)-1]
	if last.Fault != FaultDropAfterForward || last.Status != 0 || last.UpstreamStatus != 202 {
		t.Errorf("call %+v", last)
	}
}

func TestFaultDelay(t *testing.T) {
	fc := newFakeCloud(t)
	p := newProxy(t, fc.keystone.URL+"/v3")
	authenticate(t, p)
	nova := p.Rewrite(fc.compute.URL)
	p.AddFault(Fault{Match: Match{Service: ServiceCompute, Method: "GET"}, Kind: FaultDelay, Delay: 300 * time.Millisecond, Times: 1})
	start := time.Now()
	resp, _, err := doReq(http.DefaultClient, "GET", nova+"/v2.1/servers/"+fakeServerID)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("%v %v", resp, err)
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("not delayed: %v", d)
	}
	// a client that gives up during the delay: nothing forwarded
	p.AddFault(Fault{Match: Match{Service: ServiceCompute, Method: "GET"}, Kind: FaultDelay, Delay: 5 * time.Second})
	before := fc.Hits("compute")
	impatient := &http.Client{Timeout: 100 * time.Millisecond}
	if _, _, err := doReq(impatient, "GET", nova+"/v2.1/servers/"+fakeServerID); err == nil {
		t.Fatal("no timeout")
	}
	deadline := time.Now().Add(2 * time.Second)
	for p.CountFunc(func(c Call) bool { return c.Fault == FaultDelay }) < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if fc.Hits("compute") != before {
		t.Errorf("forwarded after the client gave up")
	}
	calls := p.Calls()
	if last := calls[len(calls)-1]; last.Fault != FaultDelay || last.Status != 0 {
		t.Errorf("abandoned call %+v", last)
	}
}

// statuses sends n GETs and returns their statuses as a string like "200 429 200".
func statuses(t *testing.T, url string, n int) string {
	t.Helper()
	var out []string
	for i := 0; i < n; i++ {
		resp, _, err := doReq(http.DefaultClient, "GET", url)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprint(resp.StatusCode))
	}
	return strings.Join(out, " ")
}

func TestFaultSelection(t *testing.T) {
	fc := newFakeCloud(t)
	p := newProxy(t, fc.keystone.URL+"/v3")
	authenticate(t, p)
	u := p.Rewrite(fc.compute.URL) + "/v2.1/servers/" + fakeServerID
	m := Match{Service: ServiceCompute, Method: "GET", PathPrefix: "/v2.1/servers/{id}"}

	for _, tc := range []struct {
		name string
		f    Fault
		want string
	}{
		{"only the 3rd", Fault{Nth: 3}, "200 200 500 200 200"},
		{"next 2", Fault{Times: 2}, "500 500 200 200 200"},
		{"from the 2nd, 2 times", Fault{Nth: 2, Times: 2}, "200 500 500 200 200"},
		{"always", Fault{}, "500 500 500 500 500"},
		{"probability 0 is always", Fault{Probability: 0}, "500 500 500 500 500"},
	} {
		p.ClearFaults()
		tc.f.Match, tc.f.Kind = m, FaultServerError
		a := p.AddFault(tc.f)
		if got := statuses(t, u, 5); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
		if a.Seen() != 5 {
			t.Errorf("%s: seen %d", tc.name, a.Seen())
		}
	}

	// probability: seeded, so the same seed gives the same sequence on a new proxy
	seq := func() string {
		p.ClearFaults()
		p.AddFault(Fault{Match: m, Kind: FaultServerError, Probability: 0.5, Seed: 42})
		return statuses(t, u, 40)
	}
	a, b := seq(), seq()
	if a != b {
		t.Errorf("same seed, different sequences:\n%s\n%s", a, b)
	}
	if n := strings.Count(a, "500"); n < 8 || n > 32 {
		t.Errorf("probability 0.5 fired %d/40", n)
	}
	p.ClearFaults()
	p.AddFault(Fault{Match: m, Kind: FaultServerError, Probability: 0.5, Seed: 7, Times: 3})
	if n := strings.Count(statuses(t, u, 40), "500"); n != 3 {
		t.Errorf("probability with Times 3 fired %d", n)
	}

	// order: first rule that fires wins; RemoveFault
	p.ClearFaults()
	first := p.AddFault(Fault{Match: m, Kind: FaultStatus, Status: 418, Times: 1})
	second := p.AddFault(Fault{Match: m, Kind: FaultUnavailable})
	if got := statuses(t, u, 3); got != "418 503 503" {
		t.Errorf("rule order: %s", got)
	}
	if first.Seen() != 3 || first.Fired() != 1 || second.Seen() != 2 || second.Fired() != 2 {
		t.Errorf("first %d/%d second %d/%d", first.Seen(), first.Fired(), second.Seen(), second.Fired())
	}
	p.RemoveFault(second)
	if got := statuses(t, u, 2); got != "200 200" {
		t.Errorf("after RemoveFault: %s", got)
	}
	// a rule for another service does not match
	p.ClearFaults()
	p.AddFault(Fault{Match: Match{Service: ServiceNetwork}, Kind: FaultServerError})
	if got := statuses(t, u, 2); got != "200 200" {
		t.Errorf("network rule hit compute: %s", got)
	}
}

func TestConcurrentUse(t *testing.T) {
	fc := newFakeCloud(t)
	p := newProxy(t, fc.keystone.URL+"/v3")
	authenticate(t, p)
	u := p.Rewrite(fc.compute.URL) + "/v2.1/servers/" + fakeServerID
	rule := p.AddFault(Fault{Match: Match{Service: ServiceCompute}, Kind: FaultRateLimit, Probability: 0.3, Seed: 1})
	var wg sync.WaitGroup
	var mu sync.Mutex
	got := map[int]int{}
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				resp, _, err := doReq(http.DefaultClient, "GET", u)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				got[resp.StatusCode]++
				mu.Unlock()
				_ = p.Summary()
				_ = p.Count(Match{Status: 429})
			}
		}()
	}
	wg.Wait()
	if got[200]+got[429] != 200 || got[429] != rule.Fired() {
		t.Errorf("statuses %v, fired %d", got, rule.Fired())
	}
	if n := p.Count(Match{Service: ServiceCompute}); n != 200 {
		t.Errorf("counted %d", n)
	}
}

func TestClose(t *testing.T) {
	fc := newFakeCloud(t)
	p, err := New(fc.keystone.URL + "/v3")
	if err != nil {
		t.Fatal(err)
	}
	authenticate(t, p)
	nova := p.Rewrite(fc.compute.URL)
	p.AddFault(Fault{Match: Match{Service: ServiceCompute}, Kind: FaultDelay, Delay: time.Minute})
	done := make(chan error, 1)
	go func() { _, _, err := doReq(http.DefaultClient, "GET", nova+"/v2.1/"); done <- err }()
	time.Sleep(100 * time.Millisecond)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close left a delayed request hanging")
	}
	if err := p.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := http.Get(p.URL() + "/v3"); err == nil {
		t.Errorf("still listening after Close")
	}
}

func TestRewrite(t *testing.T) {
	fc := newFakeCloud(t)
	p := newProxy(t, fc.keystone.URL+"/v3")
	authenticate(t, p)
	front := p.Endpoints()[fc.compute.URL]
	if front == "" {
		t.Fatalf("no listener for %s: %v", fc.compute.URL, p.Endpoints())
	}
	up := strings.TrimPrefix(fc.compute.URL, "http://")
	for in, want := range map[string]string{
		fc.compute.URL + "/v2.1/servers?limit=1": front + "/v2.1/servers?limit=1",
		fc.compute.URL:                           front,
		"HTTP://" + strings.ToUpper(up) + "/x":   front + "/x",
		"http://unknown.example:1/x":             "http://unknown.example:1/x",
		"not a url":                              "not a url",
	} {
		if got := p.Rewrite(in); got != want {
			t.Errorf("Rewrite(%q) = %q, want %q", in, got, want)
		}
	}
	// HEAD of a JSON resource keeps its Content-Length
	req, _ := http.NewRequest("HEAD", front+"/v2.1/servers/"+fakeServerID, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.ContentLength <= 0 {
		t.Errorf("HEAD: %d, Content-Length %d", resp.StatusCode, resp.ContentLength)
	}
}

func TestNewRejectsBadURL(t *testing.T) {
	for _, u := range []string{"", "127.0.0.1:5000", "ftp://x/v3", "http://"} {
		if p, err := New(u); err == nil {
			p.Close()
			t.Errorf("New(%q) accepted", u)
		}
	}
}

func TestLoadCloud(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clouds.yaml")
	if err := os.WriteFile(path, []byte(`clouds:
  local-demo:
    auth:
      auth_url: http://127.0.0.1:5000/v3
      username: demo
      password: demo
      project_name: demo
      user_domain_name: Default
      project_domain_name: Default
    region_name: RegionOne
    interface: public
    identity_api_version: 3
  local-appcred:
    auth_type: v3applicationcredential
    auth:
      auth_url: http://127.0.0.1:5000/v3
      application_credential_id: abc
      application_credential_secret: s3cret
    region_name: RegionOne
`), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := LoadCloud(path, "local-demo")
	if err != nil {
		t.Fatal(err)
	}
	ao := c.AuthOptions()
	if ao.IdentityEndpoint != "http://127.0.0.1:5000/v3" || ao.Username != "demo" || ao.Password != "demo" ||
		ao.DomainName != "Default" || ao.Scope == nil || ao.Scope.ProjectName != "demo" || ao.Scope.DomainName != "Default" || !ao.AllowReauth {
		t.Errorf("password cloud: %+v scope %+v", ao, ao.Scope)
	}
	if eo := c.EndpointOpts(); eo.Region != "RegionOne" || eo.Availability != gophercloud.AvailabilityPublic {
		t.Errorf("endpoint opts %+v", eo)
	}
	c, err = LoadCloud(path, "local-appcred")
	if err != nil {
		t.Fatal(err)
	}
	ao = c.AuthOptions()
	if ao.ApplicationCredentialID != "abc" || ao.ApplicationCredentialSecret != "s3cret" || ao.Scope != nil || ao.Password != "" {
		t.Errorf("appcred cloud: %+v", ao)
	}
	if _, err := LoadCloud(path, "nope"); err == nil {
		t.Errorf("unknown cloud accepted")
	}
}

// TestNewListening: every listener is where listen says (the catalog's
// origins too), so that clients behind fixed port forwards reach it.
func TestNewListening(t *testing.T) {
	fc := newFakeCloud(t)
	ports, err := envtestFreePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		fc.keystone.URL: fmt.Sprintf("127.0.0.1:%d", ports[0]),
		fc.compute.URL:  fmt.Sprintf("127.0.0.1:%d", ports[1]),
	}
	p, err := NewListening(fc.keystone.URL+"/v3/", func(origin string) string { return want[origin] })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	if p.URL() != "http://"+want[fc.keystone.URL] {
		t.Errorf("keystone listener %s, want %s", p.URL(), want[fc.keystone.URL])
	}
	authenticate(t, p)
	if got := p.Rewrite(fc.compute.URL + "/v2.1"); got != "http://"+want[fc.compute.URL]+"/v2.1" {
		t.Errorf("compute listener %s, want %s", got, want[fc.compute.URL])
	}
	if got := p.Rewrite(fc.network.URL); !strings.HasPrefix(got, "http://127.0.0.1:") || got == fc.network.URL {
		t.Errorf("network listener %s: an origin listen says nothing of gets a free port", got)
	}
}

// envtestFreePorts are n free local ports.
func envtestFreePorts(n int) ([]int, error) {
	var out []int
	var lns []net.Listener
	defer func() {
		for _, l := range lns {
			_ = l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		lns = append(lns, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}

func TestCreatesAndDeletes(t *testing.T) {
	calls := []Call{
		{Service: ServiceIdentity, Method: "POST", Path: "/v3/auth/tokens"},
		{Service: ServiceCompute, Method: "GET", Path: "/v2.1/servers/{id}"},
		{Service: ServiceCompute, Method: "POST", Path: "/v2.1/servers"},
		{Service: ServiceCompute, Method: "POST", Path: "/v2.1/servers/{id}/action"},
		{Service: ServiceNetwork, Method: "PUT", Path: "/v2.0/floatingips/{id}"},
		{Service: ServiceNetwork, Method: "POST", Path: "/v2.0/security-group-rules"},
		{Service: ServiceNetwork, Method: "DELETE", Path: "/v2.0/security-group-rules/{id}"},
		{Service: ServiceNetwork, Method: "PUT", Path: "/v2.0/networks/{id}/tags"},
		{Service: ServiceNetwork, Method: "DELETE", Path: "/v2.0/ports/{id}"},
		{Service: ServiceLoadBalancer, Method: "POST", Path: "/v2/lbaas/pools/{id}/members"},
	}
	got := CreatesAndDeletes(calls)
	want := []string{"POST /v2.1/servers", "DELETE /v2.0/ports/{id}", "POST /v2/lbaas/pools/{id}/members"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("CreatesAndDeletes = %q, want %q", got, want)
	}
}
