package osbuild

import (
	"testing"

	mcfgv1 "github.com/ocp-capi/ocp-capi/internal/consumed/machineconfiguration/v1"
)

// TestRequiresRebuild: only the OS image URL, the kernel type, the
// extensions and the kernel arguments need a new image.
func TestRequiresRebuild(t *testing.T) {
	base := mcfgv1.MachineConfigSpec{
		OSImageURL: "quay.io/ocp/rhcos@sha256:1", KernelType: "default",
		Extensions: []string{"usbguard"}, KernelArguments: []string{"nosmt", "quiet"},
	}
	for _, tc := range []struct {
		name   string
		mutate func(*mcfgv1.MachineConfigSpec)
		want   bool
	}{
		{"nothing", func(*mcfgv1.MachineConfigSpec) {}, false},
		{"ignition files", func(s *mcfgv1.MachineConfigSpec) { s.Config.Raw = []byte(`{"storage":{}}`) }, false},
		{"fips", func(s *mcfgv1.MachineConfigSpec) { s.FIPS = true }, false},
		{"kernel type default to empty", func(s *mcfgv1.MachineConfigSpec) { s.KernelType = "" }, false},
		{"os image", func(s *mcfgv1.MachineConfigSpec) { s.OSImageURL = "quay.io/ocp/rhcos@sha256:2" }, true},
		{"kernel type", func(s *mcfgv1.MachineConfigSpec) { s.KernelType = "realtime" }, true},
		{"extension added", func(s *mcfgv1.MachineConfigSpec) { s.Extensions = append(s.Extensions, "kerberos") }, true},
		{"extensions removed", func(s *mcfgv1.MachineConfigSpec) { s.Extensions = nil }, true},
		{"kernel argument added", func(s *mcfgv1.MachineConfigSpec) { s.KernelArguments = append(s.KernelArguments, "x=1") }, true},
		{"kernel arguments reordered", func(s *mcfgv1.MachineConfigSpec) { s.KernelArguments = []string{"quiet", "nosmt"} }, true},
	} {
		next := base
		next.Extensions = append([]string(nil), base.Extensions...)
		next.KernelArguments = append([]string(nil), base.KernelArguments...)
		tc.mutate(&next)
		if got := RequiresRebuild(ImageFieldsOf(&base), ImageFieldsOf(&next)); got != tc.want {
			t.Errorf("%s: RequiresRebuild = %v, want %v", tc.name, got, tc.want)
		}
	}
	// Empty and absent lists are the same.
	if RequiresRebuild(ImageFields{}, ImageFields{Extensions: []string{}, KernelArguments: []string{}}) {
		t.Error("empty lists differ from absent ones")
	}
}
