package openstackproxy

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/flavors"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/utils"
)

// cloudFromEnv loads a cloud of the clouds.yaml named by OCP_CAPI_OPENSTACK_CLOUDS, or skips.
func cloudFromEnv(t *testing.T, name string) *Cloud {
	t.Helper()
	path := os.Getenv(CloudsEnv)
	if path == "" {
		t.Skipf("%s is not set: set it to a clouds.yaml (hack/openstack/up.sh writes /etc/openstack/clouds.yaml) to run the tests against a real cloud", CloudsEnv)
	}
	c, err := LoadCloud(path, name)
	if err != nil {
		t.Fatalf("%s=%s: %v", CloudsEnv, path, err)
	}
	return c
}

// Against the real local cloud (hack/openstack/up.sh), as the member user of cloud local-demo:
// authenticate through the proxy, list flavors, images, networks, volumes and load balancers,
// check the proxy counted them, and that a 429 with Retry-After reaches gophercloud as an
// ErrUnexpectedResponseCode carrying the header.
func TestIntegrationLocalCloud(t *testing.T) {
	cloud := cloudFromEnv(t, "local-demo")
	ctx := ctxT(t)
	p := newProxy(t, cloud.Auth.AuthURL)
	ao := cloud.AuthOptions()
	ao.IdentityEndpoint = p.AuthURL()
	c := newClients(t, ctx, ao, cloud.EndpointOpts())

	upstream := map[string]bool{}
	for o := range p.Endpoints() {
		upstream[o] = true
	}
	for _, sc := range []*gophercloud.ServiceClient{c.compute, c.network, c.image, c.volume, c.loadbal} {
		if !strings.HasPrefix(sc.Endpoint, "http://127.0.0.1:") || upstream[strings.TrimSuffix(sc.Endpoint, "/")] {
			t.Errorf("%s endpoint %s is not the proxy", sc.Type, sc.Endpoint)
		}
		for o := range upstream {
			if strings.HasPrefix(sc.Endpoint, o+"/") {
				t.Errorf("%s endpoint %s is an upstream", sc.Type, sc.Endpoint)
			}
		}
	}

	pages, err := flavors.ListDetail(c.compute, nil).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fl, err := flavors.ExtractFlavors(pages)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, f := range fl {
		names[f.Name] = true
	}
	if !names["m1.tiny"] || !names["m1.small"] {
		t.Errorf("flavors m1.tiny and m1.small missing: %v", names)
	}

	pages, err = images.List(c.image, images.ListOpts{Name: "cirros-fake"}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if im, _ := images.ExtractImages(pages); len(im) != 1 || im[0].Status != images.ImageStatusActive {
		t.Errorf("image cirros-fake: %+v", im)
	}

	pages, err = networks.List(c.network, networks.ListOpts{Name: "public"}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if nets, _ := networks.ExtractNetworks(pages); len(nets) != 1 {
		t.Errorf("network public: %+v", nets)
	}
	if _, err := volumes.List(c.volume, nil).AllPages(ctx); err != nil {
		t.Errorf("volumes: %v", err)
	}
	if _, err := loadbalancers.List(c.loadbal, nil).AllPages(ctx); err != nil {
		t.Errorf("load balancers: %v", err)
	}
	mv, err := utils.GetSupportedMicroversions(ctx, c.compute)
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := mv.IsSupported("2.52"); !ok {
		t.Errorf("nova does not support 2.52 (server tags at create): %+v", mv)
	}
	t.Logf("nova microversions through the proxy: %d.%d .. %d.%d", mv.MinMajor, mv.MinMinor, mv.MaxMajor, mv.MaxMinor)

	for m, min := range map[Match]int{
		{Service: ServiceIdentity, Method: "POST", Path: "/v3/auth/tokens"}:              1,
		{Service: ServiceCompute, Method: "GET", Path: "/v2.1/flavors/detail"}:           1,
		{Service: ServiceImage, Method: "GET", Path: "/v2/images"}:                       1,
		{Service: ServiceNetwork, Method: "GET", Path: "/v2.0/networks"}:                 1,
		{Service: ServiceVolume, Method: "GET", Path: "/v3/{id}/volumes/detail"}:         1,
		{Service: ServiceLoadBalancer, Method: "GET", Path: "/v2.0/lbaas/loadbalancers"}: 1,
	} {
		if got := p.Count(m); got < min {
			t.Errorf("Count(%+v) = %d, want >= %d", m, got, min)
		}
	}
	if n := p.Count(Match{Service: ServiceUnknown}); n != 0 {
		t.Errorf("%d calls to an unknown service", n)
	}
	if n := p.CountFunc(func(c Call) bool { return c.Status >= 400 || c.Status == 0 }); n != 0 {
		t.Errorf("%d failed calls", n)
	}
	t.Logf("calls so far:\n%s", p.Summary())

	// the real Keystone's catalog, read through the proxy: every URL is a proxy listener
	req, _ := http.NewRequestWithContext(ctx, "GET", strings.TrimSuffix(p.AuthURL(), "/")+"/auth/catalog", nil)
	req.Header.Set("X-Auth-Token", c.provider.Token())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var cat struct {
		Catalog []struct {
			Type      string
			Endpoints []struct{ URL string }
		}
	}
	err = json.NewDecoder(resp.Body).Decode(&cat)
	resp.Body.Close()
	if err != nil || len(cat.Catalog) < 5 {
		t.Fatalf("catalog: %v %+v", err, cat)
	}
	listeners := map[string]bool{}
	for _, l := range p.Endpoints() {
		listeners[l] = true
	}
	for _, s := range cat.Catalog {
		for _, e := range s.Endpoints {
			u, err := url.Parse(e.URL)
			if err != nil || !listeners[u.Scheme+"://"+u.Host] {
				t.Errorf("catalog %s endpoint %s is not a proxy listener", s.Type, e.URL)
			}
		}
	}

	// a 429 with Retry-After, as gophercloud v2 sees it
	p.Reset()
	rule := p.AddFault(Fault{Match: Match{Service: ServiceCompute, Method: "GET", Path: "/v2.1/flavors/detail"},
		Kind: FaultRateLimit, RetryAfter: 3 * time.Second, Times: 1})
	_, err = flavors.ListDetail(c.compute, nil).AllPages(ctx)
	var ue gophercloud.ErrUnexpectedResponseCode
	switch {
	case !errors.As(err, &ue):
		t.Fatalf("want a gophercloud.ErrUnexpectedResponseCode, got %T: %v", err, err)
	case ue.Actual != http.StatusTooManyRequests, !gophercloud.ResponseCodeIs(err, http.StatusTooManyRequests):
		t.Errorf("status %d: %v", ue.Actual, err)
	case ue.ResponseHeader.Get("Retry-After") != "3":
		t.Errorf("Retry-After %q", ue.ResponseHeader.Get("Retry-After"))
	}
	t.Logf("gophercloud error for an injected 429: %T: %v", err, err)
	if rule.Fired() != 1 {
		t.Errorf("fault fired %d times", rule.Fired())
	}
	if _, err := flavors.ListDetail(c.compute, nil).AllPages(ctx); err != nil {
		t.Errorf("after the single 429: %v", err)
	}
	if n := p.Count(Match{Service: ServiceCompute, Path: "/v2.1/flavors/detail", Status: 429}); n != 1 {
		t.Errorf("429s counted: %d", n)
	}
	t.Logf("with the fault:\n%s", p.Summary())
}

// The application credential of demo works through the proxy too.
func TestIntegrationAppCredential(t *testing.T) {
	cloud := cloudFromEnv(t, "local-appcred")
	ctx := ctxT(t)
	p := newProxy(t, cloud.Auth.AuthURL)
	ao := cloud.AuthOptions()
	ao.IdentityEndpoint = p.AuthURL()
	c := newClients(t, ctx, ao, cloud.EndpointOpts())
	if _, err := networks.List(c.network, nil).AllPages(ctx); err != nil {
		t.Fatal(err)
	}
	if n := p.Count(Match{Service: ServiceNetwork, Method: "GET", Path: "/v2.0/networks"}); n != 1 {
		t.Errorf("network list counted %d times", n)
	}
}
