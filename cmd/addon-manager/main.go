// Command addon-manager runs the OpenShift add-on: the MAPI to CAPI
// MachineSet sync controller and the MachineConfigPool BuildController.
package main

import (
	"github.com/ocp-capi/ocp-capi/internal/addon"
	"github.com/ocp-capi/ocp-capi/internal/manager"
)

func main() {
	opts := addon.NewOptions()
	manager.Main(manager.Spec{
		Name:        "addon-manager",
		Description: "addon-manager runs the OpenShift add-on: MAPI to CAPI MachineSet sync and on-cluster OS image builds.",
		AddToScheme: addon.AddToScheme,
		Controllers: addon.Controllers(opts),
		ExtraFlags:  opts.AddFlags,
	})
}
