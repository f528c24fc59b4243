// Command infrastructure-manager runs the Cluster API infrastructure provider for
// OpenStack: OpenStackCluster, OpenStackMachine and OpenStackServer.
package main

import (
	"k8s.io/apimachinery/pkg/runtime"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/ocp-capi/ocp-capi/internal/manager"
)

func main() {
	manager.Main(manager.Spec{
		Name:        "infrastructure-manager",
		Description: "infrastructure-manager runs the Cluster API infrastructure provider for OpenStack.",
		AddToScheme: []func(*runtime.Scheme) error{clusterv1.AddToScheme},
	})
}
