// Package release knows OpenShift versions without pulling release images:
// which Kubernetes version an OpenShift minor ships (a built-in table), the
// default release image pullspec of a version and architecture, and what a
// cluster-version operator update request for a version looks like. It is
// pure: no client, no I/O.
//
// The limitation is deliberate: CAPOA, the provider this one replaces, pulls
// the release image and reads its Kubernetes version, which needs registry
// access and a pull secret in the management cluster (docs/controlplane.md,
// Kubernetes versions). The table gives the Kubernetes minor only (reported
// as v1.<minor>.0, a lower bound of the patch release); spec.version
// overrides it, for the exact patch or for OpenShift versions the table does
// not know.
package release

import (
	"fmt"
	"strings"

	"github.com/blang/semver/v4"
)

// MinVersion is the oldest OpenShift version the provider installs (CAPOA's
// minimum too).
var MinVersion = semver.MustParse("4.14.0")

// KubernetesMinors maps an OpenShift 4 minor to the Kubernetes 1 minor it
// ships. docs/controlplane.md shows the same table (a test compares them).
var KubernetesMinors = map[uint64]uint64{
	14: 27,
	15: 28,
	16: 29,
	17: 30,
	18: 31,
	19: 32,
	20: 33,
	21: 34,
	22: 35,
}

// Default release repositories.
const (
	OCPRepository = "quay.io/openshift-release-dev/ocp-release"
	OKDRepository = "quay.io/okd/scos-release"
)

// Parse parses an OpenShift version such as 4.19.0, v4.19.0 or
// 4.19.0-okd-scos.ec.6.
func Parse(version string) (semver.Version, error) {
	v, err := semver.ParseTolerant(strings.TrimSpace(version))
	if err != nil {
		return semver.Version{}, fmt.Errorf("%q is not an OpenShift version (major.minor.patch, e.g. 4.19.0): %w", version, err)
	}
	return v, nil
}

// IsOKD tells whether the version is an OKD release (its pre-release part
// names okd), whose payload lives in the OKD repository.
func IsOKD(v semver.Version) bool {
	for _, p := range v.Pre {
		if strings.Contains(strings.ToLower(p.String()), "okd") {
			return true
		}
	}
	return false
}

// KubernetesVersion returns the Kubernetes version of an OpenShift version:
// override when set (with a v prefix added), else v1.<minor>.0 from the
// table. ok is false when the version is not in the table and there is no
// override; the message then says what to do.
func KubernetesVersion(distributionVersion, override string) (version string, fromTable, ok bool, msg string) {
	if override != "" {
		if !strings.HasPrefix(override, "v") {
			override = "v" + override
		}
		return override, false, true, ""
	}
	v, err := Parse(distributionVersion)
	if err != nil {
		return "", false, false, err.Error() + "; set spec.version"
	}
	minor, known := KubernetesMinors[v.Minor]
	if v.Major != 4 || !known {
		return "", false, false, fmt.Sprintf("OpenShift %d.%d is not in the built-in table of Kubernetes versions; "+
			"set spec.version to the Kubernetes version of the release", v.Major, v.Minor)
	}
	return fmt.Sprintf("v1.%d.0", minor), true, true, ""
}

// Architecture is the release payload architecture of a CPU architecture
// (InfraEnv spec.cpuArchitecture); "" is x86_64.
func Architecture(cpuArchitecture string) string {
	switch strings.ToLower(cpuArchitecture) {
	case "", "x86_64", "amd64":
		return "x86_64"
	case "arm64", "aarch64":
		return "aarch64"
	default:
		return strings.ToLower(cpuArchitecture)
	}
}

// Image is the release image of an OpenShift version: override when set;
// else <repository>:<version>-<arch> when a repository override is given;
// else the OKD repository's <version> for OKD versions, or the OCP
// repository's <version>-<arch>.
func Image(distributionVersion, arch, repositoryOverride, override string) string {
	if override != "" {
		return override
	}
	version := strings.TrimPrefix(strings.TrimSpace(distributionVersion), "v")
	if repositoryOverride != "" {
		return fmt.Sprintf("%s:%s-%s", strings.TrimSuffix(repositoryOverride, "/"), version, Architecture(arch))
	}
	if v, err := Parse(version); err == nil && IsOKD(v) {
		return OKDRepository + ":" + version
	}
	return fmt.Sprintf("%s:%s-%s", OCPRepository, version, Architecture(arch))
}

// Update is the ClusterVersion spec.desiredUpdate that moves a cluster to
// distributionVersion.
type Update struct {
	Version string
	Image   string
	Force   bool
}

// DesiredUpdate is what to ask the cluster-version operator for. A generally
// available OCP version from the default repository is asked for by version,
// which the operator resolves through its update service and verifies. Any
// other release (OKD, a pre-release, a mirror or a pinned image) is asked
// for by image with force, because the provider does not resolve digests
// (that would pull from the registry) and the operator only verifies
// signatures of digests it knows: force skips that verification.
func DesiredUpdate(distributionVersion, arch, repositoryOverride, override string) Update {
	version := strings.TrimPrefix(strings.TrimSpace(distributionVersion), "v")
	v, err := Parse(version)
	if err == nil && override == "" && repositoryOverride == "" && len(v.Pre) == 0 && len(v.Build) == 0 {
		return Update{Version: version}
	}
	return Update{Version: version, Image: Image(version, arch, repositoryOverride, override), Force: true}
}

// Compare compares two OpenShift versions (-1, 0, 1); unparsable versions
// compare as strings.
func Compare(a, b string) int {
	va, errA := Parse(a)
	vb, errB := Parse(b)
	if errA != nil || errB != nil {
		return strings.Compare(a, b)
	}
	return va.Compare(vb)
}
