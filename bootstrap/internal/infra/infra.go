// Package infra knows the infrastructure machines this provider works with,
// read as unstructured objects at whatever API version the cluster serves
// them: which boot mode suits them, where a Metal3Machine's (and its
// template's) image lives and how to point it at a live ISO, and which
// template a machine was cloned from. It is pure: no client, no I/O.
package infra

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	bootstrapv1 "github.com/ocp-capi/ocp-capi/api/bootstrap/v1alpha2"
)

// Group is the API group of Metal3 and OpenStack infrastructure machines.
const Group = "infrastructure.cluster.x-k8s.io"

// Kinds this provider knows by name.
const (
	Metal3MachineKind         = "Metal3Machine"
	Metal3MachineTemplateKind = "Metal3MachineTemplate"
	OpenStackMachineKind      = "OpenStackMachine"
)

// LiveISOFormat is Metal3's image format that boots an ISO from virtual
// media instead of writing it to disk.
const LiveISOFormat = "live-iso"

// Metal3HostAnnotation is set by CAPM3 on a Metal3Machine to the
// <namespace>/<name> of the BareMetalHost it claimed.
const Metal3HostAnnotation = "metal3.io/BareMetalHost"

// IsMetal3Machine tells whether gk is a Metal3Machine.
func IsMetal3Machine(gk schema.GroupKind) bool {
	return gk.Group == Group && gk.Kind == Metal3MachineKind
}

// IsOpenStackMachine tells whether gk is an OpenStackMachine.
func IsOpenStackMachine(gk schema.GroupKind) bool {
	return gk.Group == Group && gk.Kind == OpenStackMachineKind
}

// ResolveBootMode is the boot mode in effect for a config whose spec says
// requested, on the infrastructure machine obj. Unset, it follows the
// machine: a Metal3Machine with no image, or with a live-iso image, boots
// the discovery ISO (LiveISO, CAPOA's original flow); a Metal3Machine with a
// disk image (CAPOA's current raw-image flow), an OpenStackMachine and any
// other kind
// boot their own image with the discovery ignition as user data.
//
// The choice is stable: LiveISO writes a live-iso image, which resolves to
// LiveISO again; DiscoveryIgnition leaves the image alone.
func ResolveBootMode(requested bootstrapv1.BootMode, obj *unstructured.Unstructured) bootstrapv1.BootMode {
	if requested != "" {
		return requested
	}
	if IsMetal3Machine(obj.GroupVersionKind().GroupKind()) {
		url, format, _ := Metal3Image(obj)
		if url == "" || format == LiveISOFormat {
			return bootstrapv1.BootModeLiveISO
		}
	}
	return bootstrapv1.BootModeDiscoveryIgnition
}

// CheckBootMode says why mode cannot work on an infrastructure machine of
// kind gk, or returns nil.
func CheckBootMode(mode bootstrapv1.BootMode, gk schema.GroupKind) error {
	if mode == bootstrapv1.BootModeLiveISO && !IsMetal3Machine(gk) {
		return fmt.Errorf("bootMode LiveISO needs an infrastructure machine that boots an image URL (a Metal3Machine); "+
			"a %s cannot: set spec.bootMode to DiscoveryIgnition, or leave it unset", gk.Kind)
	}
	return nil
}

// imagePath is where the image is in a Metal3Machine and in a
// Metal3MachineTemplate.
func imagePath(kind string) []string {
	if kind == Metal3MachineTemplateKind {
		return []string{"spec", "template", "spec", "image"}
	}
	return []string{"spec", "image"}
}

// formatField is the image format's JSON name: format in v1beta1,
// diskFormat in v1beta2 (and later).
func formatField(apiVersion string) string {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err == nil && gv.Version == "v1beta1" {
		return "format"
	}
	return "diskFormat"
}

// Metal3Image returns the image URL and format of a Metal3Machine or
// Metal3MachineTemplate, and whether it has an image at all.
func Metal3Image(obj *unstructured.Unstructured) (url, format string, found bool) {
	image, found, err := unstructured.NestedMap(obj.Object, imagePath(obj.GetKind())...)
	if err != nil || !found {
		return "", "", false
	}
	url, _ = image["url"].(string)
	format, _ = image[formatField(obj.GetAPIVersion())].(string)
	return url, format, true
}

// SetLiveISO points a Metal3Machine's or Metal3MachineTemplate's image at
// the ISO: url and format live-iso, and nothing else (a disk image's
// checksum would not match). It reports whether obj changed.
func SetLiveISO(obj *unstructured.Unstructured, isoURL string) (bool, error) {
	path := imagePath(obj.GetKind())
	desired := map[string]any{"url": isoURL, formatField(obj.GetAPIVersion()): LiveISOFormat}
	current, found, err := unstructured.NestedMap(obj.Object, path...)
	if err != nil {
		return false, fmt.Errorf("%s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	if found && len(current) == len(desired) && current["url"] == desired["url"] &&
		current[formatField(obj.GetAPIVersion())] == LiveISOFormat {
		return false, nil
	}
	if err := unstructured.SetNestedMap(obj.Object, desired, path...); err != nil {
		return false, fmt.Errorf("%s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	return true, nil
}

// ClonedFrom is the template an infrastructure machine was cloned from
// (CAPI's cloned-from annotations), or false.
func ClonedFrom(obj *unstructured.Unstructured) (schema.GroupKind, string, bool) {
	a := obj.GetAnnotations()
	name, gkText := a[clusterv1.TemplateClonedFromNameAnnotation], a[clusterv1.TemplateClonedFromGroupKindAnnotation]
	if name == "" || gkText == "" {
		return schema.GroupKind{}, "", false
	}
	gk := schema.ParseGroupKind(gkText)
	if gk.Kind == "" || gk.Group == "" {
		return schema.GroupKind{}, "", false
	}
	return gk, name, true
}

// TrimForCache is the bootstrap manager's cache transform (manager.Cache
// Trim). Of an infrastructure machine read unstructured (a
// Metal3Machine, an OpenStackMachine) the cache keeps its identity and
// metadata and only the fields this provider reads: a Metal3Machine's image
// (Metal3Image, ResolveBootMode), and an OpenStackMachine's spec.providerID and
// status.instanceID (the host's identity). A manager that watches a
// cluster's every machine holds no more of each than that
// (docs/reliability.md, Scale). The one write to such a machine,
// the live ISO, is a merge patch of what changed, so nothing trimmed is lost.
// Any other object passes unchanged.
func TrimForCache(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	gk := u.GroupVersionKind().GroupKind()
	var keep [][]string
	switch {
	case IsMetal3Machine(gk):
		keep = [][]string{imagePath(gk.Kind)}
	case IsOpenStackMachine(gk):
		keep = [][]string{{"spec", "providerID"}, {"status", "instanceID"}}
	default:
		return obj, nil
	}
	trimmed := map[string]any{"apiVersion": u.Object["apiVersion"], "kind": u.Object["kind"]}
	if md, ok := u.Object["metadata"]; ok {
		trimmed["metadata"] = md
	}
	for _, path := range keep {
		v, found, err := unstructured.NestedFieldNoCopy(u.Object, path...)
		if err != nil || !found {
			continue
		}
		if err := unstructured.SetNestedField(trimmed, v, path...); err != nil {
			return obj, err
		}
	}
	u.Object = trimmed
	return u, nil
}
