package openstackmachine

import (
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/openstack/internal/serverspec"
)

// Defaults are the values a machine inherits from its infrastructure
// cluster.
type Defaults = serverspec.Defaults

// ServerSpec derives the OpenStackServer spec of a machine: its own spec,
// the Machine's failure domain and bootstrap data, and the cluster's
// defaults for its role.
func ServerSpec(osm *infrav1.OpenStackMachine, machine *clusterv1.Machine, d *Defaults) (*infrav1alpha1.OpenStackServerSpec, error) {
	role := serverspec.Worker
	if util.IsControlPlaneMachine(machine) {
		role = serverspec.ControlPlane
	}
	return serverspec.FromMachineSpec(serverspec.Input{
		Spec:             osm.Spec,
		Role:             role,
		AvailabilityZone: machine.Spec.FailureDomain,
		UserDataSecret:   ptr.Deref(machine.Spec.Bootstrap.DataSecretName, ""),
		Defaults:         d,
	})
}

// ProviderID is the providerID of a server, as the OpenStack cloud
// provider writes it on the Node: openstack://<region>/<id>, or
// openstack:///<id> without a region.
func ProviderID(region, instanceID string) string {
	return "openstack://" + region + "/" + instanceID
}
