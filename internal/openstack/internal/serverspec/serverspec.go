// Package serverspec turns an OpenStackMachine spec (of a machine, or of
// the cluster's bastion) into the spec of the OpenStackServer that builds
// it. It is pure: the same inputs always give the same spec, which lets the
// controllers create a server once and decide replacement by comparing
// specs.
package serverspec

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
)

// Defaults are the values a server inherits from its infrastructure
// cluster.
type Defaults struct {
	IdentityRef *infrav1.OpenStackIdentityReference
	// Network is the cluster network, for specs without ports.
	Network *infrav1.NetworkParam
	// Subnets of the cluster network, for the default port.
	Subnets []infrav1.SubnetParam
	// Security groups for specs that name none, by role.
	ControlPlaneSecurityGroups []infrav1.SecurityGroupParam
	WorkerSecurityGroups       []infrav1.SecurityGroupParam
	BastionSecurityGroups      []infrav1.SecurityGroupParam
	Tags                       []string
}

// Role picks the default security groups.
type Role int

// Roles of a server.
const (
	Worker Role = iota
	ControlPlane
	Bastion
)

// Input is everything a server spec is made from.
type Input struct {
	Spec infrav1.OpenStackMachineSpec
	// Path of Spec in its object, for error messages ("spec",
	// "spec.bastion.spec").
	Path             string
	Role             Role
	AvailabilityZone string
	// UserDataSecret holds the bootstrap data ("" for none).
	UserDataSecret string
	Defaults       *Defaults
}

// FromMachineSpec derives the server spec.
func FromMachineSpec(in Input) (*infrav1alpha1.OpenStackServerSpec, error) {
	d := in.Defaults
	if d == nil {
		d = &Defaults{}
	}
	path := in.Path
	if path == "" {
		path = "spec"
	}
	spec := in.Spec.DeepCopy()
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
		return nil, fmt.Errorf("%s.flavor needs id or filter.name", path)
	}

	switch {
	case spec.IdentityRef != nil:
		out.IdentityRef = *spec.IdentityRef
	case d.IdentityRef != nil:
		out.IdentityRef = *d.IdentityRef
	default:
		return nil, fmt.Errorf("%s.identityRef is not set and the cluster's infrastructure provides no identity", path)
	}

	if spec.Trunk {
		out.Trunk = ptr.To(true)
	}
	if in.AvailabilityZone != "" {
		out.AvailabilityZone = ptr.To(in.AvailabilityZone)
	}
	if in.UserDataSecret != "" {
		out.UserDataRef = &corev1.LocalObjectReference{Name: in.UserDataSecret}
	}

	// Tags: the cluster's, then the server's, without duplicates.
	seen := map[string]bool{}
	for _, t := range append(append([]string{}, d.Tags...), spec.Tags...) { //nolint:gocritic // a fresh slice on purpose
		if !seen[t] {
			seen[t] = true
			out.Tags = append(out.Tags, t)
		}
	}

	// Security groups: the spec's, or the cluster's for the role.
	if len(out.SecurityGroups) == 0 {
		from := d.WorkerSecurityGroups
		switch in.Role {
		case ControlPlane:
			from = d.ControlPlaneSecurityGroups
		case Bastion:
			from = d.BastionSecurityGroups
		}
		// Copies: the spec must not share memory with the defaults.
		for i := range from {
			out.SecurityGroups = append(out.SecurityGroups, *from[i].DeepCopy())
		}
	}

	// Ports: the spec's, each on the cluster network unless it names one;
	// a spec with none gets one port on the cluster network.
	ports := spec.Ports
	if len(ports) == 0 {
		ports = []infrav1.PortOpts{{}}
	}
	for i := range ports {
		p := ports[i]
		if p.Network == nil {
			if d.Network == nil {
				return nil, fmt.Errorf("%s.ports[%d].network is not set and the cluster's infrastructure provides no network", path, i)
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
