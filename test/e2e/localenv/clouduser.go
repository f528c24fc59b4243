package localenv

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"

	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/roles"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/users"
	"sigs.k8s.io/yaml"

	"github.com/ocp-capi/ocp-capi/test/openstackproxy"
)

// RandomPassword is a password no log line holds by chance: 32 characters
// of the URL-safe base64 alphabet.
func RandomPassword() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// TwinUser makes, as cloud admin of cloudsYAML, a user named name with
// password that has the roles the user of cloud has in cloud's project,
// and returns the clouds.yaml with cloud signing in as that user, and a
// function that deletes the user. The local OpenStack's own passwords are
// short words; a twin with a random password lets a scan of logs look for it.
func TwinUser(ctx context.Context, cloudsYAML, admin, cloud, name, password string) ([]byte, func(context.Context) error, error) {
	ac, err := openstackproxy.LoadCloud(cloudsYAML, admin)
	if err != nil {
		return nil, nil, err
	}
	adminProvider, err := openstack.AuthenticatedClient(ctx, ac.AuthOptions())
	if err != nil {
		return nil, nil, fmt.Errorf("authenticating as %s: %w", admin, err)
	}
	identity, err := openstack.NewIdentityV3(adminProvider, ac.EndpointOpts())
	if err != nil {
		return nil, nil, err
	}
	uc, err := openstackproxy.LoadCloud(cloudsYAML, cloud)
	if err != nil {
		return nil, nil, err
	}
	userProvider, err := openstack.AuthenticatedClient(ctx, uc.AuthOptions())
	if err != nil {
		return nil, nil, fmt.Errorf("authenticating as %s: %w", cloud, err)
	}
	// The token says who the cloud's user is, in which project, with which roles.
	res, ok := userProvider.GetAuthResult().(tokens.CreateResult)
	if !ok {
		return nil, nil, fmt.Errorf("%s: not a Keystone v3 token", cloud)
	}
	u, err := res.ExtractUser()
	if err != nil {
		return nil, nil, err
	}
	p, err := res.ExtractProject()
	if err != nil {
		return nil, nil, err
	}
	if p == nil {
		return nil, nil, fmt.Errorf("%s: no project in the token", cloud)
	}
	rs, err := res.ExtractRoles()
	if err != nil {
		return nil, nil, err
	}
	enabled := true
	twin, err := users.Create(ctx, identity, users.CreateOpts{
		Name: name, DomainID: u.Domain.ID, DefaultProjectID: p.ID, Password: password, Enabled: &enabled,
		Description: "ocp-capi e2e: " + cloud + "'s twin with a random password, for the credential scan",
	}).Extract()
	if err != nil {
		return nil, nil, fmt.Errorf("creating user %s: %w", name, err)
	}
	remove := func(ctx context.Context) error { return users.Delete(ctx, identity, twin.ID).ExtractErr() }
	for _, r := range rs {
		if err := roles.Assign(ctx, identity, r.ID, roles.AssignOpts{UserID: twin.ID, ProjectID: p.ID}).ExtractErr(); err != nil {
			_ = remove(ctx)
			return nil, nil, fmt.Errorf("granting %s to %s on %s: %w", r.Name, name, p.Name, err)
		}
	}
	out, err := withUser(cloudsYAML, cloud, name, password)
	if err != nil {
		_ = remove(ctx)
		return nil, nil, err
	}
	return out, remove, nil
}

// withUser is the clouds.yaml at path with cloud signing in as user.
func withUser(path, cloud, user, password string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	clouds, _ := doc["clouds"].(map[string]any)
	entry, _ := clouds[cloud].(map[string]any)
	auth, _ := entry["auth"].(map[string]any)
	if auth == nil {
		return nil, fmt.Errorf("%s: cloud %q has no auth", path, cloud)
	}
	delete(auth, "user_id")
	auth["username"], auth["password"] = user, password
	return yaml.Marshal(doc)
}
