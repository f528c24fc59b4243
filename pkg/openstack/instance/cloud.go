package instance

import (
	"context"
	"errors"

	"github.com/go-logr/logr"
	"github.com/gophercloud/gophercloud/v2"

	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/clients"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/server"
)

// Cloud says how to reach OpenStack. Set exactly one of CloudsYAML,
// Provider or Services.
type Cloud struct {
	// CloudsYAML is the content of a clouds.yaml file and CloudName the
	// entry to use. Any auth gophercloud understands works; the process's
	// OS_* environment does not override it.
	CloudsYAML []byte
	CloudName  string
	// CACert is a PEM bundle that verifies the cloud's endpoints
	// (optional; with CloudsYAML only).
	CACert []byte

	// Provider is an authenticated provider client; the endpoints come
	// from its token's catalog.
	Provider *gophercloud.ProviderClient

	// Services are ready-made service clients.
	Services *ServiceClients

	// Region picks the endpoints (CloudsYAML and Provider). Empty means
	// clouds.yaml's region_name, or any region of the catalog.
	Region string

	// Log receives what is created, adopted and deleted. Optional.
	Log logr.Logger
}

// ServiceClients are the gophercloud clients Create and Delete use. They
// are not modified: Compute is copied to pin the Nova microversion this
// package is written for.
type ServiceClients struct {
	Compute *gophercloud.ServiceClient // required
	Network *gophercloud.ServiceClient // required
	Image   *gophercloud.ServiceClient // required
	// Volume (Cinder v3) is needed only by volumes with an explicit
	// AvailabilityZone.
	Volume *gophercloud.ServiceClient
}

// Client creates and deletes instances in one cloud. It holds the
// authenticated clients: keep it (it is safe for concurrent use) rather
// than making one per call, which with CloudsYAML costs a Keystone call.
type Client struct {
	scope server.Scope
}

// New returns a Client. With CloudsYAML it authenticates once (its token
// is renewed on expiry); with Provider or Services it makes no call.
func New(ctx context.Context, cloud Cloud) (*Client, error) {
	set := 0
	for _, ok := range []bool{len(cloud.CloudsYAML) > 0, cloud.Provider != nil, cloud.Services != nil} {
		if ok {
			set++
		}
	}
	if set != 1 {
		return nil, &Error{Reason: ReasonInvalidSpec, Field: "Cloud", Message: "set exactly one of CloudsYAML, Provider or Services"}
	}
	log := cloud.Log
	if log.GetSink() == nil {
		log = logr.Discard()
	}
	var c *clients.Clients
	var err error
	switch {
	case len(cloud.CloudsYAML) > 0:
		c, err = fromCloudsYAML(ctx, cloud)
	case cloud.Provider != nil:
		c, err = fromProvider(cloud.Provider, cloud.Region)
	default:
		c, err = fromServices(*cloud.Services)
	}
	if err != nil {
		return nil, publicError(err)
	}
	return &Client{scope: server.Scope{Clients: c, Log: log}}, nil
}

// fromCloudsYAML uses the provider's own client factory, so these
// clients behave exactly as the controller's: catalog-only endpoints,
// Retry-After honoured across calls, TLS 1.2 at least.
func fromCloudsYAML(ctx context.Context, cloud Cloud) (*clients.Clients, error) {
	if cloud.CloudName == "" {
		return nil, &Error{Reason: ReasonInvalidSpec, Field: "Cloud.CloudName", Message: "is required with CloudsYAML"}
	}
	return clients.NewFactory(clients.Options{}).For(ctx, clients.Identity{
		// Key shows in error messages; name the field it comes from.
		Key: "Cloud.CloudsYAML", Version: "1",
		CloudsYAML: cloud.CloudsYAML, CACert: cloud.CACert, CloudName: cloud.CloudName, Region: cloud.Region,
	})
}

// fromProvider takes the services from the provider's catalog, as the
// controller's factory does (without Octavia, which no instance needs).
func fromProvider(p *gophercloud.ProviderClient, region string) (*clients.Clients, error) {
	sc, err := clients.NewServiceClients(p, gophercloud.EndpointOpts{Region: region})
	if err != nil {
		var e *Error
		if errors.As(publicError(err), &e) {
			e.Field = "Cloud.Provider"
		}
		return nil, e
	}
	c := clients.FromServiceClients(sc)
	c.Region = region
	return c, nil
}

func fromServices(sc ServiceClients) (*clients.Clients, error) {
	for _, s := range []struct {
		field string
		c     *gophercloud.ServiceClient
	}{{"Compute", sc.Compute}, {"Network", sc.Network}, {"Image", sc.Image}} {
		if s.c == nil {
			return nil, &Error{Reason: ReasonInvalidSpec, Field: "Cloud.Services." + s.field, Message: "is required"}
		}
	}
	return clients.FromServiceClients(clients.ServiceClients{Compute: sc.Compute, Network: sc.Network, Image: sc.Image, Volume: sc.Volume}), nil
}
