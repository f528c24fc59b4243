package osbuild

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	mcfgv1 "github.com/ocp-capi/ocp-capi/internal/consumed/machineconfiguration/v1"
)

// The input ConfigMaps, in the build namespace.
const (
	// BuilderConfigMapName is the name MCO-585 gives the builder
	// configuration (docs/addon/build-controller.md, "Inputs").
	BuilderConfigMapName = "machine-os-builder-config"
	// BuilderConfigMapAlias is upstream MCO's name for the same ConfigMap,
	// read when BuilderConfigMapName does not exist.
	BuilderConfigMapAlias = "on-cluster-build-config"
	// OSImageURLConfigMapName is the MCO's ConfigMap naming the base OS image.
	OSImageURLConfigMapName = "machine-config-osimageurl"
	// CustomContainerfileConfigMapName is upstream's optional ConfigMap of
	// users' Containerfiles: key <pool>, value the Containerfile content
	// appended to the generated one.
	CustomContainerfileConfigMapName = "on-cluster-build-custom-dockerfile"
)

// MaxContainerfileLength is the longest user Containerfile accepted (the
// MachineOSConfig API's limit).
const MaxContainerfileLength = 4096

// RebuildAnnotation on a pool (or a MachineOSConfig) forces a build of its
// current configuration even when an image for it exists; the controller
// removes it once that build is published (upstream's annotation).
const RebuildAnnotation = "machineconfiguration.openshift.io/rebuild"

// Keys of the builder ConfigMap (all required; upstream's names).
const (
	BaseImagePullSecretNameKey  = "baseImagePullSecretName"
	FinalImagePushSecretNameKey = "finalImagePushSecretName"
	FinalImagePullspecKey       = "finalImagePullspec"
)

// Keys of machine-config-osimageurl.
const (
	// BaseOSContainerImageKey is the base image (required).
	BaseOSContainerImageKey = "baseOSContainerImage"
	// OSImageURLKey is the older key for the base image, read when
	// BaseOSContainerImageKey is absent.
	OSImageURLKey = "osImageURL"
	// ReleaseVersionKey becomes an image label (optional).
	ReleaseVersionKey = "releaseVersion"
)

// BuilderConfig is the parsed builder ConfigMap.
type BuilderConfig struct {
	// ConfigMapName is the ConfigMap it was read from
	// (BuilderConfigMapName or BuilderConfigMapAlias), for messages; ""
	// when it comes from a MachineOSConfig.
	ConfigMapName string
	// MachineOSConfig is the MachineOSConfig it comes from, or "" (the
	// ConfigMap).
	MachineOSConfig      string
	BaseImagePullSecret  string
	FinalImagePushSecret string
	// FinalRepository is finalImagePullspec without tag: registry/org/repo.
	FinalRepository string
}

// ParseBuilderConfig reads and validates the builder ConfigMap.
func ParseBuilderConfig(cm *corev1.ConfigMap) (BuilderConfig, error) {
	where := fmt.Sprintf("ConfigMap %s/%s", cm.Namespace, cm.Name)
	var missing []string
	get := func(key string) string {
		v := strings.TrimSpace(cm.Data[key])
		if v == "" {
			missing = append(missing, key)
		}
		return v
	}
	cfg := BuilderConfig{
		ConfigMapName:        cm.Name,
		BaseImagePullSecret:  get(BaseImagePullSecretNameKey),
		FinalImagePushSecret: get(FinalImagePushSecretNameKey),
	}
	pullspec := get(FinalImagePullspecKey)
	if len(missing) > 0 {
		return BuilderConfig{}, inputError(ReasonInvalidConfigMap,
			fmt.Sprintf("%s lacks %s: set %s, %s and %s.", where, strings.Join(missing, ", "),
				BaseImagePullSecretNameKey, FinalImagePushSecretNameKey, FinalImagePullspecKey))
	}
	for _, s := range []struct{ key, name string }{
		{BaseImagePullSecretNameKey, cfg.BaseImagePullSecret},
		{FinalImagePushSecretNameKey, cfg.FinalImagePushSecret},
	} {
		if errs := validation.IsDNS1123Subdomain(s.name); len(errs) > 0 {
			return BuilderConfig{}, inputError(ReasonInvalidConfigMap,
				fmt.Sprintf("%s: %s %q is not a valid Secret name: %s.", where, s.key, s.name, strings.Join(errs, "; ")))
		}
	}
	repo, err := ParsePushRepository(pullspec)
	if err != nil {
		return BuilderConfig{}, inputError(ReasonInvalidConfigMap,
			fmt.Sprintf("%s: %s %q %v.", where, FinalImagePullspecKey, pullspec, err))
	}
	cfg.FinalRepository = repo
	return cfg, nil
}

// OSImages is the parsed machine-config-osimageurl ConfigMap.
type OSImages struct {
	BaseImage      string
	ReleaseVersion string
}

// ParseOSImageURL reads and validates machine-config-osimageurl.
func ParseOSImageURL(cm *corev1.ConfigMap) (OSImages, error) {
	where := fmt.Sprintf("ConfigMap %s/%s", cm.Namespace, cm.Name)
	base := strings.TrimSpace(cm.Data[BaseOSContainerImageKey])
	key := BaseOSContainerImageKey
	if base == "" {
		base, key = strings.TrimSpace(cm.Data[OSImageURLKey]), OSImageURLKey
	}
	if base == "" {
		return OSImages{}, inputError(ReasonInvalidConfigMap,
			fmt.Sprintf("%s lacks %s: it must name the base OS container image.", where, BaseOSContainerImageKey))
	}
	if !validImageReference(base) {
		return OSImages{}, inputError(ReasonInvalidConfigMap,
			fmt.Sprintf("%s: %s %q is not an image pullspec (registry/repo[:tag][@sha256:digest]).", where, key, base))
	}
	rv := strings.TrimSpace(cm.Data[ReleaseVersionKey])
	if !labelSafe.MatchString(rv) {
		// Only an image label; drop it rather than fail the build.
		rv = ""
	}
	return OSImages{BaseImage: base, ReleaseVersion: rv}, nil
}

// labelSafe accepts values that go into a Containerfile LABEL unquoted.
var labelSafe = regexp.MustCompile(`^[A-Za-z0-9._+:/@-]{0,128}$`)

// ValidatePullSecret checks that a pull or push secret holds a
// .dockerconfigjson with an "auths" object. role names the secret for the
// message ("base image pull" or "final image push"). Legacy .dockercfg
// secrets are refused, not converted: converting needs write access to
// Secrets, which the controller does not have.
func ValidatePullSecret(role, configMapKey string, s *corev1.Secret) error {
	where := fmt.Sprintf("The %s secret %s/%s (%s)", role, s.Namespace, s.Name, configMapKey)
	data, ok := s.Data[corev1.DockerConfigJsonKey]
	if !ok || len(data) == 0 {
		hint := ""
		if _, legacy := s.Data[corev1.DockerConfigKey]; legacy {
			hint = fmt.Sprintf(" It has a legacy %s key: wrap its content as {\"auths\": <content>} under %s.", corev1.DockerConfigKey, corev1.DockerConfigJsonKey)
		}
		return inputError(ReasonInvalidSecret,
			fmt.Sprintf("%s has no %s key.%s Use a secret of type %s.", where, corev1.DockerConfigJsonKey, hint, corev1.SecretTypeDockerConfigJson))
	}
	var cfg struct {
		Auths map[string]json.RawMessage `json:"auths"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil || cfg.Auths == nil {
		return inputError(ReasonInvalidSecret,
			fmt.Sprintf("%s: %s is not a JSON object with an \"auths\" map.", where, corev1.DockerConfigJsonKey))
	}
	return nil
}

// IsLayered reports whether a pool has opted in.
func IsLayered(pool *mcfgv1.MachineConfigPool) bool {
	_, ok := pool.Labels[LayeringEnabledLabel]
	return ok
}

// RenderedConfig returns the name of the pool's rendered MachineConfig.
func RenderedConfig(pool *mcfgv1.MachineConfigPool) (string, error) {
	name := pool.Spec.Configuration.Name
	if name == "" {
		return "", inputError(ReasonNoRenderedConfig,
			fmt.Sprintf("MachineConfigPool %s has no spec.configuration.name yet: wait for the machine-config controller to render its configuration.", pool.Name))
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return "", inputError(ReasonNoRenderedConfig,
			fmt.Sprintf("MachineConfigPool %s: spec.configuration.name %q is not a valid MachineConfig name.", pool.Name, name))
	}
	return name, nil
}

// The grammar of github.com/distribution/reference, without normalization:
// push targets must be fully qualified.
const (
	alnum      = `[a-z0-9]+`
	separator  = `(?:[._]|__|[-]+)`
	component  = alnum + `(?:` + separator + alnum + `)*`
	domainPart = `(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])`
	domainName = domainPart + `(?:\.` + domainPart + `)*`
	ipv6       = `\[(?:[a-fA-F0-9:]+)\]`
	domain     = `(?:` + domainName + `|` + ipv6 + `)(?::[0-9]+)?`
	tagRE      = `[\w][\w.-]{0,127}`
	digestRE   = `[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}`
)

var (
	repositoryRE = regexp.MustCompile(`^(` + domain + `)/(` + component + `(?:/` + component + `)*)$`)
	referenceRE  = regexp.MustCompile(`^` + domain + `/` + component + `(?:/` + component + `)*(?::` + tagRE + `)?(?:@` + digestRE + `)?$`)
	tagOnlyRE    = regexp.MustCompile(`^` + tagRE + `$`)
	digestOnlyRE = regexp.MustCompile(`^sha256:[a-f0-9]{64}$`)
)

// validImageReference accepts a fully qualified pullspec with an optional
// tag and digest.
func validImageReference(s string) bool {
	return len(s) <= 1024 && referenceRE.MatchString(s)
}

// ParsePushRepository turns finalImagePullspec into the repository to push
// to: a fully qualified registry/org/repo. A tag is dropped (the controller
// tags with the rendered MachineConfig's name, as upstream does); a digest
// is an error, as one cannot push to a digest. The error completes the
// sentence "finalImagePullspec <value> ...".
func ParsePushRepository(pullspec string) (string, error) {
	if strings.Contains(pullspec, "@") {
		return "", fmt.Errorf("names a digest: give registry/org/repo[:tag] to push to")
	}
	repo := pullspec
	// A colon after the last slash starts a tag; one before it is a port.
	if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		if !tagOnlyRE.MatchString(repo[i+1:]) {
			return "", fmt.Errorf("has an invalid tag %q", repo[i+1:])
		}
		repo = repo[:i]
	}
	m := repositoryRE.FindStringSubmatch(repo)
	if m == nil || len(repo) > 255 {
		return "", fmt.Errorf("is not a fully qualified image repository: give registry/org/repo, e.g. image-registry.openshift-image-registry.svc:5000/openshift-machine-config-operator/os-image")
	}
	// Without a dot, colon or "localhost" the first part is not a registry
	// but a Docker Hub namespace; refuse the ambiguity.
	if host := m[1]; !strings.ContainsAny(host, ".:[") && host != "localhost" {
		return "", fmt.Errorf("does not start with a registry host: give registry/org/repo (Docker Hub is docker.io/org/repo)")
	}
	return repo, nil
}

// ValidDigest reports whether d is sha256:<64 lower-case hex>.
func ValidDigest(d string) bool { return digestOnlyRE.MatchString(d) }
