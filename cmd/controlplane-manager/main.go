// Command controlplane-manager runs the Cluster API control-plane provider for
// OpenShift: OpenshiftAssistedControlPlane to the installation and the
// control-plane Machines.
package main

import (
	"k8s.io/apimachinery/pkg/runtime"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/ocp-capi/ocp-capi/internal/manager"
)

func main() {
	manager.Main(manager.Spec{
		Name:        "controlplane-manager",
		Description: "controlplane-manager runs the Cluster API control-plane provider for OpenShift (Assisted Installer).",
		AddToScheme: []func(*runtime.Scheme) error{clusterv1.AddToScheme},
	})
}
