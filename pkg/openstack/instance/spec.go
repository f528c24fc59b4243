package instance

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"k8s.io/utils/ptr"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/server"
)

// Spec describes one instance. Name, Image, Flavor and at least one port
// are required; everything else is optional.
type Spec struct {
	// Name of the Nova server. Everything made for it is named after it
	// (see the package documentation), which is how a lost result is found
	// again: it must be unique within the project.
	Name string

	// Image to boot, by ID or by Name and/or Tags.
	Image Ref
	// Flavor, by ID or by Name (flavors have no tags).
	Flavor Ref

	// Ports of the server, in order; the first is its primary NIC.
	Ports []Port
	// SecurityGroups of every port that names none of its own.
	SecurityGroups []Ref
	// Tags of the server and of its ports and trunks. Neutron forbids
	// commas in tags.
	Tags []string
	// Metadata is Nova server metadata.
	Metadata map[string]string
	// UserData is passed to Nova as is (an Ignition config, cloud-init).
	UserData []byte

	// AvailabilityZone of the server; empty lets Nova choose.
	AvailabilityZone string
	// SSHKeyName is a Nova keypair.
	SSHKeyName string
	// ConfigDrive attaches a config drive.
	ConfigDrive bool
	// Trunk is the default of Port.Trunk.
	Trunk bool
	// ServerGroup, by ID or by Name; zero for none.
	ServerGroup Ref
	// SchedulerHints are extra Nova scheduler hints. A value must be a
	// bool, a string or an integer that fits in 32 bits.
	SchedulerHints map[string]any

	// RootVolume makes the server boot from a volume made from Image.
	RootVolume *RootVolume
	// Volumes are additional disks.
	Volumes []Volume
}

// Ref selects one OpenStack resource: by ID, or by Name and/or Tags, which
// must then match exactly one resource (else the error's reason is
// NotFound or Ambiguous).
type Ref struct {
	ID   string
	Name string
	// Tags the resource must all carry (images, networks, subnets,
	// security groups).
	Tags []string
}

// IsZero reports whether nothing is selected.
func (r Ref) IsZero() bool { return r.ID == "" && r.Name == "" && len(r.Tags) == 0 }

// Port is one NIC of the server.
type Port struct {
	// Network of the port (required).
	Network Ref
	// NameSuffix names the port <server>-<NameSuffix> instead of
	// <server>-<index>.
	NameSuffix  string
	Description string
	// FixedIPs the port asks for; empty lets Neutron choose.
	FixedIPs []FixedIP
	// SecurityGroups of the port; empty means Spec.SecurityGroups.
	SecurityGroups []Ref
	// Tags of the port and its trunk, besides Spec.Tags.
	Tags []string
	// Trunk makes the port the parent of a trunk; nil means Spec.Trunk.
	Trunk *bool
	// EnablePortSecurity; nil inherits the network's. With false, the port
	// takes no security groups.
	EnablePortSecurity *bool
	// AdminStateUp; nil means up.
	AdminStateUp *bool
	// MACAddress; empty lets Neutron generate one.
	MACAddress string
	// VNICType: normal, direct, macvtap, baremetal, ...
	VNICType string
	// AllowedAddressPairs the port may also send from.
	AllowedAddressPairs []AddressPair
	// HostID is the binding host (admin only).
	HostID string
	// OVSHWOffload and TrustedVF set the binding profile.
	OVSHWOffload bool
	TrustedVF    bool
	// ValueSpecs are extra keys sent as is in the port create request.
	ValueSpecs map[string]string
}

// FixedIP asks for an address: from a subnet, a specific one, or both.
type FixedIP struct {
	Subnet    Ref
	IPAddress string
}

// AddressPair is an allowed address pair (IP or CIDR, optional MAC).
type AddressPair struct {
	IPAddress  string
	MACAddress string
}

// RootVolume is the boot volume.
type RootVolume struct {
	SizeGiB int
	// Type is the Cinder volume type; empty for the cloud's default.
	Type string
	// AvailabilityZone of the volume. Empty lets Nova create it with the
	// server; set, the volume is created through Cinder first (block
	// device mappings cannot say where a volume goes).
	AvailabilityZone string
}

// Volume is an additional disk: a Cinder volume named <server>-<Name>, or
// with Local an ephemeral disk on the hypervisor.
type Volume struct {
	// Name of the device, unique within the server; "root" is reserved.
	Name    string
	SizeGiB int
	Local   bool
	// Type and AvailabilityZone are as in RootVolume; Cinder volumes only.
	Type             string
	AvailabilityZone string
}

// specError is one invalid field of a Spec.
func specError(field, format string, args ...any) *Error {
	return &Error{Reason: ReasonInvalidSpec, Field: field, Message: fmt.Sprintf(format, args...)}
}

// maxName is Nova's and Neutron's limit on names.
const maxName = 255

// Validate checks what the cloud would refuse, or what would make names
// collide, without calling it. Every problem is reported; errors.As finds
// the first *Error.
func (s *Spec) Validate() error {
	var p problems
	s.checkRefs(&p)
	s.checkPorts(&p)
	s.checkVolumes(&p)
	s.checkMaps(&p)
	out := make([]error, len(p))
	for i, e := range p {
		out[i] = e
	}
	return errors.Join(out...)
}

// problems collects what Validate finds; a nil *Error is no problem.
type problems []*Error

func (p *problems) add(errs ...*Error) {
	for _, e := range errs {
		if e != nil {
			*p = append(*p, e)
		}
	}
}

// checkRefs checks the name, the references and the tags.
func (s *Spec) checkRefs(p *problems) {
	if s.Name == "" {
		p.add(specError("Name", "is required"))
	} else if len(s.Name) > maxName {
		p.add(specError("Name", "is longer than %d characters", maxName))
	}
	p.add(checkRef("Image", s.Image, true))
	p.add(checkRef("Flavor", s.Flavor, false))
	if !s.ServerGroup.IsZero() {
		p.add(checkRef("ServerGroup", s.ServerGroup, false))
	}
	for i, sg := range s.SecurityGroups {
		p.add(checkRef(fmt.Sprintf("SecurityGroups[%d]", i), sg, true))
	}
	for i, t := range s.Tags {
		p.add(checkTag(fmt.Sprintf("Tags[%d]", i), t))
	}
}

// checkPorts checks every port, and that no two get one name (they would
// adopt each other).
func (s *Spec) checkPorts(p *problems) {
	if len(s.Ports) == 0 {
		p.add(specError("Ports", "needs at least one port"))
	}
	names := map[string]int{}
	for i, port := range s.Ports {
		path := fmt.Sprintf("Ports[%d]", i)
		name := server.PortName(s.Name, i, infrav1.PortOpts{NameSuffix: ptr.To(port.NameSuffix)})
		if j, dup := names[name]; dup {
			p.add(specError(path+".NameSuffix", "gives the port the name %q of Ports[%d]", name, j))
		}
		names[name] = i
		if len(name) > maxName {
			p.add(specError(path+".NameSuffix", "makes the port name longer than %d characters", maxName))
		}
		p.add(checkPort(path, port)...)
	}
}

// checkVolumes checks the root volume and the additional volumes.
func (s *Spec) checkVolumes(p *problems) {
	if rv := s.RootVolume; rv != nil {
		if rv.SizeGiB < 1 || rv.SizeGiB > math.MaxInt32 {
			p.add(specError("RootVolume.SizeGiB", "must be at least 1"))
		}
		p.add(checkAZ("RootVolume.AvailabilityZone", rv.AvailabilityZone))
	}
	seen := map[string]bool{}
	for i, v := range s.Volumes {
		path := fmt.Sprintf("Volumes[%d]", i)
		switch {
		case v.Name == "":
			p.add(specError(path+".Name", "is required"))
		case v.Name == "root":
			p.add(specError(path+".Name", "root is reserved for the root volume"))
		case seen[v.Name]:
			p.add(specError(path+".Name", "%q is used by another volume", v.Name))
		}
		seen[v.Name] = true
		if v.SizeGiB < 1 || v.SizeGiB > math.MaxInt32 {
			p.add(specError(path+".SizeGiB", "must be at least 1"))
		}
		if v.Local && (v.Type != "" || v.AvailabilityZone != "") {
			p.add(specError(path, "a Local disk takes no Type or AvailabilityZone"))
		}
		p.add(checkAZ(path+".AvailabilityZone", v.AvailabilityZone))
	}
}

// checkMaps checks the metadata and the scheduler hints, in key order.
func (s *Spec) checkMaps(p *problems) {
	for _, k := range sortedKeys(s.Metadata) {
		if k == "" || len(k) > maxName {
			p.add(specError("Metadata", "keys must have 1 to %d characters", maxName))
		} else if v := s.Metadata[k]; v == "" || len(v) > maxName {
			p.add(specError(fmt.Sprintf("Metadata[%s]", k), "must have 1 to %d characters", maxName))
		}
	}
	for _, k := range sortedKeys(s.SchedulerHints) {
		if k == "" {
			p.add(specError("SchedulerHints", "keys must not be empty"))
		} else if _, ok := hintValue(s.SchedulerHints[k]); !ok {
			p.add(specError(fmt.Sprintf("SchedulerHints[%s]", k), "must be a bool, a string or a 32-bit integer, not %T", s.SchedulerHints[k]))
		}
	}
}

func checkPort(path string, p Port) []*Error {
	var errs []*Error
	if p.Network.IsZero() {
		errs = append(errs, specError(path+".Network", "is required: an ID, or a Name and/or Tags"))
	} else if e := checkRef(path+".Network", p.Network, true); e != nil {
		errs = append(errs, e)
	}
	for j, f := range p.FixedIPs {
		fp := fmt.Sprintf("%s.FixedIPs[%d]", path, j)
		if f.Subnet.IsZero() && f.IPAddress == "" {
			errs = append(errs, specError(fp, "needs a Subnet or an IPAddress"))
		}
		if !f.Subnet.IsZero() {
			if e := checkRef(fp+".Subnet", f.Subnet, true); e != nil {
				errs = append(errs, e)
			}
		}
	}
	for j, sg := range p.SecurityGroups {
		if e := checkRef(fmt.Sprintf("%s.SecurityGroups[%d]", path, j), sg, true); e != nil {
			errs = append(errs, e)
		}
	}
	// Neutron refuses security groups on a port without port security.
	if !ptr.Deref(p.EnablePortSecurity, true) && len(p.SecurityGroups) > 0 {
		errs = append(errs, specError(path+".SecurityGroups", "must be empty when EnablePortSecurity is false"))
	}
	for j, t := range p.Tags {
		if e := checkTag(fmt.Sprintf("%s.Tags[%d]", path, j), t); e != nil {
			errs = append(errs, e)
		}
	}
	for j, ap := range p.AllowedAddressPairs {
		if ap.IPAddress == "" {
			errs = append(errs, specError(fmt.Sprintf("%s.AllowedAddressPairs[%d].IPAddress", path, j), "is required"))
		}
	}
	for k := range p.ValueSpecs {
		if k == "" {
			errs = append(errs, specError(path+".ValueSpecs", "keys must not be empty"))
		}
	}
	return errs
}

// checkRef checks that a reference is an ID or a query, not both.
func checkRef(path string, r Ref, byTags bool) *Error {
	switch {
	case r.IsZero():
		return specError(path, "is required: an ID, or a Name")
	case r.ID != "" && (r.Name != "" || len(r.Tags) > 0):
		return specError(path, "set ID, or Name/Tags, not both")
	case !byTags && len(r.Tags) > 0:
		return specError(path+".Tags", "are not supported here; use ID or Name")
	}
	for i, t := range r.Tags {
		if e := checkTag(fmt.Sprintf("%s.Tags[%d]", path, i), t); e != nil {
			return e
		}
	}
	return nil
}

func checkTag(path, t string) *Error {
	if t == "" || strings.Contains(t, ",") {
		return specError(path, "%q is not a valid tag: tags are not empty and have no commas", t)
	}
	return nil
}

func checkAZ(path, az string) *Error {
	if strings.Contains(az, " ") {
		return specError(path, "%q: zone names have no spaces", az)
	}
	return nil
}

// hintValue types a scheduler hint the way the server package sends it.
func hintValue(v any) (infrav1.SchedulerHintAdditionalValue, bool) {
	switch x := v.(type) {
	case bool:
		return infrav1.SchedulerHintAdditionalValue{Type: infrav1.SchedulerHintTypeBool, Bool: ptr.To(x)}, true
	case string:
		return infrav1.SchedulerHintAdditionalValue{Type: infrav1.SchedulerHintTypeString, String: ptr.To(x)}, true
	case int:
		return int32Hint(int64(x))
	case int32:
		return int32Hint(int64(x))
	case int64:
		return int32Hint(x)
	}
	return infrav1.SchedulerHintAdditionalValue{}, false
}

func int32Hint(n int64) (infrav1.SchedulerHintAdditionalValue, bool) {
	if n < math.MinInt32 || n > math.MaxInt32 {
		return infrav1.SchedulerHintAdditionalValue{}, false
	}
	return infrav1.SchedulerHintAdditionalValue{Type: infrav1.SchedulerHintTypeNumber, Number: ptr.To(int32(n))}, true
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// request converts a Spec into what the server package takes. It does not
// validate: Create validates first, and Delete must work from whatever
// spec it is given (a spec Create refused made nothing to delete). Maps
// become sorted lists, so equal specs give equal requests.
func (s *Spec) request() server.Request {
	out := &infrav1alpha1.OpenStackServerSpec{
		Image:       imageParam(s.Image),
		SSHKeyName:  s.SSHKeyName,
		Tags:        slices.Clone(s.Tags),
		Trunk:       ptr.To(s.Trunk),
		ConfigDrive: optBool(s.ConfigDrive),
	}
	if s.Flavor.ID != "" {
		out.FlavorID = ptr.To(s.Flavor.ID)
	} else if s.Flavor.Name != "" {
		out.Flavor = ptr.To(s.Flavor.Name)
	}
	if s.AvailabilityZone != "" {
		out.AvailabilityZone = ptr.To(s.AvailabilityZone)
	}
	if !s.ServerGroup.IsZero() {
		out.ServerGroup = &infrav1.ServerGroupParam{}
		if s.ServerGroup.ID != "" {
			out.ServerGroup.ID = ptr.To(s.ServerGroup.ID)
		} else {
			out.ServerGroup.Filter = &infrav1.ServerGroupFilter{Name: ptr.To(s.ServerGroup.Name)}
		}
	}
	for _, sg := range s.SecurityGroups {
		out.SecurityGroups = append(out.SecurityGroups, securityGroupParam(sg))
	}
	for _, p := range s.Ports {
		out.Ports = append(out.Ports, portOpts(p))
	}
	for _, k := range sortedKeys(s.Metadata) {
		out.ServerMetadata = append(out.ServerMetadata, infrav1.ServerMetadata{Key: k, Value: s.Metadata[k]})
	}
	for _, k := range sortedKeys(s.SchedulerHints) {
		if v, ok := hintValue(s.SchedulerHints[k]); ok {
			out.SchedulerHintAdditionalProperties = append(out.SchedulerHintAdditionalProperties,
				infrav1.SchedulerHintAdditionalProperty{Name: k, Value: v})
		}
	}
	if rv := s.RootVolume; rv != nil {
		out.RootVolume = &infrav1.RootVolume{SizeGiB: int32(rv.SizeGiB), BlockDeviceVolume: blockDeviceVolume(rv.Type, rv.AvailabilityZone)}
	}
	for _, v := range s.Volumes {
		bd := infrav1.AdditionalBlockDevice{Name: v.Name, SizeGiB: int32(v.SizeGiB),
			Storage: infrav1.BlockDeviceStorage{Type: infrav1.VolumeBlockDevice}}
		if v.Local {
			bd.Storage.Type = infrav1.LocalBlockDevice
		} else {
			bd.Storage.Volume = ptr.To(blockDeviceVolume(v.Type, v.AvailabilityZone))
		}
		out.AdditionalBlockDevices = append(out.AdditionalBlockDevices, bd)
	}
	return server.Request{Name: s.Name, Spec: out, UserData: s.UserData, MachineAZ: s.AvailabilityZone}
}

func optBool(b bool) *bool {
	if !b {
		return nil
	}
	return ptr.To(true)
}

func optString(s string) *string {
	if s == "" {
		return nil
	}
	return ptr.To(s)
}

func neutronTags(tags []string) []infrav1.NeutronTag {
	if len(tags) == 0 {
		return nil
	}
	out := make([]infrav1.NeutronTag, len(tags))
	for i, t := range tags {
		out[i] = infrav1.NeutronTag(t)
	}
	return out
}

func imageParam(r Ref) infrav1.ImageParam {
	if r.ID != "" {
		return infrav1.ImageParam{ID: ptr.To(r.ID)}
	}
	if r.IsZero() {
		return infrav1.ImageParam{}
	}
	return infrav1.ImageParam{Filter: &infrav1.ImageFilter{Name: optString(r.Name), Tags: slices.Clone(r.Tags)}}
}

func networkParam(r Ref) *infrav1.NetworkParam {
	switch {
	case r.IsZero():
		return nil
	case r.ID != "":
		return &infrav1.NetworkParam{ID: ptr.To(r.ID)}
	}
	return &infrav1.NetworkParam{Filter: &infrav1.NetworkFilter{Name: r.Name,
		FilterByNeutronTags: infrav1.FilterByNeutronTags{Tags: neutronTags(r.Tags)}}}
}

func subnetParam(r Ref) *infrav1.SubnetParam {
	switch {
	case r.IsZero():
		return nil
	case r.ID != "":
		return &infrav1.SubnetParam{ID: ptr.To(r.ID)}
	}
	return &infrav1.SubnetParam{Filter: &infrav1.SubnetFilter{Name: r.Name,
		FilterByNeutronTags: infrav1.FilterByNeutronTags{Tags: neutronTags(r.Tags)}}}
}

func securityGroupParam(r Ref) infrav1.SecurityGroupParam {
	if r.ID != "" {
		return infrav1.SecurityGroupParam{ID: ptr.To(r.ID)}
	}
	return infrav1.SecurityGroupParam{Filter: &infrav1.SecurityGroupFilter{Name: r.Name,
		FilterByNeutronTags: infrav1.FilterByNeutronTags{Tags: neutronTags(r.Tags)}}}
}

func portOpts(p Port) infrav1.PortOpts {
	out := infrav1.PortOpts{
		Network:     networkParam(p.Network),
		Description: optString(p.Description),
		NameSuffix:  optString(p.NameSuffix),
		Tags:        neutronTags(p.Tags),
		Trunk:       p.Trunk,
		ResolvedPortSpecFields: infrav1.ResolvedPortSpecFields{
			AdminStateUp:       p.AdminStateUp,
			MACAddress:         optString(p.MACAddress),
			VNICType:           optString(p.VNICType),
			EnablePortSecurity: p.EnablePortSecurity,
			HostID:             optString(p.HostID),
		},
	}
	for _, f := range p.FixedIPs {
		out.FixedIPs = append(out.FixedIPs, infrav1.FixedIP{Subnet: subnetParam(f.Subnet), IPAddress: optString(f.IPAddress)})
	}
	for _, sg := range p.SecurityGroups {
		out.SecurityGroups = append(out.SecurityGroups, securityGroupParam(sg))
	}
	for _, ap := range p.AllowedAddressPairs {
		out.AllowedAddressPairs = append(out.AllowedAddressPairs, infrav1.AddressPair{IPAddress: ap.IPAddress, MACAddress: optString(ap.MACAddress)})
	}
	if p.OVSHWOffload || p.TrustedVF {
		out.Profile = &infrav1.BindingProfile{OVSHWOffload: optBool(p.OVSHWOffload), TrustedVF: optBool(p.TrustedVF)}
	}
	for _, k := range sortedKeys(p.ValueSpecs) {
		out.ValueSpecs = append(out.ValueSpecs, infrav1.ValueSpec{Name: k, Key: k, Value: p.ValueSpecs[k]})
	}
	return out
}

func blockDeviceVolume(typ, az string) infrav1.BlockDeviceVolume {
	v := infrav1.BlockDeviceVolume{Type: typ}
	if az != "" {
		name := infrav1.VolumeAZName(az)
		v.AvailabilityZone = &infrav1.VolumeAvailabilityZone{From: infrav1.VolumeAZFromName, Name: &name}
	}
	return v
}
