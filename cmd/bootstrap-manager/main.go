// Command bootstrap-manager runs the Cluster API bootstrap provider for OpenShift:
// OpenshiftAssistedConfig to InfraEnv and the machine's boot artifact.
package main

import (
	"k8s.io/apimachinery/pkg/runtime"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/ocp-capi/ocp-capi/internal/manager"
)

func main() {
	manager.Main(manager.Spec{
		Name:        "bootstrap-manager",
		Description: "bootstrap-manager runs the Cluster API bootstrap provider for OpenShift (Assisted Installer).",
		AddToScheme: []func(*runtime.Scheme) error{clusterv1.AddToScheme},
	})
}
