// Command infrastructure-manager runs the Cluster API infrastructure provider for
// OpenStack: OpenStackCluster, OpenStackMachine and OpenStackServer.
package main

import (
	"github.com/ocp-capi/ocp-capi/internal/controller/infrastructure"
	"github.com/ocp-capi/ocp-capi/internal/manager"
	"github.com/ocp-capi/ocp-capi/internal/openstack/clients"
	infrawebhooks "github.com/ocp-capi/ocp-capi/internal/webhooks/infrastructure"
)

func main() {
	manager.Main(manager.Spec{
		Name:        "infrastructure-manager",
		Description: "infrastructure-manager runs the Cluster API infrastructure provider for OpenStack.",
		AddToScheme: infrastructure.AddToScheme,
		Controllers: infrastructure.Controllers(clients.Options{}),
		Webhooks:    infrawebhooks.SetupWebhooks,
	})
}
