package osbuild

import (
	"slices"

	mcfgv1 "github.com/ocp-capi/ocp-capi/internal/consumed/machineconfiguration/v1"
)

// ImageFields are the parts of a rendered MachineConfig that are baked into
// the layered OS image. A change to any of them needs a new image; a change
// to anything else (Ignition files, units, users, FIPS) reuses the last
// image, and the machine-config daemon applies it on the node's disk. This
// is the rule of the MCO's RequiresRebuild (4.20 and later): OS image URL,
// kernel type, extensions and kernel arguments.
type ImageFields struct {
	OSImageURL      string   `json:"osImageURL,omitempty"`
	KernelType      string   `json:"kernelType,omitempty"`
	Extensions      []string `json:"extensions,omitempty"`
	KernelArguments []string `json:"kernelArguments,omitempty"`
}

// ImageFieldsOf returns the image fields of a MachineConfig's spec. A
// kernel type of "" and "default" are the same kernel.
func ImageFieldsOf(spec *mcfgv1.MachineConfigSpec) ImageFields {
	kt := spec.KernelType
	if kt == "default" {
		kt = ""
	}
	return ImageFields{
		OSImageURL:      spec.OSImageURL,
		KernelType:      kt,
		Extensions:      slices.Clone(spec.Extensions),
		KernelArguments: slices.Clone(spec.KernelArguments),
	}
}

// RequiresRebuild reports whether moving from the rendered config old to
// new needs a new image: whether an image field differs. Order matters in
// extensions and kernel arguments (upstream compares them as lists), and an
// empty list equals an absent one.
func RequiresRebuild(old, new ImageFields) bool {
	return old.OSImageURL != new.OSImageURL ||
		old.KernelType != new.KernelType ||
		!slices.Equal(old.Extensions, new.Extensions) ||
		!slices.Equal(old.KernelArguments, new.KernelArguments)
}
