package openstackproxy

import (
	"fmt"
	"os"

	"github.com/gophercloud/gophercloud/v2"
	"sigs.k8s.io/yaml"
)

// CloudsEnv names the environment variable that points the integration tests at a clouds.yaml
// (hack/openstack/up.sh writes /etc/openstack/clouds.yaml).
const CloudsEnv = "OCP_CAPI_OPENSTACK_CLOUDS"

// Cloud is the part of one clouds.yaml entry the tests need.
//
// gophercloud v2.15.0 has its own parser (openstack/config/clouds), but it imports
// gopkg.in/yaml.v2, which is not a dependency of this module; this reads the same fields with
// sigs.k8s.io/yaml and builds the AuthOptions the same way.
type Cloud struct {
	AuthType   string    `json:"auth_type,omitempty"`
	Auth       CloudAuth `json:"auth"`
	RegionName string    `json:"region_name,omitempty"`
	Interface  string    `json:"interface,omitempty"`
}

// CloudAuth is the auth section of a clouds.yaml entry.
type CloudAuth struct {
	AuthURL                     string `json:"auth_url"`
	Username                    string `json:"username,omitempty"`
	UserID                      string `json:"user_id,omitempty"`
	Password                    string `json:"password,omitempty"`
	ProjectName                 string `json:"project_name,omitempty"`
	ProjectID                   string `json:"project_id,omitempty"`
	UserDomainName              string `json:"user_domain_name,omitempty"`
	UserDomainID                string `json:"user_domain_id,omitempty"`
	ProjectDomainName           string `json:"project_domain_name,omitempty"`
	ProjectDomainID             string `json:"project_domain_id,omitempty"`
	DomainName                  string `json:"domain_name,omitempty"`
	DomainID                    string `json:"domain_id,omitempty"`
	ApplicationCredentialID     string `json:"application_credential_id,omitempty"`
	ApplicationCredentialName   string `json:"application_credential_name,omitempty"`
	ApplicationCredentialSecret string `json:"application_credential_secret,omitempty"`
}

// LoadCloud reads the cloud named name from the clouds.yaml at path.
func LoadCloud(path, name string) (*Cloud, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Clouds map[string]*Cloud `json:"clouds"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	c, ok := doc.Clouds[name]
	if !ok || c == nil {
		return nil, fmt.Errorf("%s: no cloud %q", path, name)
	}
	if c.Auth.AuthURL == "" {
		return nil, fmt.Errorf("%s: cloud %q has no auth.auth_url", path, name)
	}
	return c, nil
}

func first(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// AuthOptions are the gophercloud options for the cloud (password or application credential).
// Point IdentityEndpoint at the proxy with [Proxy.AuthURL].
func (c *Cloud) AuthOptions() gophercloud.AuthOptions {
	a := c.Auth
	ao := gophercloud.AuthOptions{
		IdentityEndpoint:            a.AuthURL,
		AllowReauth:                 true,
		ApplicationCredentialID:     a.ApplicationCredentialID,
		ApplicationCredentialName:   a.ApplicationCredentialName,
		ApplicationCredentialSecret: a.ApplicationCredentialSecret,
	}
	if ao.ApplicationCredentialID != "" || ao.ApplicationCredentialName != "" {
		// an application credential carries its own scope
		ao.Username, ao.UserID = a.Username, a.UserID
		ao.DomainID, ao.DomainName = first(a.UserDomainID, a.DomainID), first(a.UserDomainName, a.DomainName)
		return ao
	}
	ao.Username, ao.UserID, ao.Password = a.Username, a.UserID, a.Password
	ao.DomainID = first(a.UserDomainID, a.DomainID)
	ao.DomainName = first(a.UserDomainName, a.DomainName)
	switch {
	case a.ProjectID != "":
		ao.Scope = &gophercloud.AuthScope{ProjectID: a.ProjectID}
	case a.ProjectName != "":
		ao.Scope = &gophercloud.AuthScope{
			ProjectName: a.ProjectName,
			DomainID:    first(a.ProjectDomainID, a.DomainID),
			DomainName:  first(a.ProjectDomainName, a.DomainName),
		}
	}
	return ao
}

// EndpointOpts are the catalog lookup options for the cloud (region, interface).
func (c *Cloud) EndpointOpts() gophercloud.EndpointOpts {
	eo := gophercloud.EndpointOpts{Region: c.RegionName}
	switch c.Interface {
	case "internal", "internalURL":
		eo.Availability = gophercloud.AvailabilityInternal
	case "admin", "adminURL":
		eo.Availability = gophercloud.AvailabilityAdmin
	default:
		eo.Availability = gophercloud.AvailabilityPublic
	}
	return eo
}
