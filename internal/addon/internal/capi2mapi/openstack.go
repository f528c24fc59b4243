package capi2mapi

import (
	"reflect"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/addon/internal/mapi2capi"
	mapiv1alpha1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1alpha1"
)

// providerInput is what a providerSpec is made of besides the
// infrastructure spec: fields of the CAPI machine (template).
type providerInput struct {
	failureDomain string
	// dataSecretName is the bootstrap data Secret (nil: none).
	dataSecretName *string
	// dataSecretPath names it in errors.
	dataSecretPath *field.Path
}

// openStackProviderSpec converts an OpenStackMachine spec (at p) into an
// OpenstackProviderSpec, the inverse of mapi2capi's conversion.
func openStackProviderSpec(s *infrav1.OpenStackMachineSpec, in providerInput, p *field.Path, infra Infra, r *report) *mapiv1alpha1.OpenstackProviderSpec {
	ps := &mapiv1alpha1.OpenstackProviderSpec{
		TypeMeta:         metav1.TypeMeta{APIVersion: "machine.openshift.io/v1alpha1", Kind: mapi2capi.OpenStackProviderSpecKind},
		KeyName:          s.SSHKeyName,
		Trunk:            s.Trunk,
		Tags:             slices.Clone(s.Tags),
		ConfigDrive:      mapi2capi.CopyPtr(s.ConfigDrive),
		AvailabilityZone: in.failureDomain,
	}
	if in.dataSecretName == nil || *in.dataSecretName == "" {
		r.fail(field.Required(in.dataSecretPath, "MAPI machines boot from a user data Secret: a bootstrap configRef without dataSecretName cannot be expressed"))
	} else {
		ps.UserDataSecret = &corev1.SecretReference{Name: *in.dataSecretName}
	}
	identity(s.IdentityRef, ps, p.Child("identityRef"), infra, r)
	ps.Flavor = flavor(s.Flavor, p.Child("flavor"), r)
	image := imageName(s.Image, p.Child("image"), r)
	if s.RootVolume != nil {
		ps.RootVolume = rootVolume(s.RootVolume, image, p.Child("rootVolume"), r)
	} else {
		ps.Image = image
	}
	ps.Networks, ps.Ports = ports(s.Ports, p.Child("ports"), infra, r)
	ps.SecurityGroups = securityGroups(s.SecurityGroups, p.Child("securityGroups"), r)
	ps.ServerMetadata = serverMetadata(s.ServerMetadata)
	ps.AdditionalBlockDevices = blockDevices(s.AdditionalBlockDevices, p.Child("additionalBlockDevices"), r)
	serverGroup(s.ServerGroup, ps, p.Child("serverGroup"), r)
	if s.FloatingIPPoolRef != nil {
		r.fail(field.Forbidden(p.Child("floatingIPPoolRef"), "MAPO cannot take a floating IP from a pool"))
	}
	if len(s.SchedulerHintAdditionalProperties) > 0 {
		r.fail(field.Forbidden(p.Child("schedulerHintAdditionalProperties"), "MAPO sends no scheduler hints but the server group's"))
	}
	return ps
}

func identity(ref *infrav1.OpenStackIdentityReference, ps *mapiv1alpha1.OpenstackProviderSpec, p *field.Path, infra Infra, r *report) {
	if ref == nil {
		return
	}
	if ref.Type != "" && ref.Type != infrav1.IdentityRefTypeSecret {
		r.fail(field.NotSupported(p.Child("type"), ref.Type, []string{string(infrav1.IdentityRefTypeSecret)}))
		return
	}
	if ref.Region != "" {
		r.fail(field.Forbidden(p.Child("region"), "MAPO takes the region from clouds.yaml; it cannot select one"))
	}
	ps.CloudsSecret = &corev1.SecretReference{Name: ref.Name, Namespace: infra.MAPINamespace}
	ps.CloudName = ref.CloudName
}

func flavor(f infrav1.FlavorParam, p *field.Path, r *report) string {
	switch {
	case f.ID != nil:
		r.fail(field.Forbidden(p.Child("id"), "MAPO selects flavors by name only"))
	case f.Filter == nil || ptr.Deref(f.Filter.Name, "") == "":
		r.fail(field.Required(p.Child("filter", "name"), "MAPO selects flavors by name"))
	default:
		return *f.Filter.Name
	}
	return ""
}

func imageName(im infrav1.ImageParam, p *field.Path, r *report) string {
	switch {
	case im.ID != nil:
		r.fail(field.Forbidden(p.Child("id"), "MAPO selects images by name only"))
	case im.ImageRef != nil:
		r.fail(field.Forbidden(p.Child("imageRef"), "MAPO selects images by name only"))
	case im.Filter == nil || ptr.Deref(im.Filter.Name, "") == "":
		r.fail(field.Required(p.Child("filter", "name"), "MAPO selects images by name"))
	case len(im.Filter.Tags) > 0:
		r.fail(field.Forbidden(p.Child("filter", "tags"), "MAPO selects images by name only"))
	default:
		return *im.Filter.Name
	}
	return ""
}

// rootVolume: MAPO boots it from the image named by sourceUUID; a volume
// in the machine's zone is one without a zone of its own.
func rootVolume(rv *infrav1.RootVolume, image string, p *field.Path, r *report) *mapiv1alpha1.RootVolume {
	return &mapiv1alpha1.RootVolume{
		SourceUUID: image,
		VolumeType: rv.Type,
		Size:       int(rv.SizeGiB),
		Zone:       volumeZone(rv.AvailabilityZone, p.Child("availabilityZone"), r),
	}
}

func volumeZone(az *infrav1.VolumeAvailabilityZone, p *field.Path, r *report) string {
	switch {
	case az == nil, az.From == infrav1.VolumeAZFromMachine:
		return ""
	case az.Name == nil || *az.Name == "":
		r.fail(field.Required(p.Child("name"), "a zone by name needs the name"))
		return ""
	}
	return string(*az.Name)
}

func blockDevices(in []infrav1.AdditionalBlockDevice, p *field.Path, r *report) []mapiv1alpha1.AdditionalBlockDevice {
	var out []mapiv1alpha1.AdditionalBlockDevice
	for i, bd := range in {
		d := mapiv1alpha1.AdditionalBlockDevice{Name: bd.Name, SizeGiB: int(bd.SizeGiB)}
		switch bd.Storage.Type {
		case infrav1.LocalBlockDevice:
			d.Storage.Type = mapiv1alpha1.LocalBlockDevice
			if bd.Storage.Volume != nil {
				r.fail(field.Forbidden(p.Index(i).Child("storage", "volume"), "a Local block device has no volume options"))
			}
		case infrav1.VolumeBlockDevice:
			d.Storage.Type = mapiv1alpha1.VolumeBlockDevice
			if v := bd.Storage.Volume; v != nil {
				vol := &mapiv1alpha1.BlockDeviceVolume{Type: v.Type, AvailabilityZone: volumeZone(v.AvailabilityZone, p.Index(i).Child("storage", "volume", "availabilityZone"), r)}
				if *vol != (mapiv1alpha1.BlockDeviceVolume{}) {
					d.Storage.Volume = vol
				}
			}
		default:
			r.fail(field.NotSupported(p.Index(i).Child("storage", "type"), bd.Storage.Type, []string{string(infrav1.LocalBlockDevice), string(infrav1.VolumeBlockDevice)}))
		}
		out = append(out, d)
	}
	return out
}

func serverGroup(sg *infrav1.ServerGroupParam, ps *mapiv1alpha1.OpenstackProviderSpec, p *field.Path, r *report) {
	switch {
	case sg == nil:
	case sg.ID != nil:
		ps.ServerGroupID = *sg.ID
	case sg.Filter != nil && ptr.Deref(sg.Filter.Name, "") != "":
		ps.ServerGroupName = *sg.Filter.Name
	default:
		r.fail(field.Required(p, "MAPO selects a server group by ID or name"))
	}
}

func serverMetadata(in []infrav1.ServerMetadata) map[string]string {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string]string, len(in))
	for _, m := range in {
		out[m.Key] = m.Value
	}
	return out
}

func securityGroups(in []infrav1.SecurityGroupParam, p *field.Path, r *report) []mapiv1alpha1.SecurityGroupParam {
	var out []mapiv1alpha1.SecurityGroupParam
	for i, sg := range in {
		switch {
		case sg.ID != nil:
			out = append(out, mapiv1alpha1.SecurityGroupParam{UUID: *sg.ID})
		case sg.Filter != nil:
			f := sg.Filter
			if f.Name == "" && f.Description == "" && f.ProjectID == "" && emptyTags(f.FilterByNeutronTags) {
				r.fail(field.Required(p.Index(i).Child("filter"), "the filter selects no security group"))
				continue
			}
			out = append(out, mapiv1alpha1.SecurityGroupParam{Name: f.Name, Filter: mapiv1alpha1.SecurityGroupFilter{
				Description: f.Description, ProjectID: f.ProjectID,
				Tags: joinTags(f.Tags), TagsAny: joinTags(f.TagsAny), NotTags: joinTags(f.NotTags), NotTagsAny: joinTags(f.NotTagsAny),
			}})
		default:
			r.fail(field.Required(p.Index(i), "a security group needs id or filter"))
		}
	}
	return out
}

func joinTags(t []infrav1.NeutronTag) string {
	s := make([]string, len(t))
	for i := range t {
		s[i] = string(t[i])
	}
	return strings.Join(s, ",")
}

func tagStrings(t []infrav1.NeutronTag) []string {
	if len(t) == 0 {
		return nil
	}
	out := make([]string, len(t))
	for i := range t {
		out[i] = string(t[i])
	}
	return out
}

// ports splits the ports into MAPO's networks and ports. MAPO makes the
// ports of its networks first, then its explicit ports, so the leading
// ports that a network entry describes become networks, and the rest
// explicit ports. A port describes a network entry when it has nothing a
// network entry cannot say (name suffix, description, admin state, MAC
// address, trunk, own security groups, fixed addresses) and its address
// pairs are exactly the VIPs MAPO adds to network ports, or none.
func ports(in []infrav1.PortOpts, p *field.Path, infra Infra, r *report) ([]mapiv1alpha1.NetworkParam, []mapiv1alpha1.PortOpts) {
	var networks []mapiv1alpha1.NetworkParam
	var explicit []mapiv1alpha1.PortOpts
	vips := mapi2capi.VIPAddressPairs(mapi2capi.Infra{APIVIPs: infra.APIVIPs, IngressVIPs: infra.IngressVIPs})
	for i := range in {
		port := &in[i]
		pp := p.Index(i)
		unsupportedPortFields(port, pp, r)
		if len(explicit) == 0 {
			if net, ok := asNetwork(port, vips, infra, pp, r); ok {
				networks = append(networks, net)
				continue
			}
		}
		explicit = append(explicit, asPort(port, pp, r))
	}
	return networks, explicit
}

func unsupportedPortFields(port *infrav1.PortOpts, p *field.Path, r *report) {
	if port.HostID != nil {
		r.fail(field.Forbidden(p.Child("hostID"), "MAPO does not set binding:host_id"))
	}
	if len(port.ValueSpecs) > 0 {
		r.fail(field.Forbidden(p.Child("valueSpecs"), "MAPO sends no extra port attributes"))
	}
	if port.PropagateUplinkStatus != nil {
		r.fail(field.Forbidden(p.Child("propagateUplinkStatus"), "MAPO cannot set it"))
	}
}

// asNetwork is the network entry that makes port, if one does.
func asNetwork(port *infrav1.PortOpts, vips []infrav1.AddressPair, infra Infra, p *field.Path, r *report) (mapiv1alpha1.NetworkParam, bool) {
	if port.NameSuffix != nil || port.Description != nil || port.AdminStateUp != nil || port.MACAddress != nil ||
		port.Trunk != nil || len(port.SecurityGroups) > 0 {
		return mapiv1alpha1.NetworkParam{}, false
	}
	for _, f := range port.FixedIPs {
		if f.Subnet == nil || f.IPAddress != nil {
			return mapiv1alpha1.NetworkParam{}, false
		}
	}
	pairs := port.AllowedAddressPairs
	if len(pairs) > 0 && (infra.UserManagedLoadBalancer || !reflect.DeepEqual(pairs, vips)) {
		return mapiv1alpha1.NetworkParam{}, false
	}
	net := mapiv1alpha1.NetworkParam{
		NoAllowedAddressPairs: len(pairs) == 0,
		PortTags:              tagStrings(port.Tags),
		VNICType:              ptr.Deref(port.VNICType, ""),
		Profile:               profile(port.Profile, p.Child("profile"), r),
		PortSecurity:          mapi2capi.CopyPtr(port.EnablePortSecurity),
	}
	switch n := port.Network; {
	case n == nil:
		// MAPO makes one port per subnet of a network without an ID or
		// filter: one subnet, one port.
		if len(port.FixedIPs) != 1 {
			return mapiv1alpha1.NetworkParam{}, false
		}
	case n.ID != nil:
		net.UUID = *n.ID
	case n.Filter != nil:
		f := n.Filter
		net.Filter = mapiv1alpha1.Filter{Name: f.Name, Description: f.Description, ProjectID: f.ProjectID,
			Tags: joinTags(f.Tags), TagsAny: joinTags(f.TagsAny), NotTags: joinTags(f.NotTags), NotTagsAny: joinTags(f.NotTagsAny)}
	default:
		return mapiv1alpha1.NetworkParam{}, false
	}
	if n := port.Network; n != nil && n.Filter != nil && emptyNetworkFilter(n.Filter) {
		r.fail(field.Required(p.Child("network", "filter"), "the filter selects no network; MAPO would take a network without ID or filter to mean its subnets' networks"))
	}
	for j, f := range port.FixedIPs {
		net.Subnets = append(net.Subnets, subnet(f.Subnet, p.Child("fixedIPs").Index(j).Child("subnet"), r))
	}
	portSecurityChecks(port, p, r)
	return net, true
}

func emptyNetworkFilter(f *infrav1.NetworkFilter) bool {
	return f.Name == "" && f.Description == "" && f.ProjectID == "" && emptyTags(f.FilterByNeutronTags)
}

func emptyTags(t infrav1.FilterByNeutronTags) bool {
	return len(t.Tags)+len(t.TagsAny)+len(t.NotTags)+len(t.NotTagsAny) == 0
}

// portSecurityChecks fails on address pairs or security groups on a port
// without port security: Neutron refuses them (and MAPO would drop them).
func portSecurityChecks(port *infrav1.PortOpts, p *field.Path, r *report) {
	if !ptr.Deref(port.EnablePortSecurity, true) {
		if len(port.AllowedAddressPairs) > 0 {
			r.fail(field.Forbidden(p.Child("allowedAddressPairs"), "Neutron refuses address pairs on a port with enablePortSecurity false"))
		}
		if len(port.SecurityGroups) > 0 {
			r.fail(field.Forbidden(p.Child("securityGroups"), "Neutron refuses security groups on a port with enablePortSecurity false"))
		}
	}
}

func subnet(s *infrav1.SubnetParam, p *field.Path, r *report) mapiv1alpha1.SubnetParam {
	switch {
	case s.ID != nil:
		return mapiv1alpha1.SubnetParam{UUID: *s.ID}
	case s.Filter != nil:
		f := s.Filter
		if reflect.DeepEqual(*f, infrav1.SubnetFilter{}) || (emptyTags(f.FilterByNeutronTags) && reflect.DeepEqual(*f, infrav1.SubnetFilter{FilterByNeutronTags: f.FilterByNeutronTags})) {
			r.fail(field.Required(p.Child("filter"), "the filter selects no subnet"))
		}
		return mapiv1alpha1.SubnetParam{Filter: mapiv1alpha1.SubnetFilter{
			Name: f.Name, Description: f.Description, ProjectID: f.ProjectID, IPVersion: int(f.IPVersion),
			GatewayIP: f.GatewayIP, CIDR: f.CIDR, IPv6AddressMode: f.IPv6AddressMode, IPv6RAMode: f.IPv6RAMode,
			Tags: joinTags(f.Tags), TagsAny: joinTags(f.TagsAny), NotTags: joinTags(f.NotTags), NotTagsAny: joinTags(f.NotTagsAny),
		}}
	}
	r.fail(field.Required(p, "a subnet needs id or filter"))
	return mapiv1alpha1.SubnetParam{}
}

// asPort is the explicit MAPO port of a CAPI port.
func asPort(port *infrav1.PortOpts, p *field.Path, r *report) mapiv1alpha1.PortOpts {
	out := mapiv1alpha1.PortOpts{
		NameSuffix:   ptr.Deref(port.NameSuffix, ""),
		Description:  ptr.Deref(port.Description, ""),
		AdminStateUp: mapi2capi.CopyPtr(port.AdminStateUp),
		MACAddress:   ptr.Deref(port.MACAddress, ""),
		Tags:         tagStrings(port.Tags),
		VNICType:     ptr.Deref(port.VNICType, ""),
		Profile:      profile(port.Profile, p.Child("profile"), r),
		PortSecurity: mapi2capi.CopyPtr(port.EnablePortSecurity),
		Trunk:        mapi2capi.CopyPtr(port.Trunk),
	}
	if n := port.Network; n == nil || n.ID == nil {
		r.fail(field.Required(p.Child("network", "id"),
			"MAPO makes a port it does not make from a network only on a network given by ID; a port on a network by filter, or with a subnet only, must come before the ports MAPO cannot make from a network"))
	} else {
		out.NetworkID = *n.ID
	}
	for j, f := range port.FixedIPs {
		fip := mapiv1alpha1.FixedIPs{IPAddress: ptr.Deref(f.IPAddress, "")}
		if f.Subnet != nil {
			if f.Subnet.ID == nil {
				r.fail(field.Forbidden(p.Child("fixedIPs").Index(j).Child("subnet", "filter"), "MAPO selects the subnet of an explicit port by ID only"))
			} else {
				fip.SubnetID = *f.Subnet.ID
			}
		}
		out.FixedIPs = append(out.FixedIPs, fip)
	}
	if len(port.SecurityGroups) > 0 {
		ids := []string{}
		for j, sg := range port.SecurityGroups {
			if sg.ID == nil {
				r.fail(field.Forbidden(p.Child("securityGroups").Index(j).Child("filter"), "MAPO selects the security groups of a port by ID only"))
				continue
			}
			ids = append(ids, *sg.ID)
		}
		out.SecurityGroups = &ids
	}
	for _, ap := range port.AllowedAddressPairs {
		out.AllowedAddressPairs = append(out.AllowedAddressPairs, mapiv1alpha1.AddressPair{IPAddress: ap.IPAddress, MACAddress: ptr.Deref(ap.MACAddress, "")})
	}
	portSecurityChecks(port, p, r)
	return out
}

// profile is MAPO's binding profile of the template's: the keys MAPO
// understands, with the values the OpenShift documentation writes. A
// false is what an absent key means to both; it is not written.
func profile(b *infrav1.BindingProfile, p *field.Path, r *report) map[string]string {
	if b == nil {
		return nil
	}
	out := map[string]string{}
	if ptr.Deref(b.OVSHWOffload, false) {
		out["capabilities"] = `["switchdev"]`
	} else if b.OVSHWOffload != nil {
		r.warn(p.Child("ovsHWOffload"), "false is the default; MAPO's profile cannot say it, so it is left out")
	}
	if ptr.Deref(b.TrustedVF, false) {
		out["trusted"] = "true"
	} else if b.TrustedVF != nil {
		r.warn(p.Child("trustedVF"), "false is the default; MAPO's profile cannot say it, so it is left out")
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
