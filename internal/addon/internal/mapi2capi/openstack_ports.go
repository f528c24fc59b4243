package mapi2capi

import (
	"maps"
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	mapiv1alpha1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1alpha1"
)

// convertNetworks turns networks into ports as MAPO does:
//   - a network given by uuid, filter.id or a filter makes one port on it,
//     with one fixed IP per subnet;
//   - a network given by subnets only makes one port per subnet.
//
// Every port of a network gets the network's portTags (plus its subnets'),
// vnicType, profile, portSecurity, and, unless noAllowedAddressPairs or a
// user-managed load balancer, the API and ingress VIPs as allowed address
// pairs. Each port is built in place, so no setting is lost (upstream's
// conversion set some of them on a copy of each port).
func convertNetworks(in []mapiv1alpha1.NetworkParam, infra Infra, r *report) []infrav1.PortOpts {
	var out []infrav1.PortOpts
	for i := range in {
		out = append(out, convertNetwork(&in[i], r.providerSpec().Child("networks").Index(i), infra, r)...)
	}
	return out
}

// convertNetwork makes the ports of one network, in phases: warn about the
// fields MAPO ignores, build what its ports share, select the network, then
// make its port (or, with subnets only, one port per subnet).
func convertNetwork(net *mapiv1alpha1.NetworkParam, p *field.Path, infra Infra, r *report) []infrav1.PortOpts {
	warnIgnoredNetworkFields(net, p, r)
	common := networkPortCommon(net, p, infra, r)
	network, ok := selectNetwork(net, p, r)
	switch {
	case !ok:
		return nil
	case network == nil:
		return subnetPorts(net, &common, p, r)
	}

	// A network, with one fixed IP per subnet.
	port := deepCopyPort(&common)
	port.Network = network
	tags := slices.Clone(net.PortTags)
	for j := range net.Subnets {
		sn := &net.Subnets[j]
		checkTags(sn.PortTags, p.Child("subnets").Index(j).Child("portTags"), r)
		port.FixedIPs = append(port.FixedIPs, convertSubnet(sn, p.Child("subnets").Index(j), r))
		tags = append(tags, sn.PortTags...)
	}
	port.Tags = neutronTags(tags)
	return []infrav1.PortOpts{port}
}

// warnIgnoredNetworkFields warns about the fields of a network that MAPO
// ignores.
func warnIgnoredNetworkFields(net *mapiv1alpha1.NetworkParam, p *field.Path, r *report) {
	if net.FixedIP != "" {
		r.warn(p.Child("fixedIp"), "ignored by MAPO; not converted")
	}
	f := net.Filter
	if f.DeprecatedStatus != "" || f.DeprecatedAdminStateUp != nil || f.DeprecatedShared != nil ||
		f.DeprecatedMarker != "" || f.DeprecatedLimit != 0 || f.DeprecatedSortKey != "" || f.DeprecatedSortDir != "" {
		r.warn(p.Child("filter"), "status, adminStateUp, shared, marker, limit, sortKey and sortDir are ignored by MAPO; not converted")
	}
}

// networkPortCommon is what every port of a network shares: the VIP address
// pairs, port security, profile and vnicType. It checks the network's
// portTags, which each port gets with its subnets'.
func networkPortCommon(net *mapiv1alpha1.NetworkParam, p *field.Path, infra Infra, r *report) infrav1.PortOpts {
	common := infrav1.PortOpts{
		ResolvedPortSpecFields: infrav1.ResolvedPortSpecFields{
			AllowedAddressPairs: vipAddressPairs(net, p, infra, r),
			EnablePortSecurity:  CopyPtr(net.PortSecurity),
			Profile:             convertProfile(net.Profile, p.Child("profile"), r),
		},
	}
	common.VNICType = nonEmpty(net.VNICType)
	checkTags(net.PortTags, p.Child("portTags"), r)
	return common
}

// selectNetwork is the network the ports are made on: by ID (uuid, else
// filter.id), else by filter; nil when only subnets are given. ok is false
// when the network cannot be converted (reported in r).
func selectNetwork(net *mapiv1alpha1.NetworkParam, p *field.Path, r *report) (network *infrav1.NetworkParam, ok bool) {
	f := net.Filter
	filter := infrav1.NetworkFilter{
		Name:                f.Name,
		Description:         f.Description,
		ProjectID:           cmpOr(f.ProjectID, f.TenantID),
		FilterByNeutronTags: tagFilter(f.Tags, f.TagsAny, f.NotTags, f.NotTagsAny),
	}
	switch id := cmpOr(net.UUID, f.ID); {
	case id != "":
		idPath := p.Child("uuid")
		if net.UUID == "" {
			idPath = p.Child("filter", "id")
		}
		if !reflect.DeepEqual(filter, infrav1.NetworkFilter{}) {
			r.warn(p.Child("filter"), "the network is selected by ID; the filter, which MAPO also matches, is not converted")
		}
		id, ok := checkUUID(id, idPath, r)
		if !ok {
			return nil, false
		}
		return &infrav1.NetworkParam{ID: id}, true
	case !reflect.DeepEqual(filter, infrav1.NetworkFilter{}):
		return &infrav1.NetworkParam{Filter: &filter}, true
	case f != (mapiv1alpha1.Filter{}):
		// Only ignored fields: MAPO would match any network.
		r.fail(field.Required(p.Child("filter"), "selects no network: only fields MAPO ignores are set"))
		return nil, false
	}
	return nil, true
}

// subnetPorts makes the ports of a network given by subnets only: one port
// per subnet, with no network.
func subnetPorts(net *mapiv1alpha1.NetworkParam, common *infrav1.PortOpts, p *field.Path, r *report) []infrav1.PortOpts {
	if len(net.Subnets) == 0 {
		r.warn(p, "selects no network and no subnet: MAPO makes no port for it")
		return nil
	}
	var out []infrav1.PortOpts
	for j := range net.Subnets {
		sn := &net.Subnets[j]
		sp := p.Child("subnets").Index(j)
		port := deepCopyPort(common)
		checkTags(sn.PortTags, sp.Child("portTags"), r)
		port.Tags = neutronTags(append(slices.Clone(net.PortTags), sn.PortTags...))
		port.FixedIPs = []infrav1.FixedIP{convertSubnet(sn, sp, r)}
		r.warn(sp, "the port has no network: it is made on the OpenStackCluster's network, which must be the subnet's (MAPO looks the subnet's network up)")
		out = append(out, port)
	}
	return out
}

// convertSubnet makes the fixed IP of a subnet: by ID (uuid, else filter.id)
// or by filter, never both (upstream's conversion set both, which the
// template's CRD refuses).
func convertSubnet(sn *mapiv1alpha1.SubnetParam, p *field.Path, r *report) infrav1.FixedIP {
	f := sn.Filter
	if sn.PortSecurity != nil {
		r.warn(p.Child("portSecurity"), "ignored by MAPO; not converted (set portSecurity on the network)")
	}
	if f.NetworkID != "" {
		r.warn(p.Child("filter", "networkId"), "ignored by MAPO; not converted")
	}
	if f.SubnetPoolID != "" {
		r.warn(p.Child("filter", "subnetpoolId"), "ignored by MAPO; not converted")
	}
	if f.DeprecatedEnableDHCP != nil || f.DeprecatedLimit != 0 || f.DeprecatedMarker != "" || f.DeprecatedSortKey != "" || f.DeprecatedSortDir != "" {
		r.warn(p.Child("filter"), "enableDhcp, limit, marker, sortKey and sortDir are ignored by MAPO; not converted")
	}
	filter := infrav1.SubnetFilter{
		Name:                f.Name,
		Description:         f.Description,
		ProjectID:           cmpOr(f.ProjectID, f.TenantID),
		IPVersion:           int32(f.IPVersion), //nolint:gosec // an IP version is 4 or 6
		GatewayIP:           f.GatewayIP,
		CIDR:                f.CIDR,
		IPv6AddressMode:     f.IPv6AddressMode,
		IPv6RAMode:          f.IPv6RAMode,
		FilterByNeutronTags: tagFilter(f.Tags, f.TagsAny, f.NotTags, f.NotTagsAny),
	}
	if id := cmpOr(sn.UUID, f.ID); id != "" {
		idPath := p.Child("uuid")
		if sn.UUID == "" {
			idPath = p.Child("filter", "id")
		}
		if !reflect.DeepEqual(filter, infrav1.SubnetFilter{}) {
			r.warn(p.Child("filter"), "the subnet is selected by ID; the filter, which MAPO also matches, is not converted")
		}
		if id, ok := checkUUID(id, idPath, r); ok {
			return infrav1.FixedIP{Subnet: &infrav1.SubnetParam{ID: id}}
		}
		return infrav1.FixedIP{}
	}
	if reflect.DeepEqual(filter, infrav1.SubnetFilter{}) {
		r.warn(p, "selects no subnet: Neutron picks the address")
		return infrav1.FixedIP{}
	}
	return infrav1.FixedIP{Subnet: &infrav1.SubnetParam{Filter: &filter}}
}

// vipAddressPairs are the allowed address pairs MAPO gives the ports of a
// network: the API and ingress VIPs, unless the network asks for none, the
// load balancer is the user's, or port security is off (Neutron refuses
// address pairs then, and MAPO drops them).
func vipAddressPairs(net *mapiv1alpha1.NetworkParam, p *field.Path, infra Infra, r *report) []infrav1.AddressPair {
	if net.NoAllowedAddressPairs || infra.UserManagedLoadBalancer {
		return nil
	}
	out := VIPAddressPairs(infra)
	switch {
	case len(out) == 0:
		r.warn(p.Child("noAllowedAddressPairs"),
			"false, so MAPO allows the API and ingress VIPs on this network's ports, but the Infrastructure status names no VIP: none converted")
	case portSecurityOff(net.PortSecurity):
		r.warn(p.Child("portSecurity"),
			"false: the API and ingress VIPs that MAPO would allow as address pairs are dropped, as MAPO drops them (Neutron refuses address pairs on a port without port security); set noAllowedAddressPairs: true to say so")
		return nil
	}
	return out
}

// VIPAddressPairs are the address pairs MAPO allows on the ports it makes
// from networks: the API and ingress VIPs of the Infrastructure status.
func VIPAddressPairs(infra Infra) []infrav1.AddressPair {
	var out []infrav1.AddressPair
	for _, ip := range append(slices.Clone(infra.APIVIPs), infra.IngressVIPs...) {
		if ip != "" {
			out = append(out, infrav1.AddressPair{IPAddress: ip})
		}
	}
	return out
}

func portSecurityOff(b *bool) bool { return b != nil && !*b }

// convertPorts maps explicit ports.
func convertPorts(in []mapiv1alpha1.PortOpts, infra Infra, r *report) []infrav1.PortOpts {
	var out []infrav1.PortOpts
	for i := range in {
		mp := &in[i]
		p := r.providerSpec().Child("ports").Index(i)
		checkTags(mp.Tags, p.Child("tags"), r)
		port := infrav1.PortOpts{
			Trunk: CopyPtr(mp.Trunk),
			Tags:  neutronTags(mp.Tags),
			ResolvedPortSpecFields: infrav1.ResolvedPortSpecFields{
				AdminStateUp:       CopyPtr(mp.AdminStateUp),
				EnablePortSecurity: CopyPtr(mp.PortSecurity),
				Profile:            convertProfile(mp.Profile, p.Child("profile"), r),
			},
		}
		if mp.NetworkID == "" {
			r.fail(field.Required(p.Child("networkID"), "a port needs its network's ID"))
		} else if id, ok := checkUUID(mp.NetworkID, p.Child("networkID"), r); ok {
			port.Network = &infrav1.NetworkParam{ID: id}
		}
		port.NameSuffix = nonEmpty(mp.NameSuffix)
		port.Description = nonEmpty(mp.Description)
		port.MACAddress = nonEmpty(mp.MACAddress)
		port.VNICType = nonEmpty(mp.VNICType)
		for k, fip := range mp.FixedIPs {
			var out infrav1.FixedIP
			if fip.SubnetID != "" {
				if id, ok := checkUUID(fip.SubnetID, p.Child("fixedIPs").Index(k).Child("subnetID"), r); ok {
					out.Subnet = &infrav1.SubnetParam{ID: id}
				}
			}
			out.IPAddress = nonEmpty(fip.IPAddress)
			port.FixedIPs = append(port.FixedIPs, out)
		}
		off := portSecurityOff(mp.PortSecurity)
		switch {
		case mp.SecurityGroups == nil:
		case off && len(*mp.SecurityGroups) > 0:
			r.warn(p.Child("securityGroups"), "dropped: portSecurity is false, and Neutron refuses security groups on such a port; MAPO drops them too")
		default:
			// MAPO applies the machine's security groups when the list is
			// empty, as the template does.
			for k, id := range *mp.SecurityGroups {
				if id, ok := checkUUID(id, p.Child("securityGroups").Index(k), r); ok {
					port.SecurityGroups = append(port.SecurityGroups, infrav1.SecurityGroupParam{ID: id})
				}
			}
		}
		switch {
		case len(mp.AllowedAddressPairs) > 0 && off:
			r.warn(p.Child("allowedAddressPairs"), "dropped: portSecurity is false, and Neutron refuses address pairs on such a port; MAPO drops them too")
		case len(mp.AllowedAddressPairs) > 0 && infra.UserManagedLoadBalancer:
			r.warn(p.Child("allowedAddressPairs"), "dropped, as MAPO drops them when the cluster's load balancer is UserManaged")
		default:
			for k, ap := range mp.AllowedAddressPairs {
				if ap.IPAddress == "" {
					r.fail(field.Required(p.Child("allowedAddressPairs").Index(k).Child("ipAddress"), "an allowed address pair needs an address"))
					continue
				}
				port.AllowedAddressPairs = append(port.AllowedAddressPairs, infrav1.AddressPair{IPAddress: ap.IPAddress, MACAddress: nonEmpty(ap.MACAddress)})
			}
		}
		if mp.TenantID != "" {
			r.warn(p.Child("tenantID"), "ignored by MAPO; not converted")
		}
		if mp.ProjectID != "" {
			r.warn(p.Child("projectID"), "ignored by MAPO; not converted")
		}
		if mp.DeprecatedHostID != "" {
			r.warn(p.Child("hostID"), "ignored by MAPO; not converted")
		}
		out = append(out, port)
	}
	return out
}

// convertProfile maps a binding profile to the keys the template knows:
// capabilities containing switchdev (OVS hardware offload) and trusted:
// "true" (a trusted VF). MAPO ignores any other key, and so does the
// conversion, with a warning at the key's path.
func convertProfile(in map[string]string, p *field.Path, r *report) *infrav1.BindingProfile {
	var out infrav1.BindingProfile
	for _, k := range slices.Sorted(maps.Keys(in)) {
		switch v := in[k]; k {
		case profileCapabilities:
			if strings.Contains(v, "switchdev") {
				out.OVSHWOffload = ptr.To(true)
			} else {
				r.warn(p.Key(k), "only switchdev is understood; %q converts to nothing, as in MAPO", v)
			}
		case profileTrusted:
			if v == "true" {
				out.TrustedVF = ptr.To(true)
			}
		default:
			r.warn(p.Key(k), "ignored by MAPO (it sends only capabilities: switchdev and trusted: true to Neutron); not converted")
		}
	}
	if out == (infrav1.BindingProfile{}) {
		return nil
	}
	return &out
}

// checkTags fails on tags Neutron refuses: empty ones or ones with a comma.
func checkTags(in []string, p *field.Path, r *report) {
	for i, t := range in {
		if t == "" || strings.Contains(t, ",") {
			r.fail(field.Invalid(p.Index(i), t, "a Neutron tag must be non-empty and have no comma"))
		}
	}
}

// neutronTags dedupes port tags and drops empty ones.
func neutronTags(in []string) []infrav1.NeutronTag {
	var out []infrav1.NeutronTag
	for _, t := range in {
		if t != "" && !slices.Contains(out, infrav1.NeutronTag(t)) {
			out = append(out, infrav1.NeutronTag(t))
		}
	}
	return out
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return ptr.To(s)
}

// deepCopyPort copies a port so that ports made from one network share no
// memory.
func deepCopyPort(p *infrav1.PortOpts) infrav1.PortOpts { return *p.DeepCopy() }
