// Command infrastructure-manager runs the Cluster API infrastructure provider for
// OpenStack: OpenStackCluster, OpenStackMachine and OpenStackServer.
package main

import (
	"github.com/ocp-capi/ocp-capi/internal/manager"
	"github.com/ocp-capi/ocp-capi/internal/openstack"
	"github.com/ocp-capi/ocp-capi/internal/openstack/webhooks"
)

func main() {
	manager.Main(manager.Spec{
		Name:        "infrastructure-manager",
		Description: "infrastructure-manager runs the Cluster API infrastructure provider for OpenStack.",
		AddToScheme: openstack.AddToScheme,
		Controllers: openstack.Controllers(openstack.Options{}),
		Webhooks:    webhooks.SetupWebhooks,
	})
}
