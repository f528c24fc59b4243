package localenv

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"

	"github.com/ocp-capi/ocp-capi/test/openstackproxy"
)

// TestTwinUser makes a twin of the local OpenStack's demo user, works in
// the demo project as the twin, and deletes it: the twin's password is
// refused afterwards.
func TestTwinUser(t *testing.T) {
	clouds := os.Getenv(openstackproxy.CloudsEnv)
	if clouds == "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not set under CI (make test starts the local OpenStack)", openstackproxy.CloudsEnv)
		}
		t.Skipf("%s is not set: the test needs the local OpenStack (make openstack-up)", openstackproxy.CloudsEnv)
	}
	ctx := context.Background()
	pw, err := RandomPassword()
	if err != nil {
		t.Fatal(err)
	}
	if len(pw) < MinSecretLength {
		t.Fatalf("password of %d characters, shorter than the scanner looks for", len(pw))
	}
	name := "ocp-capi-twin-test-" + pw[:6]
	data, remove, err := TwinUser(ctx, clouds, "local", "local-demo", name, pw)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "clouds.yaml")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := openstackproxy.LoadCloud(path, "local-demo")
	if err != nil {
		t.Fatal(err)
	}
	if c.Auth.Username != name || c.Auth.Password != pw {
		t.Errorf("the clouds.yaml signs in as %q, want the twin %q with its password", c.Auth.Username, name)
	}
	p, err := openstack.AuthenticatedClient(ctx, c.AuthOptions())
	if err != nil {
		_ = remove(ctx)
		t.Fatalf("signing in as the twin: %v", err)
	}
	nc, err := openstack.NewNetworkV2(p, c.EndpointOpts())
	if err == nil {
		_, err = networks.List(nc, networks.ListOpts{}).AllPages(ctx)
	}
	if err != nil {
		t.Errorf("listing networks as the twin: %v", err)
	}
	if err := remove(ctx); err != nil {
		t.Fatalf("deleting the twin: %v", err)
	}
	if _, err := openstack.AuthenticatedClient(ctx, c.AuthOptions()); err == nil {
		t.Errorf("the deleted twin can still sign in")
	}
}
