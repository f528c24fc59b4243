package openstackmachine

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
)

// ServerSpec derives the OpenStackServer spec of a machine. It is pure:
// the same inputs always give the same spec, which is what lets the
// controller create the server once and never update it.
func ServerSpec(osm *infrav1.OpenStackMachine, machine *clusterv1.Machine, d *Defaults) (*infrav1alpha1.OpenStackServerSpec, error) {
	if d == nil {
		d = &Defaults{}
	}
	spec := osm.Spec.DeepCopy()
	out := &infrav1alpha1.OpenStackServerSpec{
		Image:                             spec.Image,
		SSHKeyName:                        spec.SSHKeyName,
		ConfigDrive:                       spec.ConfigDrive,
		RootVolume:                        spec.RootVolume,
		AdditionalBlockDevices:            spec.AdditionalBlockDevices,
		ServerGroup:                       spec.ServerGroup,
		ServerMetadata:                    spec.ServerMetadata,
		SchedulerHintAdditionalProperties: spec.SchedulerHintAdditionalProperties,
		SecurityGroups:                    spec.SecurityGroups,
	}
	switch {
	case spec.Flavor.ID != nil:
		out.FlavorID = ptr.To(*spec.Flavor.ID)
	case spec.Flavor.Filter != nil && spec.Flavor.Filter.Name != nil:
		out.Flavor = ptr.To(*spec.Flavor.Filter.Name)
	default:
		return nil, errors.New("spec.flavor needs id or filter.name")
	}

	switch {
	case spec.IdentityRef != nil:
		out.IdentityRef = *spec.IdentityRef
	case d.IdentityRef != nil:
		out.IdentityRef = *d.IdentityRef
	default:
		return nil, errors.New("spec.identityRef is not set and the cluster's infrastructure provides no identity")
	}

	if spec.Trunk {
		out.Trunk = ptr.To(true)
	}
	if fd := machine.Spec.FailureDomain; fd != "" {
		out.AvailabilityZone = ptr.To(fd)
	}
	if name := machine.Spec.Bootstrap.DataSecretName; name != nil {
		out.UserDataRef = &corev1.LocalObjectReference{Name: *name}
	}

	// Tags: the cluster's, then the machine's, without duplicates.
	seen := map[string]bool{}
	for _, t := range append(append([]string{}, d.Tags...), spec.Tags...) {
		if !seen[t] {
			seen[t] = true
			out.Tags = append(out.Tags, t)
		}
	}

	// Security groups: the machine's, or the cluster's for its role.
	if len(out.SecurityGroups) == 0 {
		if util.IsControlPlaneMachine(machine) {
			out.SecurityGroups = d.ControlPlaneSecurityGroups
		} else {
			out.SecurityGroups = d.WorkerSecurityGroups
		}
	}

	// Ports: the machine's, each on the cluster network unless it names
	// one; a machine with none gets one port on the cluster network.
	ports := spec.Ports
	if len(ports) == 0 {
		ports = []infrav1.PortOpts{{}}
	}
	for i := range ports {
		p := ports[i]
		if p.Network == nil {
			if d.Network == nil {
				return nil, fmt.Errorf("spec.ports[%d].network is not set and the cluster's infrastructure provides no network", i)
			}
			p.Network = d.Network.DeepCopy()
			if len(p.FixedIPs) == 0 {
				for _, sn := range d.Subnets {
					p.FixedIPs = append(p.FixedIPs, infrav1.FixedIP{Subnet: sn.DeepCopy()})
				}
			}
		}
		out.Ports = append(out.Ports, p)
	}
	return out, nil
}

// ProviderID is the providerID of a server, as the OpenStack cloud
// provider writes it on the Node: openstack://<region>/<id>, or
// openstack:///<id> without a region.
func ProviderID(region, instanceID string) string {
	return "openstack://" + region + "/" + instanceID
}
