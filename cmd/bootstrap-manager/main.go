// Command bootstrap-manager runs the Cluster API bootstrap provider for OpenShift:
// OpenshiftAssistedConfig to InfraEnv and the machine's boot artifact, and the
// binding and approval of the Agents that register.
package main

import (
	"github.com/ocp-capi/ocp-capi/bootstrap"
	"github.com/ocp-capi/ocp-capi/bootstrap/webhooks"
	"github.com/ocp-capi/ocp-capi/internal/manager"
)

func main() {
	opts := &bootstrap.Options{}
	manager.Main(manager.Spec{
		Name:        "bootstrap-manager",
		Description: "bootstrap-manager runs the Cluster API bootstrap provider for OpenShift (Assisted Installer).",
		AddToScheme: bootstrap.AddToScheme,
		Controllers: bootstrap.Controllers(opts),
		Webhooks:    webhooks.SetupWebhooks,
		ExtraFlags:  opts.AddFlags,
		Cache:       bootstrap.Cache,
	})
}
