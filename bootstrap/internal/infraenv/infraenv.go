// Package infraenv derives a machine's InfraEnv from its
// OpenshiftAssistedConfig and its cluster's ClusterDeployment, names it, and
// reads what assisted-service reports in its status (image readiness, ISO and
// discovery ignition URLs). It is pure: no client, no I/O.
package infraenv

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	bootstrapv1 "github.com/ocp-capi/ocp-capi/api/bootstrap/v1alpha2"
	aiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/agentinstall/v1beta1"
	hivev1 "github.com/ocp-capi/ocp-capi/internal/consumed/hive/v1"
)

// DefaultCPUArchitecture is the InfraEnv's (and the config's) default.
const DefaultCPUArchitecture = "x86_64"

// sharedSuffix ends the name of an InfraEnv shared by a template's machines.
const sharedSuffix = "-liveiso"

// maxNameLength is a DNS subdomain's.
const maxNameLength = 253

// Name is the InfraEnv of one config: the config's name, as the InfraEnv
// lives exactly as long as the config.
func Name(configName string) string { return configName }

// SharedName is the InfraEnv shared by the machines made from the
// infrastructure template templateName (LiveISO). Over-long names are
// shortened with a hash so that they stay unique.
func SharedName(templateName string) string {
	name := templateName + sharedSuffix
	if len(name) <= maxNameLength {
		return name
	}
	sum := sha256.Sum256([]byte(templateName))
	h := hex.EncodeToString(sum[:])[:10]
	keep := maxNameLength - len(sharedSuffix) - len(h) - 1
	return strings.TrimRight(templateName[:keep], "-.") + "-" + h + sharedSuffix
}

// Spec is the InfraEnv spec for config in the cluster of cd. The pull
// secret is the config's, else the ClusterDeployment's; agentLabels are set
// on every Agent that boots from the InfraEnv.
func Spec(config *bootstrapv1.OpenshiftAssistedConfig, cd *hivev1.ClusterDeployment, agentLabels map[string]string) aiv1beta1.InfraEnvSpec {
	s := config.Spec
	spec := aiv1beta1.InfraEnvSpec{
		AdditionalNTPSources:       slices.Clone(s.AdditionalNTPSources),
		SSHAuthorizedKey:           s.SSHAuthorizedKey,
		NMStateConfigLabelSelector: *s.NMStateConfigLabelSelector.DeepCopy(),
		ClusterRef:                 &aiv1beta1.ClusterReference{Name: cd.Name, Namespace: cd.Namespace},
		CPUArchitecture:            s.CpuArchitecture,
		AdditionalTrustBundle:      s.AdditionalTrustBundle,
		OSImageVersion:             s.OSImageVersion,
		// full-iso embeds the static network configuration in the
		// ignition, which DiscoveryIgnition machines need.
		ImageType:              aiv1beta1.ImageTypeFullISO,
		IgnitionConfigOverride: config.Annotations[bootstrapv1.DiscoveryIgnitionOverrideAnnotation],
	}
	if spec.CPUArchitecture == "" {
		spec.CPUArchitecture = DefaultCPUArchitecture
	}
	if s.Proxy != nil {
		spec.Proxy = &aiv1beta1.Proxy{HTTPProxy: s.Proxy.HTTPProxy, HTTPSProxy: s.Proxy.HTTPSProxy, NoProxy: s.Proxy.NoProxy}
	}
	for _, k := range s.KernelArguments {
		spec.KernelArguments = append(spec.KernelArguments, aiv1beta1.KernelArgument{Operation: k.Operation, Value: k.Value})
	}
	switch {
	case s.PullSecretRef != nil:
		spec.PullSecretRef = &corev1.LocalObjectReference{Name: s.PullSecretRef.Name}
	case cd.Spec.PullSecretRef != nil:
		spec.PullSecretRef = &corev1.LocalObjectReference{Name: cd.Spec.PullSecretRef.Name}
	}
	if len(agentLabels) > 0 {
		spec.AgentLabels = agentLabels
	}
	return spec
}

// Diff names the fields this provider sets that differ between an existing
// InfraEnv spec and the desired one. Fields it does not set (ipxeScriptType,
// defaulted by the API server, and fields of newer assisted-service
// versions) are not compared.
func Diff(existing, desired aiv1beta1.InfraEnvSpec) []string {
	var out []string
	cmp := func(name string, a, b any) {
		if !equality.Semantic.DeepEqual(a, b) {
			out = append(out, name)
		}
	}
	cmp("proxy", normProxy(existing.Proxy), normProxy(desired.Proxy))
	cmp("additionalNTPSources", emptyNil(existing.AdditionalNTPSources), emptyNil(desired.AdditionalNTPSources))
	cmp("sshAuthorizedKey", existing.SSHAuthorizedKey, desired.SSHAuthorizedKey)
	cmp("pullSecretRef", existing.PullSecretRef, desired.PullSecretRef)
	cmp("agentLabels", emptyNilMap(existing.AgentLabels), emptyNilMap(desired.AgentLabels))
	cmp("nmStateConfigLabelSelector", existing.NMStateConfigLabelSelector, desired.NMStateConfigLabelSelector)
	cmp("clusterRef", existing.ClusterRef, desired.ClusterRef)
	cmp("ignitionConfigOverride", existing.IgnitionConfigOverride, desired.IgnitionConfigOverride)
	cmp("cpuArchitecture", orDefault(existing.CPUArchitecture), orDefault(desired.CPUArchitecture))
	if len(existing.KernelArguments) != 0 || len(desired.KernelArguments) != 0 {
		cmp("kernelArguments", existing.KernelArguments, desired.KernelArguments)
	}
	cmp("additionalTrustBundle", existing.AdditionalTrustBundle, desired.AdditionalTrustBundle)
	cmp("osImageVersion", existing.OSImageVersion, desired.OSImageVersion)
	cmp("imageType", existing.ImageType, desired.ImageType)
	return out
}

// Apply copies the fields Diff compares from desired into spec, leaving the
// others (ipxeScriptType, fields we do not model) alone.
func Apply(spec *aiv1beta1.InfraEnvSpec, desired aiv1beta1.InfraEnvSpec) {
	spec.Proxy = desired.Proxy
	spec.AdditionalNTPSources = desired.AdditionalNTPSources
	spec.SSHAuthorizedKey = desired.SSHAuthorizedKey
	spec.PullSecretRef = desired.PullSecretRef
	spec.AgentLabels = desired.AgentLabels
	spec.NMStateConfigLabelSelector = desired.NMStateConfigLabelSelector
	spec.ClusterRef = desired.ClusterRef
	spec.IgnitionConfigOverride = desired.IgnitionConfigOverride
	spec.CPUArchitecture = desired.CPUArchitecture
	spec.KernelArguments = desired.KernelArguments
	spec.AdditionalTrustBundle = desired.AdditionalTrustBundle
	spec.OSImageVersion = desired.OSImageVersion
	spec.ImageType = desired.ImageType
}

func normProxy(p *aiv1beta1.Proxy) *aiv1beta1.Proxy {
	if p == nil || *p == (aiv1beta1.Proxy{}) {
		return nil
	}
	return p
}

func emptyNil(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

func emptyNilMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}

func orDefault(arch string) string {
	if arch == "" {
		return DefaultCPUArchitecture
	}
	return arch
}

// ImageState is what assisted-service says about an InfraEnv's image.
type ImageState int

const (
	// ImagePending: no image yet (no condition, or not True).
	ImagePending ImageState = iota
	// ImageReady: the ImageCreated condition is True.
	ImageReady
	// ImageFailed: assisted-service could not create the image
	// (ImageCreationError); the message says why.
	ImageFailed
)

// Image reads the InfraEnv's ImageCreated condition.
func Image(status aiv1beta1.InfraEnvStatus) (ImageState, string) {
	for _, c := range status.Conditions {
		if c.Type != aiv1beta1.ImageCreatedCondition {
			continue
		}
		switch {
		case c.Status == corev1.ConditionTrue:
			return ImageReady, c.Message
		case c.Reason == ImageCreationErrorReason:
			return ImageFailed, c.Message
		}
		return ImagePending, c.Message
	}
	return ImagePending, ""
}

// ImageCreationErrorReason is assisted-service's reason for a failed image.
const ImageCreationErrorReason = "ImageCreationError"

// Discovery ignition endpoint of assisted-service's REST API.
const ignitionPathFormat = "/api/assisted-install/v2/infra-envs/%s/downloads/files"

// IgnitionURL is where the InfraEnv's discovery ignition is served:
// status.bootArtifacts.discoveryIgnitionURL when assisted-service publishes
// it, else the URL built, as CAPOA does, from the scheme, host,
// api_key and infra_env_id of status.debugInfo.eventsURL. When base is set
// (an in-cluster assisted-service URL), its scheme and host replace the
// published ones.
func IgnitionURL(status aiv1beta1.InfraEnvStatus, base *url.URL) (*url.URL, error) {
	var u *url.URL
	if raw := status.BootArtifacts.DiscoveryIgnitionURL; raw != "" {
		parsed, err := url.Parse(raw)
		if err != nil {
			return nil, fmt.Errorf("status.bootArtifacts.discoveryIgnitionURL: %w", err)
		}
		u = parsed
	} else {
		raw := status.InfraEnvDebugInfo.EventsURL
		if raw == "" {
			return nil, fmt.Errorf("neither status.bootArtifacts.discoveryIgnitionURL nor status.debugInfo.eventsURL is set yet")
		}
		events, err := url.Parse(raw)
		if err != nil {
			return nil, fmt.Errorf("status.debugInfo.eventsURL: %w", err)
		}
		q := events.Query()
		id, key := q.Get("infra_env_id"), q.Get("api_key")
		if id == "" {
			return nil, fmt.Errorf("status.debugInfo.eventsURL has no infra_env_id")
		}
		query := url.Values{"file_name": {"discovery.ign"}}
		if key != "" {
			query.Set("api_key", key)
		}
		u = &url.URL{Scheme: events.Scheme, Host: events.Host, Path: fmt.Sprintf(ignitionPathFormat, url.PathEscape(id)), RawQuery: query.Encode()}
	}
	if u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("ignition URL %q has no scheme or host", u.Redacted())
	}
	if base != nil {
		u.Scheme, u.Host = base.Scheme, base.Host
		if p := strings.TrimRight(base.Path, "/"); p != "" {
			u.Path = p + u.Path
		}
	}
	return u, nil
}

// LabelValue is name as a label value: itself when it fits (63
// characters), else a prefix and a hash, so that it stays unique.
func LabelValue(name string) string {
	const maxLabel = 63
	if len(name) <= maxLabel {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	h := hex.EncodeToString(sum[:])[:10]
	return strings.TrimRight(name[:maxLabel-len(h)-1], "-._") + "-" + h
}
