package mapi2capi

import (
	"maps"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	mapiv1alpha1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1alpha1"
)

// uuidRE is the "uuid" string format of OpenAPI, which the template's CRD
// enforces on every OpenStack ID.
var uuidRE = regexp.MustCompile(`(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$`)

// Limits of the template's CRD that MAPI does not have.
const (
	maxServerMetadataLength = 255
	// The binding profile keys MAPO understands.
	profileCapabilities = "capabilities"
	profileTrusted      = "trusted"
)

// convertOpenStack converts an OpenstackProviderSpec into an
// OpenStackMachineTemplate, field by field as MAPO (machine-api-provider-
// openstack, pkg/machine/convert.go) turns it into a server.
func convertOpenStack(raw []byte, mapiNS string, infra Infra, r *report) *provider {
	var ps mapiv1alpha1.OpenstackProviderSpec
	if !decodeProviderSpec(raw, &ps, r.providerSpec(), r) {
		return nil
	}
	p := r.providerSpec()
	if !reflect.DeepEqual(ps.ObjectMeta, metav1.ObjectMeta{}) {
		r.warn(p.Child("metadata"), "ignored by MAPO; not converted")
	}

	spec := infrav1.OpenStackMachineSpec{
		SSHKeyName:  ps.KeyName,
		Trunk:       ps.Trunk,
		ConfigDrive: CopyPtr(ps.ConfigDrive),
		IdentityRef: convertIdentity(&ps, mapiNS, infra.Namespace, r),
	}
	if ps.Flavor == "" {
		r.fail(field.Required(p.Child("flavor"), "a flavor name is required"))
	} else {
		spec.Flavor = infrav1.FlavorParam{Filter: &infrav1.FlavorFilter{Name: ptr.To(ps.Flavor)}}
	}
	if image := convertImage(&ps, r); image != "" {
		spec.Image = infrav1.ImageParam{Filter: &infrav1.ImageFilter{Name: ptr.To(image)}}
	}
	if ps.SSHUserName != "" {
		r.warn(p.Child("sshUserName"), "ignored by MAPO; not converted")
	}
	if ps.FloatingIP != "" {
		r.fail(field.Forbidden(p.Child("floatingIP"),
			"MAPO attaches this floating IP to the machine, but an OpenStackMachine cannot be given a floating IP; remove it and attach the address another way"))
	}
	if ps.PrimarySubnet != "" {
		r.warn(p.Child("primarySubnet"), "ignored by MAPO; not converted")
	}

	// MAPO makes the ports of networks first, then the explicit ports: the
	// first port carries the machine's primary address.
	spec.Ports = append(convertNetworks(ps.Networks, infra, r), convertPorts(ps.Ports, infra, r)...)
	spec.SecurityGroups = convertSecurityGroups(ps.SecurityGroups, p.Child("securityGroups"), r)
	spec.Tags = dedupe(ps.Tags)
	spec.ServerMetadata = convertServerMetadata(ps.ServerMetadata, p.Child("serverMetadata"), r)
	spec.RootVolume = convertRootVolume(ps.RootVolume, ps.AvailabilityZone, p.Child("rootVolume"), r)
	spec.AdditionalBlockDevices = convertBlockDevices(ps.AdditionalBlockDevices, ps.AvailabilityZone, p.Child("additionalBlockDevices"), r)
	spec.ServerGroup = convertServerGroup(&ps, r)

	tmpl := &infrav1.OpenStackMachineTemplate{
		TypeMeta: metav1.TypeMeta{APIVersion: infrav1.GroupVersion.String(), Kind: OpenStackMachineTemplateKind},
		Spec:     infrav1.OpenStackMachineTemplateSpec{Template: infrav1.OpenStackMachineTemplateResource{Spec: spec}},
	}
	return &provider{
		template: tmpl,
		spec:     tmpl.Spec,
		kind:     OpenStackMachineTemplateKind,
		machine: &infrav1.OpenStackMachine{
			TypeMeta: metav1.TypeMeta{APIVersion: infrav1.GroupVersion.String(), Kind: OpenStackMachineKind},
			Spec:     *spec.DeepCopy(),
		},
		machineKind:    OpenStackMachineKind,
		failureDomain:  ps.AvailabilityZone,
		dataSecretName: userDataSecretName(ps.UserDataSecret, p.Child("userDataSecret"), mapiNS, infra.Namespace, r),
	}
}

// convertIdentity maps cloudsSecret and cloudName to an identityRef. The
// Secret is looked up in the template's namespace, not the MAPI one.
func convertIdentity(ps *mapiv1alpha1.OpenstackProviderSpec, mapiNS, capiNS string, r *report) *infrav1.OpenStackIdentityReference {
	p := r.providerSpec()
	if ps.CloudsSecret == nil || ps.CloudsSecret.Name == "" {
		r.warn(p.Child("cloudsSecret"), "not set: the machines use the OpenStackCluster's identityRef")
		if ps.CloudName != "" {
			r.warn(p.Child("cloudName"), "ignored without cloudsSecret")
		}
		return nil
	}
	if ps.CloudName == "" {
		r.fail(field.Required(p.Child("cloudName"), "MAPO requires cloudName with cloudsSecret"))
		return nil
	}
	if ns := ps.CloudsSecret.Namespace; ns != "" && ns != mapiNS {
		r.warn(p.Child("cloudsSecret", "namespace"), "the identityRef names Secret %q in namespace %q, not in %q", ps.CloudsSecret.Name, capiNS, ns)
	}
	return &infrav1.OpenStackIdentityReference{Type: infrav1.IdentityRefTypeSecret, Name: ps.CloudsSecret.Name, CloudName: ps.CloudName}
}

// convertImage returns the image name. MAPO boots a root volume from the
// image named by rootVolume.sourceUUID (the installer leaves image empty
// then) and ignores image.
func convertImage(ps *mapiv1alpha1.OpenstackProviderSpec, r *report) string {
	p := r.providerSpec()
	if rv := ps.RootVolume; rv != nil {
		switch {
		case rv.SourceUUID != "" && ps.Image != "" && ps.Image != rv.SourceUUID:
			r.warn(p.Child("image"), "ignored by MAPO when rootVolume is set; the image is rootVolume.sourceUUID (%q)", rv.SourceUUID)
			return rv.SourceUUID
		case rv.SourceUUID != "":
			return rv.SourceUUID
		case ps.Image != "":
			r.warn(p.Child("rootVolume", "sourceUUID"), "empty, so image (%q) is used; MAPO would use no image", ps.Image)
			return ps.Image
		}
		r.fail(field.Required(p.Child("rootVolume", "sourceUUID"), "the image name of the root volume is required"))
		return ""
	}
	if ps.Image == "" {
		r.fail(field.Required(p.Child("image"), "an image name is required"))
	}
	return ps.Image
}

// userDataSecretName is the bootstrap data secret: the user data Secret's
// name, looked up in the CAPI namespace. CAPI requires one.
func userDataSecretName(ref *corev1.SecretReference, p *field.Path, mapiNS, capiNS string, r *report) *string {
	if ref == nil || ref.Name == "" {
		r.fail(field.Required(p.Child("name"), "CAPI machines need bootstrap data: name the user data Secret"))
		return nil
	}
	if ref.Namespace != "" && ref.Namespace != mapiNS {
		r.warn(p.Child("namespace"), "the machines read Secret %q from namespace %q, not from %q", ref.Name, capiNS, ref.Namespace)
	}
	return ptr.To(ref.Name)
}

// convertServerMetadata turns the map into a list sorted by key.
func convertServerMetadata(in map[string]string, p *field.Path, r *report) []infrav1.ServerMetadata {
	if len(in) == 0 {
		return nil
	}
	out := make([]infrav1.ServerMetadata, 0, len(in))
	for _, k := range slices.Sorted(maps.Keys(in)) {
		v := in[k]
		switch {
		case k == "" || len(k) > maxServerMetadataLength:
			r.fail(field.Invalid(p.Key(k), k, "a key must have 1 to 255 characters"))
		case v == "" || len(v) > maxServerMetadataLength:
			r.fail(field.Invalid(p.Key(k), v, "a value must have 1 to 255 characters"))
		default:
			out = append(out, infrav1.ServerMetadata{Key: k, Value: v})
		}
	}
	return out
}

// convertRootVolume maps the root volume. Without a zone of its own MAPO
// makes it in the machine's zone (machineAZ, the providerSpec's
// availabilityZone), which is the template's availabilityZone.from: Machine.
func convertRootVolume(rv *mapiv1alpha1.RootVolume, machineAZ string, p *field.Path, r *report) *infrav1.RootVolume {
	if rv == nil {
		return nil
	}
	out := &infrav1.RootVolume{SizeGiB: sizeGiB(rv.Size, p.Child("diskSize"), r)}
	out.Type = rv.VolumeType
	out.AvailabilityZone = volumeAZ(rv.Zone, machineAZ, p.Child("availabilityZone"), r)
	if rv.DeprecatedDeviceType != "" {
		r.warn(p.Child("deviceType"), "ignored by MAPO; not converted")
	}
	if rv.DeprecatedSourceType != "" {
		r.warn(p.Child("sourceType"), "ignored by MAPO; not converted")
	}
	return out
}

// convertBlockDevices maps the additional block devices. A Volume device
// without a zone of its own is made in the machine's zone, as the root
// volume is.
func convertBlockDevices(in []mapiv1alpha1.AdditionalBlockDevice, machineAZ string, p *field.Path, r *report) []infrav1.AdditionalBlockDevice {
	if len(in) == 0 {
		return nil
	}
	out := make([]infrav1.AdditionalBlockDevice, 0, len(in))
	seen := map[string]bool{}
	for i, bd := range in {
		bp := p.Index(i)
		switch {
		case bd.Name == "":
			r.fail(field.Required(bp.Child("name"), "a block device needs a name"))
		case bd.Name == "root":
			r.fail(field.Invalid(bp.Child("name"), bd.Name, "the name root is reserved for the root volume"))
		case seen[bd.Name]:
			r.fail(field.Duplicate(bp.Child("name"), bd.Name))
		}
		seen[bd.Name] = true
		d := infrav1.AdditionalBlockDevice{Name: bd.Name, SizeGiB: sizeGiB(bd.SizeGiB, bp.Child("sizeGiB"), r)}
		sp := bp.Child("storage")
		switch bd.Storage.Type {
		case mapiv1alpha1.LocalBlockDevice:
			d.Storage.Type = infrav1.LocalBlockDevice
			if bd.Storage.Volume != nil {
				r.warn(sp.Child("volume"), "ignored for a Local block device")
			}
		case mapiv1alpha1.VolumeBlockDevice:
			d.Storage.Type = infrav1.VolumeBlockDevice
			v := bd.Storage.Volume
			if v == nil {
				v = &mapiv1alpha1.BlockDeviceVolume{}
			}
			vol := &infrav1.BlockDeviceVolume{Type: v.Type, AvailabilityZone: volumeAZ(v.AvailabilityZone, machineAZ, sp.Child("volume", "availabilityZone"), r)}
			if vol.Type != "" || vol.AvailabilityZone != nil {
				d.Storage.Volume = vol
			}
		default:
			r.fail(field.NotSupported(sp.Child("type"), bd.Storage.Type, []mapiv1alpha1.BlockDeviceType{mapiv1alpha1.LocalBlockDevice, mapiv1alpha1.VolumeBlockDevice}))
		}
		out = append(out, d)
	}
	return out
}

// sizeGiB checks a size the template requires to be at least 1 GiB.
func sizeGiB(n int, p *field.Path, r *report) int32 {
	if n < 1 || n > math.MaxInt32 {
		r.fail(field.Invalid(p, n, "must be at least 1 (GiB)"))
		return 0
	}
	return int32(n)
}

// volumeAZ is a volume's availability zone: its own (zone), else the
// machine's when it has one (MAPO's default), else none.
func volumeAZ(zone, machineAZ string, p *field.Path, r *report) *infrav1.VolumeAvailabilityZone {
	if zone == "" {
		if machineAZ != "" {
			return &infrav1.VolumeAvailabilityZone{From: infrav1.VolumeAZFromMachine}
		}
		return nil
	}
	if strings.ContainsRune(zone, ' ') {
		r.fail(field.Invalid(p, zone, "must not contain spaces"))
		return nil
	}
	return &infrav1.VolumeAvailabilityZone{From: infrav1.VolumeAZFromName, Name: ptr.To(infrav1.VolumeAZName(zone))}
}

// convertServerGroup: MAPO prefers the ID and looks a name up (creating the
// group when missing; CAPI only looks it up).
func convertServerGroup(ps *mapiv1alpha1.OpenstackProviderSpec, r *report) *infrav1.ServerGroupParam {
	p := r.providerSpec()
	switch {
	case ps.ServerGroupID != "":
		if ps.ServerGroupName != "" {
			r.warn(p.Child("serverGroupName"), "ignored by MAPO because serverGroupID is set")
		}
		if id, ok := checkUUID(ps.ServerGroupID, p.Child("serverGroupID"), r); ok {
			return &infrav1.ServerGroupParam{ID: id}
		}
	case ps.ServerGroupName != "":
		return &infrav1.ServerGroupParam{Filter: &infrav1.ServerGroupFilter{Name: ptr.To(ps.ServerGroupName)}}
	}
	return nil
}

// convertSecurityGroups maps security groups as MAPO does: uuid, else
// filter.id, select by ID; otherwise a filter in which name overrides
// filter.name and tenantId stands in for projectId.
func convertSecurityGroups(in []mapiv1alpha1.SecurityGroupParam, p *field.Path, r *report) []infrav1.SecurityGroupParam {
	if len(in) == 0 {
		return nil
	}
	out := make([]infrav1.SecurityGroupParam, 0, len(in))
	for i, sg := range in {
		sp := p.Index(i)
		f := sg.Filter
		if f.DeprecatedLimit != 0 || f.DeprecatedMarker != "" || f.DeprecatedSortKey != "" || f.DeprecatedSortDir != "" {
			r.warn(sp.Child("filter"), "limit, marker, sortKey and sortDir are ignored by MAPO; not converted")
		}
		filter := infrav1.SecurityGroupFilter{
			Name:                cmpOr(sg.Name, f.Name),
			Description:         f.Description,
			ProjectID:           cmpOr(f.ProjectID, f.TenantID),
			FilterByNeutronTags: tagFilter(f.Tags, f.TagsAny, f.NotTags, f.NotTagsAny),
		}
		if id := cmpOr(sg.UUID, f.ID); id != "" {
			idPath := sp.Child("uuid")
			if sg.UUID == "" {
				idPath = sp.Child("filter", "id")
			}
			if !reflect.DeepEqual(filter, infrav1.SecurityGroupFilter{}) {
				r.warn(sp, "selected by ID; the name and filter, which MAPO also matches, are not converted")
			}
			if id, ok := checkUUID(id, idPath, r); ok {
				out = append(out, infrav1.SecurityGroupParam{ID: id})
			}
			continue
		}
		if reflect.DeepEqual(filter, infrav1.SecurityGroupFilter{}) {
			r.fail(field.Required(sp, "selects no security group: set uuid, name or a filter"))
			continue
		}
		out = append(out, infrav1.SecurityGroupParam{Filter: &filter})
	}
	return out
}

// checkUUID fails on an ID that the template's CRD would refuse.
func checkUUID(id string, p *field.Path, r *report) (*string, bool) {
	if !uuidRE.MatchString(id) {
		r.fail(field.Invalid(p, id, "must be a UUID"))
		return nil, false
	}
	return ptr.To(id), true
}

// tagFilter splits MAPO's comma-separated tag lists.
func tagFilter(tags, tagsAny, notTags, notTagsAny string) infrav1.FilterByNeutronTags {
	return infrav1.FilterByNeutronTags{
		Tags: splitTags(tags), TagsAny: splitTags(tagsAny), NotTags: splitTags(notTags), NotTagsAny: splitTags(notTagsAny),
	}
}

func splitTags(s string) []infrav1.NeutronTag {
	var out []infrav1.NeutronTag
	for _, t := range strings.Split(s, ",") {
		if t != "" && !slices.Contains(out, infrav1.NeutronTag(t)) {
			out = append(out, infrav1.NeutronTag(t))
		}
	}
	return out
}

// dedupe keeps the first of equal strings: tags are sets in OpenStack and
// in the template.
func dedupe(in []string) []string {
	var out []string
	for _, s := range in {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// CopyPtr is a pointer to a copy of *p, or nil: converted objects never
// share memory with their source. Both directions use it.
func CopyPtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
