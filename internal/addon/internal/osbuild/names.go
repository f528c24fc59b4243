package osbuild

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Labels and annotations on MachineConfigPools. The names of MCO-585, the
// design this controller implements, win; the upstream MCO (4.14) name is
// written alongside where it is cheap (docs/addon/build-controller.md,
// "Names: seed and upstream").
const (
	// LayeringEnabledLabel opts a pool in; its value is ignored (as upstream).
	LayeringEnabledLabel = "machineconfiguration.openshift.io/layering-enabled"
	// DesiredOSImageAnnotation is the outcome: <repo>@sha256:<digest>.
	DesiredOSImageAnnotation = "machineconfiguration.openshift.io/desired-os-image"
	// NewestImageEquivalentConfigAnnotation is upstream's name for the
	// rendered MachineConfig the newest image was built from; written
	// alongside DesiredOSImageAnnotation for tools that read upstream's.
	NewestImageEquivalentConfigAnnotation = "machineconfiguration.openshift.io/newestImageEquivalentConfig"
	// BuildIDAnnotation records the inputs (Inputs.ID) the published image
	// was built from, so that nothing is rebuilt after a restart.
	BuildIDAnnotation = "machineconfiguration.openshift.io/desired-os-image-build-id"
)

// Labels and annotations on the objects the controller creates (ConfigMaps,
// Builds or Jobs, and the Jobs' pods). They are how the controller finds its
// objects after a restart: it keeps no other record.
const (
	// ManagedByLabel with ManagedByValue marks every object the controller made.
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedByValue = "ocp-capi-build-controller"
	// PoolLabel is PoolLabelValue(pool) (upstream's label name).
	PoolLabel = "machineconfiguration.openshift.io/targetMachineConfigPool"
	// BuildIDLabel is the Inputs.ID the object belongs to.
	BuildIDLabel = "machineconfiguration.openshift.io/build-id"
	// RoleLabel says what the object is: RoleInputs or RoleBuild.
	RoleLabel  = "machineconfiguration.openshift.io/build-object"
	RoleInputs = "inputs"
	RoleBuild  = "build"

	// PoolAnnotation is the pool's full name (upstream's annotation), as the
	// label may be a hash.
	PoolAnnotation = "machineconfiguration.openshift.io/pool"
	// DesiredConfigAnnotation is the rendered MachineConfig being built
	// (upstream had it as a label; names can exceed a label's 63 bytes).
	DesiredConfigAnnotation = "machineconfiguration.openshift.io/desiredConfig"
	// FailureReasonAnnotation is set by the controller on a build it stopped
	// (Timeout), so the reason survives a restart.
	FailureReasonAnnotation = "machineconfiguration.openshift.io/build-failure-reason"
)

// Name limits. Job names end up in a label (batch.kubernetes.io/job-name), so
// every name stays within a label value's 63 bytes.
const (
	idLength      = 16
	maxPoolInName = 40 // "build-" + 40 + "-" + 16 = 63
)

// PoolLabelValue is the value of PoolLabel for a pool: its name when that is
// a valid label value, else a hash of it (pool names may be 253 bytes).
func PoolLabelValue(pool string) string {
	if len(validation.IsValidLabelValue(pool)) == 0 {
		return pool
	}
	return "pool-" + hash(pool)[:32]
}

// Names are the deterministic names of one build's objects.
type Names struct {
	// Stem is <pool, truncated>-<id>.
	Stem string
	// Build names the Build or Job: build-<stem>.
	Build string
	// Inputs names the ConfigMap with the Containerfile and the compressed
	// rendered MachineConfig: mc-<stem>.
	Inputs string
}

// NamesFor returns the names of the build with the given id for pool.
func NamesFor(pool, id string) Names {
	p := pool
	if len(p) > maxPoolInName {
		p = p[:maxPoolInName]
	}
	// A name segment must start and end alphanumeric; dots are allowed in
	// pool names but not wanted next to our dashes.
	p = strings.Trim(strings.ReplaceAll(p, ".", "-"), "-")
	stem := id
	if p != "" {
		stem = p + "-" + id
	}
	return Names{Stem: stem, Build: "build-" + stem, Inputs: "mc-" + stem}
}

func hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
