package osbuild

import (
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	mcfgv1 "github.com/ocp-capi/ocp-capi/internal/consumed/machineconfiguration/v1"
)

// The MachineOSConfig flow (machineconfiguration.openshift.io/v1, OpenShift
// 4.19): a MachineOSConfig named after its pool says how to build the pool's
// image, and each build is a MachineOSBuild whose status shows its state as
// upstream's MCO writes it. The build engine is the same as for the
// layering-enabled label; docs/addon/build-controller.md, "MachineOSConfig
// and MachineOSBuild".

// Upstream's labels and annotations of MachineOSBuilds and MachineOSConfigs.
const (
	// MachineOSConfigLabel names the MachineOSConfig of a MachineOSBuild.
	MachineOSConfigLabel = "machineconfiguration.openshift.io/machine-os-config"
	// TargetPoolLabel names the pool of a MachineOSBuild.
	TargetPoolLabel = "machineconfiguration.openshift.io/target-machine-config-pool"
	// RenderedConfigLabel names the rendered MachineConfig a MachineOSBuild
	// builds.
	RenderedConfigLabel = "machineconfiguration.openshift.io/rendered-machine-config"
	// RenderedImagePushSecretAnnotation on a MachineOSBuild names the push
	// secret its image was pushed with.
	RenderedImagePushSecretAnnotation = "machineconfiguration.openshift.io/rendered-image-push-secret"
	// CurrentMachineOSBuildAnnotation on a MachineOSConfig names the
	// MachineOSBuild currently assigned to it (upstream's node controller
	// reads it).
	CurrentMachineOSBuildAnnotation = "machineconfiguration.openshift.io/current-machine-os-build"
)

// GlobalPullSecretCopy is the Secret upstream pulls the base image with
// when a MachineOSConfig names no baseImagePullSecret.
const GlobalPullSecretCopy = "global-pull-secret-copy"

// ImageBuilderTypeJob is the only imageBuilderType of the GA API.
const ImageBuilderTypeJob = "Job"

// Containerfile architectures.
const (
	ContainerfileNoArch = "NoArch"
	ContainerfileAMD64  = "AMD64"
)

// MachineOSConfigFor returns the MachineOSConfig that drives pool among
// list: the one whose spec.machineConfigPool.name is the pool (upstream's
// lookup), preferring the one named after it (upstream's CEL rule makes
// that the only one), then the oldest. Those being deleted do not count.
func MachineOSConfigFor(pool string, list []mcfgv1.MachineOSConfig) *mcfgv1.MachineOSConfig {
	var found *mcfgv1.MachineOSConfig
	for i := range list {
		m := &list[i]
		if m.Spec.MachineConfigPool.Name != pool || !m.DeletionTimestamp.IsZero() {
			continue
		}
		switch {
		case found == nil, m.Name == pool && found.Name != pool:
			found = m
		case (m.Name == pool) == (found.Name == pool) && m.CreationTimestamp.Before(&found.CreationTimestamp):
			found = m
		}
	}
	return found
}

// BuilderConfigOf is the builder configuration a MachineOSConfig gives: the
// push repository (its renderedImagePushSpec without tag), the push secret
// and the pull secret (upstream's global-pull-secret-copy when unset).
func BuilderConfigOf(m *mcfgv1.MachineOSConfig) (BuilderConfig, error) {
	where := fmt.Sprintf("MachineOSConfig %s", m.Name)
	cfg := BuilderConfig{
		ConfigMapName:        "",
		MachineOSConfig:      m.Name,
		BaseImagePullSecret:  GlobalPullSecretCopy,
		FinalImagePushSecret: strings.TrimSpace(m.Spec.RenderedImagePushSecret.Name),
	}
	if m.Spec.BaseImagePullSecret != nil && strings.TrimSpace(m.Spec.BaseImagePullSecret.Name) != "" {
		cfg.BaseImagePullSecret = strings.TrimSpace(m.Spec.BaseImagePullSecret.Name)
	}
	if m.Spec.ImageBuilder.ImageBuilderType != ImageBuilderTypeJob {
		return BuilderConfig{}, inputError(ReasonInvalidMachineOSConfig,
			fmt.Sprintf("%s: spec.imageBuilder.imageBuilderType %q is not %q, the only builder type.", where, m.Spec.ImageBuilder.ImageBuilderType, ImageBuilderTypeJob))
	}
	if cfg.FinalImagePushSecret == "" {
		return BuilderConfig{}, inputError(ReasonInvalidMachineOSConfig, fmt.Sprintf("%s lacks spec.renderedImagePushSecret.name.", where))
	}
	// The build Job mounts both Secrets: a name that is not one would fail
	// only there, later and less clearly.
	for _, s := range []struct{ field, name string }{
		{"spec.baseImagePullSecret.name", cfg.BaseImagePullSecret},
		{"spec.renderedImagePushSecret.name", cfg.FinalImagePushSecret},
	} {
		if errs := validation.IsDNS1123Subdomain(s.name); len(errs) > 0 {
			return BuilderConfig{}, inputError(ReasonInvalidMachineOSConfig,
				fmt.Sprintf("%s: %s %q is not a valid Secret name: %s.", where, s.field, s.name, strings.Join(errs, "; ")))
		}
	}
	repo, err := ParsePushRepository(strings.TrimSpace(m.Spec.RenderedImagePushSpec))
	if err != nil {
		return BuilderConfig{}, inputError(ReasonInvalidMachineOSConfig,
			fmt.Sprintf("%s: spec.renderedImagePushSpec %q %v.", where, m.Spec.RenderedImagePushSpec, err))
	}
	cfg.FinalRepository = repo
	return cfg, nil
}

// ContainerfileOf is the user's Containerfile for an amd64 build: the
// NoArch entry (all architectures; upstream reads only this one), then the
// AMD64 entry. Entries for other architectures do not apply.
func ContainerfileOf(m *mcfgv1.MachineOSConfig) string {
	var noArch, amd64 string
	for _, f := range m.Spec.ContainerFile {
		switch f.ContainerfileArch {
		case "", ContainerfileNoArch:
			noArch = f.Content
		case ContainerfileAMD64:
			amd64 = f.Content
		}
	}
	switch {
	case noArch == "":
		return amd64
	case amd64 == "":
		return noArch
	}
	return strings.TrimRight(noArch, "\n") + "\n" + amd64
}

// MachineOSBuildName names the MachineOSBuild of rendered config rendered,
// built (or reused) from inputs id, for MachineOSConfig mosc:
// <mosc>-<16 hex digits>, as upstream's <mosc>-<hash>. A layer-only change
// keeps id but gets a MachineOSBuild of its own, as upstream.
func MachineOSBuildName(mosc, rendered, id string) string {
	suffix := hash(rendered + "\x00" + id)[:idLength]
	p := mosc
	if len(p) > 253-1-idLength {
		p = p[:253-1-idLength]
	}
	return strings.TrimRight(p, "-.") + "-" + suffix
}

// BuildState is a MachineOSBuild's state: the condition type that is True.
type BuildState string

// MachineOSBuild states (upstream's BuildProgress); "" is upstream's initial
// state, every condition False.
const (
	BuildStatePrepared    BuildState = mcfgv1.MachineOSBuildPrepared
	BuildStateBuilding    BuildState = mcfgv1.MachineOSBuildBuilding
	BuildStateFailed      BuildState = mcfgv1.MachineOSBuildFailed
	BuildStateInterrupted BuildState = mcfgv1.MachineOSBuildInterrupted
	BuildStateSucceeded   BuildState = mcfgv1.MachineOSBuildSucceeded
)

// Terminal reports whether the API makes the conditions immutable once s is
// True.
func (s BuildState) Terminal() bool {
	return s == BuildStateFailed || s == BuildStateInterrupted || s == BuildStateSucceeded
}

// machineOSBuildConditions are upstream's five conditions in its order,
// each with its fixed reason and message (pkg/apihelpers/machineosbuild.go).
var machineOSBuildConditions = []struct{ Type, Reason, Message string }{
	{mcfgv1.MachineOSBuildPrepared, "Prepared", "Build Prepared and Pending"},
	{mcfgv1.MachineOSBuildBuilding, "Building", "Image Build In Progress"},
	{mcfgv1.MachineOSBuildFailed, "Failed", "Build Failed"},
	{mcfgv1.MachineOSBuildInterrupted, "Interrupted", "Build Interrupted"},
	{mcfgv1.MachineOSBuildSucceeded, "Ready", "Build Ready"},
}

// StateOf is the state a MachineOSBuild's conditions show ("" for none
// True).
func StateOf(status *mcfgv1.MachineOSBuildStatus) BuildState {
	for _, c := range status.Conditions {
		if c.Status == metav1.ConditionTrue {
			for _, u := range machineOSBuildConditions {
				if u.Type == c.Type {
					return BuildState(c.Type)
				}
			}
		}
	}
	return ""
}

// SetBuildState makes the conditions show s, as upstream writes them: all
// five, the one of s True; a condition whose status does not change keeps
// its lastTransitionTime. It reports whether anything changed.
func SetBuildState(status *mcfgv1.MachineOSBuildStatus, s BuildState, now metav1.Time) bool {
	changed := false
	for _, u := range machineOSBuildConditions {
		want := metav1.Condition{Type: u.Type, Status: metav1.ConditionFalse, Reason: u.Reason, Message: u.Message, LastTransitionTime: now}
		if BuildState(u.Type) == s {
			want.Status = metav1.ConditionTrue
		}
		i := -1
		for j := range status.Conditions {
			if status.Conditions[j].Type == u.Type {
				i = j
				break
			}
		}
		if i < 0 {
			status.Conditions = append(status.Conditions, want)
			changed = true
			continue
		}
		cur := status.Conditions[i]
		if cur.Status == want.Status {
			want.LastTransitionTime = cur.LastTransitionTime
		}
		want.ObservedGeneration = cur.ObservedGeneration
		if cur != want {
			status.Conditions[i] = want
			changed = true
		}
	}
	return changed
}

// StateFor maps a build object's observation to a MachineOSBuild state:
// pending is Prepared, running Building, succeeded Succeeded; a build that
// someone else cancelled is Interrupted, any other failure (the
// controller's timeout included) Failed.
func StateFor(o Observation) BuildState {
	switch o.Phase {
	case PhasePending:
		return BuildStatePrepared
	case PhaseRunning:
		return BuildStateBuilding
	case PhaseSucceeded:
		return BuildStateSucceeded
	}
	if o.Reason == ReasonCancelled {
		return BuildStateInterrupted
	}
	return BuildStateFailed
}

// BuildTimes are buildStart and buildEnd for a build whose object was
// created at start and that is in state s at now: the end is set on a
// terminal state, and is after the start, as the API requires (its times
// have a resolution of one second).
func BuildTimes(start time.Time, s BuildState, now time.Time) (*metav1.Time, *metav1.Time) {
	b := metav1.NewTime(start.Truncate(time.Second))
	if !s.Terminal() {
		return &b, nil
	}
	e := now.Truncate(time.Second)
	if !e.After(b.Time) {
		e = b.Add(time.Second)
	}
	end := metav1.NewTime(e)
	return &b, &end
}
