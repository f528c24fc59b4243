// Command addon-manager runs the OpenShift add-on: it mirrors Machine API
// MachineSets as Cluster API MachineSets and builds layered node images.
package main

import (
	"k8s.io/apimachinery/pkg/runtime"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/ocp-capi/ocp-capi/internal/manager"
)

func main() {
	manager.Main(manager.Spec{
		Name:        "addon-manager",
		Description: "addon-manager runs the OpenShift add-on: MAPI to CAPI MachineSet sync and on-cluster image builds.",
		AddToScheme: []func(*runtime.Scheme) error{clusterv1.AddToScheme},
	})
}
