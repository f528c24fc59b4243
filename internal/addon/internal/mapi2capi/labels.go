package mapi2capi

import (
	"maps"
	"slices"
	"strconv"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// MAPI labels and annotations the conversion translates or drops, as
// upstream's conversion does.
const (
	// MAPIMachineTypeLabel and MAPIMachineRoleLabel become
	// node-role.kubernetes.io/<value>: "".
	MAPIMachineTypeLabel = "machine.openshift.io/cluster-api-machine-type"
	MAPIMachineRoleLabel = "machine.openshift.io/cluster-api-machine-role"
	// The provider sets these on each Machine from the server it made; on a
	// MachineSet they are stale copies, so they are dropped.
	MAPIInstanceTypeLabel = "machine.openshift.io/instance-type"
	MAPIRegionLabel       = "machine.openshift.io/region"
	MAPIZoneLabel         = "machine.openshift.io/zone"

	// MAPIDeleteMachineAnnotation becomes CAPI's delete-machine annotation.
	MAPIDeleteMachineAnnotation = "machine.openshift.io/delete-machine"
	// MAPIInstanceStateAnnotation is provider status; it is dropped.
	MAPIInstanceStateAnnotation = "machine.openshift.io/instance-state"
	// LastAppliedAnnotation is kubectl's record of the MAPI object; copied
	// onto the CAPI object it would mislead kubectl, so it is dropped.
	LastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"
)

// convertLabels translates MAPI labels (at p) into CAPI labels.
func convertLabels(in map[string]string, p *field.Path, r *report) map[string]string {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string]string, len(in))
	for _, k := range slices.Sorted(maps.Keys(in)) {
		v := in[k]
		switch k {
		case MAPIMachineTypeLabel, MAPIMachineRoleLabel:
			key := clusterv1.NodeRoleLabelPrefix + "/" + v
			if errs := validation.IsQualifiedName(key); len(errs) > 0 {
				r.fail(field.Invalid(p.Key(k), v, "becomes the label "+key+", which is not a valid label key"))
				continue
			}
			out[key] = ""
		case MAPIInstanceTypeLabel, MAPIRegionLabel, MAPIZoneLabel:
			r.warn(p.Key(k), "dropped: the provider sets it on each Machine from its server")
		default:
			out[k] = v
		}
	}
	return out
}

// convertAnnotations translates MAPI annotations (at p) into CAPI ones.
func convertAnnotations(in map[string]string, p *field.Path, r *report) map[string]string {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string]string, len(in))
	for _, k := range slices.Sorted(maps.Keys(in)) {
		switch k {
		case MAPIDeleteMachineAnnotation:
			out[clusterv1.DeleteMachineAnnotation] = in[k]
		case MAPIInstanceStateAnnotation:
			r.warn(p.Key(k), "dropped: it is provider status, not configuration")
		case LastAppliedAnnotation:
			// kubectl bookkeeping of the MAPI object, not configuration.
		default:
			out[k] = in[k]
		}
	}
	return out
}

// convertSelectorLabels translates the matchLabels of a selector. It is
// silent: the labels it drops are reported where they are set.
func convertSelectorLabels(in map[string]string) map[string]string {
	discard := &report{}
	return convertLabels(in, field.NewPath(""), discard)
}

// mergeInto adds add (set at p) to dst, failing on a key set to two values.
func mergeInto(dst map[string]string, add map[string]string, p *field.Path, r *report) map[string]string {
	if len(add) == 0 {
		return dst
	}
	if dst == nil {
		dst = make(map[string]string, len(add))
	}
	for _, k := range slices.Sorted(maps.Keys(add)) {
		if old, ok := dst[k]; ok && old != add[k] {
			r.fail(field.Invalid(p.Key(k), add[k], "conflicts with the value "+strconv.Quote(old)+" that the template's metadata gives the same key"))
			continue
		}
		dst[k] = add[k]
	}
	return dst
}
