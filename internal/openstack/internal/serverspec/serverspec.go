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
		Tags:                              tags(d.Tags, spec.Tags),
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
	// The bastion's floating IP is the cluster's (bastion.floatingIP); a
	// pool's would compete for the same port.
	if in.Role != Bastion {
		out.FloatingIPPoolRef = spec.FloatingIPPoolRef
	}
	if in.AvailabilityZone != "" {
		out.AvailabilityZone = ptr.To(in.AvailabilityZone)
	}
	if in.UserDataSecret != "" {
		out.UserDataRef = &corev1.LocalObjectReference{Name: in.UserDataSecret}
	}
	if len(out.SecurityGroups) == 0 {
		out.SecurityGroups = append(out.SecurityGroups, roleSecurityGroups(d, in.Role)...)
	}
	ports, err := portsOn(spec.Ports, d, path)
	if err != nil {
		return nil, err
	}
	out.Ports = ports
	return out, nil
}

// tags are the cluster's, then the server's, without duplicates.
func tags(cluster, server []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range append(append([]string{}, cluster...), server...) { //nolint:gocritic // a fresh slice on purpose
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// roleSecurityGroups are the cluster's security groups for the role, for a
// spec that names none. Copies: the spec must not share memory with the
// defaults.
func roleSecurityGroups(d *Defaults, role Role) []infrav1.SecurityGroupParam {
	from := d.WorkerSecurityGroups
	switch role {
	case ControlPlane:
		from = d.ControlPlaneSecurityGroups
	case Bastion:
		from = d.BastionSecurityGroups
	}
	var out []infrav1.SecurityGroupParam
	for i := range from {
		out = append(out, *from[i].DeepCopy())
	}
	return out
}

// portsOn are the spec's ports, each on the cluster network unless it
// names one; a spec with none gets one port on the cluster network.
func portsOn(ports []infrav1.PortOpts, d *Defaults, path string) ([]infrav1.PortOpts, error) {
	if len(ports) == 0 {
		ports = []infrav1.PortOpts{{}}
	}
	out := make([]infrav1.PortOpts, 0, len(ports))
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
		out = append(out, p)
	}
	return out, nil
}

// AsCAPO derives the server spec as CAPO v0.14 does, to recognise an
// OpenStackServer CAPO made (a bastion taken over from CAPO): the
// server's tags come before the cluster's; a port without a network gets
// the cluster network with clusterSubnets (the cluster's spec.subnets) as
// its fixed IPs; and the role's security groups (for a port that names
// none and has port security) and the spec's securityGroups go on each
// port rather than on the server.
func AsCAPO(in Input, clusterSubnets []infrav1.SubnetParam) (*infrav1alpha1.OpenStackServerSpec, error) {
	out, err := FromMachineSpec(in)
	if err != nil {
		return nil, err
	}
	d := in.Defaults
	if d == nil {
		d = &Defaults{}
	}
	out.Tags = tags(in.Spec.Tags, d.Tags)
	out.SecurityGroups = nil
	ports := in.Spec.DeepCopy().Ports
	if len(ports) == 0 {
		ports = []infrav1.PortOpts{{}}
	}
	for i := range ports {
		p := &ports[i]
		if p.Network == nil && d.Network != nil {
			p.Network = d.Network.DeepCopy()
			p.FixedIPs = nil
			for _, sn := range clusterSubnets {
				p.FixedIPs = append(p.FixedIPs, infrav1.FixedIP{Subnet: sn.DeepCopy()})
			}
		}
		if ptr.Deref(p.EnablePortSecurity, true) && len(p.SecurityGroups) == 0 {
			p.SecurityGroups = roleSecurityGroups(d, in.Role)
		}
		for _, sg := range in.Spec.SecurityGroups {
			p.SecurityGroups = append(p.SecurityGroups, *sg.DeepCopy())
		}
	}
	out.Ports = ports
	return out, nil
}
