package clients_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/clients"
	"github.com/ocp-capi/ocp-capi/test/fakeopenstack"
)

const tokens = "/identity/v3/auth/tokens"

func identity(cloud *fakeopenstack.Cloud, version string) clients.Identity {
	return clients.Identity{Key: "ns/cloud-config", Version: version, CloudsYAML: cloud.Clouds("openstack"), CloudName: "openstack"}
}

// authFailure asserts err is a Transient AuthenticationFailed *clients.Error
// whose message holds every want.
func authFailure(t *testing.T, err error, want ...string) {
	t.Helper()
	var e *clients.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not a *clients.Error", err, err)
	}
	if e.Class != clients.Transient || e.Reason != clients.ReasonAuthFailed {
		t.Errorf("class %v reason %q, want Transient %q: %s", e.Class, e.Reason, clients.ReasonAuthFailed, e.Message)
	}
	for _, w := range want {
		if !strings.Contains(e.Message, w) {
			t.Errorf("message %q lacks %q", e.Message, w)
		}
	}
}

func TestFactoryAuthenticatesOncePerIdentity(t *testing.T) {
	ctx := context.Background()
	cloud := fakeopenstack.New(t)
	f := clients.NewFactory(clients.Options{})

	first, err := f.For(ctx, identity(cloud, "1"))
	if err != nil {
		t.Fatal(err)
	}
	if first.ProjectID != fakeopenstack.ProjectID || first.Region != fakeopenstack.Region {
		t.Errorf("project %q region %q", first.ProjectID, first.Region)
	}
	if first.Compute == nil || first.Network == nil || first.Image == nil || first.Volume == nil || first.LoadBalancer == nil {
		t.Errorf("missing clients: %+v", first)
	}
	for range 3 {
		again, err := f.For(ctx, identity(cloud, "1"))
		if err != nil || again != first {
			t.Fatalf("For again: %p %v, want the cached %p", again, err, first)
		}
	}
	if n := cloud.Hits("POST", tokens); n != 1 {
		t.Errorf("%d authentications, want 1", n)
	}

	// A new Secret version is a new client, and the old one is dropped.
	second, err := f.For(ctx, identity(cloud, "2"))
	if err != nil || second == first {
		t.Fatalf("new version: %p %v", second, err)
	}
	if n := cloud.Hits("POST", tokens); n != 2 {
		t.Errorf("%d authentications after a new version, want 2", n)
	}
	// Forget drops the cache of a Secret.
	f.Forget("ns/cloud-config")
	if _, err := f.For(ctx, identity(cloud, "2")); err != nil {
		t.Fatal(err)
	}
	if n := cloud.Hits("POST", tokens); n != 3 {
		t.Errorf("%d authentications after Forget, want 3", n)
	}
	// Every authentication requests a project-scoped token with the password.
	r, _ := cloud.Last("POST", tokens)
	body := string(r.Body)
	if !strings.Contains(body, `"password"`) || !strings.Contains(body, fakeopenstack.ProjectName) {
		t.Errorf("token request %s", body)
	}
}

func TestFactoryDedupsConcurrentAuthentication(t *testing.T) {
	cloud := fakeopenstack.New(t)
	f := clients.NewFactory(clients.Options{})
	var wg sync.WaitGroup
	got := make([]*clients.Clients, 16)
	for i := range got {
		wg.Go(func() {
			c, err := f.For(context.Background(), identity(cloud, "1"))
			if err != nil {
				t.Error(err)
			}
			got[i] = c
		})
	}
	wg.Wait()
	for _, c := range got {
		if c != got[0] {
			t.Fatal("concurrent callers got different clients")
		}
	}
	if n := cloud.Hits("POST", tokens); n != 1 {
		t.Errorf("%d authentications, want 1", n)
	}
}

func TestFactoryBadSecrets(t *testing.T) {
	cloud := fakeopenstack.New(t)
	good := identity(cloud, "1")
	tests := []struct {
		name string
		edit func(*clients.Identity)
		want []string
	}{
		{"no clouds.yaml", func(id *clients.Identity) { id.CloudsYAML = nil }, []string{"ns/cloud-config", `no "clouds.yaml" key`}},
		{"clouds.yaml is not YAML", func(id *clients.Identity) { id.CloudsYAML = []byte("clouds: [unterminated") },
			[]string{"ns/cloud-config", `cloud "openstack"`}},
		{"missing cloud", func(id *clients.Identity) { id.CloudName = "elsewhere" }, []string{`"elsewhere" not found`}},
		{"bad cacert", func(id *clients.Identity) { id.CACert = []byte("not a certificate") }, []string{"cacert", "not a PEM certificate"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := good
			tt.edit(&id)
			_, err := clients.NewFactory(clients.Options{}).For(context.Background(), id)
			authFailure(t, err, tt.want...)
		})
	}
	if n := cloud.Hits("POST", tokens); n != 0 {
		t.Errorf("%d authentications for Secrets that cannot work, want 0", n)
	}
}

// A blank cacert (what the cluster templates default to, since clusterctl
// cannot leave a variable empty) means none.
func TestFactoryBlankCACertMeansNone(t *testing.T) {
	cloud := fakeopenstack.New(t)
	id := identity(cloud, "1")
	id.CACert = []byte("\n")
	if _, err := clients.NewFactory(clients.Options{}).For(context.Background(), id); err != nil {
		t.Fatalf("blank cacert: %v", err)
	}
}

func TestFactoryKeystoneRefusal(t *testing.T) {
	ctx := context.Background()
	cloud := fakeopenstack.New(t)
	f := clients.NewFactory(clients.Options{})

	cloud.SetPassword("rotated")
	_, err := f.For(ctx, identity(cloud, "1"))
	authFailure(t, err, `cloud "openstack"`, "ns/cloud-config", "401")

	// A Keystone outage is not an authentication failure.
	cloud.SetPassword(fakeopenstack.Password)
	cloud.Inject(fakeopenstack.Fault{Method: "POST", PathPrefix: tokens, Status: 503})
	_, err = f.For(ctx, identity(cloud, "1"))
	var e *clients.Error
	if !errors.As(err, &e) || e.Reason != clients.ReasonUnavailable || e.Class != clients.Transient {
		t.Errorf("Keystone 503: %v, want Transient %s", err, clients.ReasonUnavailable)
	}

	// Failures are not cached.
	if _, err := f.For(ctx, identity(cloud, "1")); err != nil {
		t.Errorf("after the outage: %v", err)
	}
}

func TestFactoryOptionalServices(t *testing.T) {
	cloud := fakeopenstack.New(t)
	cloud.HideService("block-storage")
	cloud.HideService("load-balancer")
	c, err := clients.NewFactory(clients.Options{}).For(context.Background(), identity(cloud, "1"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Volume != nil || c.LoadBalancer != nil {
		t.Errorf("Volume %v LoadBalancer %v, want nil without Cinder and Octavia", c.Volume, c.LoadBalancer)
	}

	cloud.HideService("compute")
	_, err = clients.NewFactory(clients.Options{}).For(context.Background(), identity(cloud, "1"))
	var e *clients.Error
	if !errors.As(err, &e) || e.Class != clients.Terminal || !errors.Is(err, clients.ErrNoEndpoint) {
		t.Errorf("no compute endpoint: %v, want a Terminal ErrNoEndpoint", err)
	}
}

// Every request goes through Options.Transport (metrics).
func TestFactoryTransport(t *testing.T) {
	cloud := fakeopenstack.New(t)
	var mu sync.Mutex
	seen := 0
	f := clients.NewFactory(clients.Options{Transport: func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(r *http.Request) (*http.Response, error) {
			mu.Lock()
			seen++
			mu.Unlock()
			return next.RoundTrip(r)
		})
	}})
	c, err := f.For(context.Background(), identity(cloud, "1"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Compute.ListFlavors(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := len(cloud.Requests()); seen != want {
		t.Errorf("transport saw %d requests, the cloud %d", seen, want)
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// A token that expires after the password was changed must surface as an
// authentication failure, so that fixing the Secret is what the user is
// told to do.
func TestRevokedCredentialsAreAnAuthenticationFailure(t *testing.T) {
	ctx := context.Background()
	cloud := fakeopenstack.New(t)
	c, err := clients.NewFactory(clients.Options{}).For(ctx, identity(cloud, "1"))
	if err != nil {
		t.Fatal(err)
	}
	cloud.SetPassword("rotated")
	cloud.RevokeTokens()
	_, err = c.Compute.ListFlavors(ctx)
	if err == nil {
		t.Fatal("listing flavors with revoked credentials succeeded")
	}
	authFailure(t, clients.Classify(err, "listing flavors"))
}

// One Secret may serve several clouds or regions of its clouds.yaml (two
// OpenStackClusters, or one per region). Each pair must stay cached.
func TestFactoryCachesEachCloudOfASecret(t *testing.T) {
	ctx := context.Background()
	cloud := fakeopenstack.New(t)
	yaml := append(cloud.Clouds("a"), []byte(strings.TrimPrefix(string(cloud.Clouds("b")), "clouds:\n"))...)
	f := clients.NewFactory(clients.Options{})
	for range 3 {
		for _, name := range []string{"a", "b"} {
			if _, err := f.For(ctx, clients.Identity{Key: "ns/cloud-config", Version: "1", CloudsYAML: yaml, CloudName: name}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n := cloud.Hits("POST", tokens); n != 2 {
		t.Errorf("%d authentications for 2 clouds of one Secret, want 2 (the clouds evict each other)", n)
	}
}

// The identity must come from the Secret alone: the manager's own OS_*
// environment must not change which region is used.
func TestFactoryIgnoresTheEnvironment(t *testing.T) {
	t.Setenv("OS_REGION_NAME", "SomewhereElse")
	cloud := fakeopenstack.New(t)
	if _, err := clients.NewFactory(clients.Options{}).For(context.Background(), identity(cloud, "1")); err != nil {
		t.Errorf("with OS_REGION_NAME set in the manager's environment: %v", err)
	}
}
