// Command controlplane-manager runs the Cluster API control-plane provider for
// OpenShift: OpenshiftAssistedControlPlane to the installation and the
// control-plane Machines.
package main

import (
	"github.com/ocp-capi/ocp-capi/controlplane"
	"github.com/ocp-capi/ocp-capi/controlplane/webhooks"
	"github.com/ocp-capi/ocp-capi/internal/manager"
)

func main() {
	opts := &controlplane.Options{}
	manager.Main(manager.Spec{
		Name:        "controlplane-manager",
		Description: "controlplane-manager runs the Cluster API control-plane provider for OpenShift (Assisted Installer).",
		AddToScheme: controlplane.AddToScheme,
		Controllers: controlplane.Controllers(opts),
		Webhooks:    webhooks.SetupWebhooks,
		ExtraFlags:  opts.AddFlags,
		Cache:       controlplane.Cache,
	})
}
