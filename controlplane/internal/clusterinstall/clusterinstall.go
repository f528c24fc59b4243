// Package clusterinstall derives, from an OpenshiftAssistedControlPlane and
// its CAPI Cluster, the hive objects of the cluster's installation (the
// ClusterDeployment, the cluster-scoped ClusterImageSet and the
// AgentClusterInstall), names them, counts the workers the installation
// waits for, and reads the AgentClusterInstall's state. It is pure: no
// client, no I/O.
package clusterinstall

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	controlplanev1 "github.com/ocp-capi/ocp-capi/api/controlplane/v1alpha3"
	hivev1 "github.com/ocp-capi/ocp-capi/internal/consumed/hive/v1"
	hiveextv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/hiveext/v1beta1"
)

// Keys of assisted-service that this package writes.
const (
	// InstallConfigOverridesAnnotation is assisted-service's annotation of
	// install-config overrides (JSON) on an AgentClusterInstall.
	InstallConfigOverridesAnnotation = "agent-install.openshift.io/install-config-overrides"
	// ConsumerLabel marks an AgentClusterInstall made for a CAPI control
	// plane (CAPOA's label, kept so that tools that look for it find ours).
	ConsumerLabel = "agentclusterinstalls.agent-install.openshift.io/consumer"
	// ConsumerValue is ConsumerLabel's value.
	ConsumerValue = "OpenshiftAssistedControlPlane"
)

// maxNameLength is a DNS subdomain's.
const maxNameLength = 253

// ClusterImageSetName is the name of the cluster-scoped ClusterImageSet of
// the control plane namespace/name. ClusterImageSets are cluster-scoped, so
// the name carries both, plus a hash of the pair: two control planes of the
// same name in different namespaces never share one, and neither do
// namespace/name pairs that join to the same string ("a-b"/"c" and
// "a"/"b-c").
func ClusterImageSetName(namespace, name string) string {
	sum := sha256.Sum256([]byte(namespace + "/" + name))
	h := hex.EncodeToString(sum[:])[:10]
	base := namespace + "-" + name
	if keep := maxNameLength - len(h) - 1; len(base) > keep {
		base = strings.TrimRight(base[:keep], "-.")
	}
	return base + "-" + h
}

// ClusterName is the OpenShift cluster's name: spec.config.clusterName,
// else the CAPI Cluster's.
func ClusterName(oacp *controlplanev1.OpenshiftAssistedControlPlane, cluster string) string {
	if oacp.Spec.Config.ClusterName != "" {
		return oacp.Spec.Config.ClusterName
	}
	return cluster
}

// Labels are the labels of the objects made for a control plane of the
// CAPI cluster: the cluster name (the bootstrap provider finds the
// ClusterDeployment by it), the control-plane labels and the watch filter.
func Labels(oacp *controlplanev1.OpenshiftAssistedControlPlane, cluster string) map[string]string {
	l := map[string]string{
		clusterv1.ClusterNameLabel:             cluster,
		clusterv1.MachineControlPlaneLabel:     "",
		clusterv1.MachineControlPlaneNameLabel: ControlPlaneNameLabelValue(oacp.Name),
	}
	if v := oacp.Labels[clusterv1.WatchLabel]; v != "" {
		l[clusterv1.WatchLabel] = v
	}
	return l
}

// ControlPlaneNameLabelValue is the value of the control-plane-name label
// for a control plane: its name, or a hash when the name is longer than a
// label value may be (as CAPI does).
func ControlPlaneNameLabelValue(name string) string {
	if len(name) <= 63 {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return "hash_" + hex.EncodeToString(sum[:])[:32] + "_z"
}

// ClusterDeploymentSpec is the desired ClusterDeployment spec (what this
// provider manages of it; clusterMetadata and installed are the
// installer's).
func ClusterDeploymentSpec(oacp *controlplanev1.OpenshiftAssistedControlPlane, cluster, pullSecret string) hivev1.ClusterDeploymentSpec {
	return hivev1.ClusterDeploymentSpec{
		ClusterName:   ClusterName(oacp, cluster),
		BaseDomain:    oacp.Spec.Config.BaseDomain,
		Platform:      hivev1.Platform{AgentBareMetal: &hivev1.AgentBareMetalPlatform{}},
		PullSecretRef: &corev1.LocalObjectReference{Name: pullSecret},
		ClusterInstallRef: &hivev1.ClusterInstallLocalReference{
			Group: hiveextv1beta1.GroupVersion.Group, Version: hiveextv1beta1.GroupVersion.Version,
			Kind: "AgentClusterInstall", Name: oacp.Name,
		},
	}
}

// ApplyClusterDeployment copies the fields this provider manages from
// desired into spec and names those that changed. The platform's agent
// selector, clusterMetadata and installed are left alone.
func ApplyClusterDeployment(spec *hivev1.ClusterDeploymentSpec, desired hivev1.ClusterDeploymentSpec) []string {
	var changed []string
	if spec.ClusterName != desired.ClusterName {
		spec.ClusterName, changed = desired.ClusterName, append(changed, "clusterName")
	}
	if spec.BaseDomain != desired.BaseDomain {
		spec.BaseDomain, changed = desired.BaseDomain, append(changed, "baseDomain")
	}
	if spec.Platform.AgentBareMetal == nil {
		spec.Platform.AgentBareMetal, changed = &hivev1.AgentBareMetalPlatform{}, append(changed, "platform")
	}
	if !equality.Semantic.DeepEqual(spec.PullSecretRef, desired.PullSecretRef) {
		spec.PullSecretRef, changed = desired.PullSecretRef, append(changed, "pullSecretRef")
	}
	// Hive rejects changes of an installed ClusterDeployment's
	// clusterInstallRef: write it only when it differs.
	if !equality.Semantic.DeepEqual(spec.ClusterInstallRef, desired.ClusterInstallRef) {
		spec.ClusterInstallRef, changed = desired.ClusterInstallRef, append(changed, "clusterInstallRef")
	}
	return changed
}

// InstallInput is what the AgentClusterInstall derives from.
type InstallInput struct {
	OACP    *controlplanev1.OpenshiftAssistedControlPlane
	Cluster *clusterv1.Cluster
	// ImageSet is the ClusterImageSet's name.
	ImageSet string
	// Workers is the number of workers of the cluster's MachineDeployments
	// and MachineSets (see Workers).
	Workers int32
}

// AgentClusterInstall is the desired AgentClusterInstall spec and its
// install-config overrides annotation value ("" for none).
func AgentClusterInstall(in InstallInput) (hiveextv1beta1.AgentClusterInstallSpec, string, error) {
	oacp := in.OACP
	cfg := oacp.Spec.Config
	workers := int(in.Workers)
	if oacp.DesiredReplicas() == 1 {
		// assisted-service makes a single-node cluster only of 1
		// control-plane and 0 worker agents; with workers it wants a
		// highly available control plane. The workers of a single-node
		// control plane join on day 2.
		workers = 0
	}
	spec := hiveextv1beta1.AgentClusterInstallSpec{
		ClusterDeploymentRef: corev1.LocalObjectReference{Name: oacp.Name},
		ImageSetRef:          &hivev1.ClusterImageSetReference{Name: in.ImageSet},
		ProvisionRequirements: hiveextv1beta1.ProvisionRequirements{
			ControlPlaneAgents: int(oacp.DesiredReplicas()),
			WorkerAgents:       workers,
		},
		APIVIPs:            slices.Clone(cfg.APIVIPs),
		IngressVIPs:        slices.Clone(cfg.IngressVIPs),
		SSHPublicKey:       cfg.SSHAuthorizedKey,
		MastersSchedulable: cfg.MastersSchedulable,
		PlatformType:       hiveextv1beta1.NonePlatformType,
	}
	if len(cfg.APIVIPs) > 0 && len(cfg.IngressVIPs) > 0 {
		spec.PlatformType = hiveextv1beta1.BareMetalPlatformType
	}
	if in.Cluster != nil {
		n := in.Cluster.Spec.ClusterNetwork
		for _, cidr := range n.Pods.CIDRBlocks {
			spec.Networking.ClusterNetwork = append(spec.Networking.ClusterNetwork,
				hiveextv1beta1.ClusterNetworkEntry{CIDR: cidr, HostPrefix: hostPrefix(cidr)})
		}
		spec.Networking.ServiceNetwork = slices.Clone(n.Services.CIDRBlocks)
	}
	for _, r := range cfg.ManifestsConfigMapRefs {
		spec.ManifestsConfigMapRefs = append(spec.ManifestsConfigMapRefs, hiveextv1beta1.ManifestsConfigMapReference{Name: r.Name})
	}
	if d := cfg.DiskEncryption; d != nil {
		spec.DiskEncryption = &hiveextv1beta1.DiskEncryption{EnableOn: d.EnableOn, Mode: d.Mode, TangServers: d.TangServers}
	}
	if p := cfg.Proxy; p != nil {
		spec.Proxy = &hiveextv1beta1.Proxy{HTTPProxy: p.HTTPProxy, HTTPSProxy: p.HTTPSProxy, NoProxy: p.NoProxy}
	}
	if r := cfg.ImageRegistryRef; r != nil && r.Name != "" {
		spec.MirrorRegistryRef = &hiveextv1beta1.MirrorRegistryConfigMapReference{Name: r.Name, Namespace: oacp.Namespace}
	}
	overrides, err := InstallConfigOverrides(oacp.Annotations[controlplanev1.InstallConfigOverrideAnnotation],
		cfg.Capabilities, spec.PlatformType == hiveextv1beta1.BareMetalPlatformType)
	return spec, overrides, err
}

// hostPrefix is the per-node pod subnet size, CAPOA's: /23 for IPv4, /64
// for IPv6.
func hostPrefix(cidr string) int32 {
	if ip, _, err := net.ParseCIDR(cidr); err == nil && ip.To4() == nil {
		return 64
	}
	return 23
}

// ApplyAgentClusterInstall copies what this provider manages from desired
// into spec and names the fields that changed. Before the installation
// starts (started false) that is everything; once it started, the
// install-time fields are the installer's and only the provision
// requirements follow CAPI, and only once the installation is complete
// (installing false), since assisted-service refuses changes meanwhile.
// Fields this provider does not set (holdInstallation, clusterMetadata,
// deprecated and newer fields) are left alone, and networking is only set,
// never cleared (assisted-service defaults it).
func ApplyAgentClusterInstall(spec *hiveextv1beta1.AgentClusterInstallSpec, desired hiveextv1beta1.AgentClusterInstallSpec, started, installing bool) []string {
	var changed []string
	set := func(name string, differ bool, apply func()) {
		if differ {
			apply()
			changed = append(changed, name)
		}
	}
	if !installing {
		set("provisionRequirements", spec.ProvisionRequirements.ControlPlaneAgents != desired.ProvisionRequirements.ControlPlaneAgents ||
			spec.ProvisionRequirements.WorkerAgents != desired.ProvisionRequirements.WorkerAgents, func() {
			spec.ProvisionRequirements.ControlPlaneAgents = desired.ProvisionRequirements.ControlPlaneAgents
			spec.ProvisionRequirements.WorkerAgents = desired.ProvisionRequirements.WorkerAgents
		})
	}
	if started {
		return changed
	}
	set("clusterDeploymentRef", spec.ClusterDeploymentRef != desired.ClusterDeploymentRef, func() { spec.ClusterDeploymentRef = desired.ClusterDeploymentRef })
	set("imageSetRef", !equality.Semantic.DeepEqual(spec.ImageSetRef, desired.ImageSetRef), func() { spec.ImageSetRef = desired.ImageSetRef })
	if len(desired.Networking.ClusterNetwork) > 0 {
		set("networking.clusterNetwork", !equality.Semantic.DeepEqual(spec.Networking.ClusterNetwork, desired.Networking.ClusterNetwork),
			func() { spec.Networking.ClusterNetwork = desired.Networking.ClusterNetwork })
	}
	if len(desired.Networking.ServiceNetwork) > 0 {
		set("networking.serviceNetwork", !slices.Equal(spec.Networking.ServiceNetwork, desired.Networking.ServiceNetwork),
			func() { spec.Networking.ServiceNetwork = desired.Networking.ServiceNetwork })
	}
	set("apiVIPs", !slices.Equal(spec.APIVIPs, desired.APIVIPs), func() { spec.APIVIPs = desired.APIVIPs })
	set("ingressVIPs", !slices.Equal(spec.IngressVIPs, desired.IngressVIPs), func() { spec.IngressVIPs = desired.IngressVIPs })
	set("platformType", spec.PlatformType != desired.PlatformType, func() { spec.PlatformType = desired.PlatformType })
	set("sshPublicKey", spec.SSHPublicKey != desired.SSHPublicKey, func() { spec.SSHPublicKey = desired.SSHPublicKey })
	set("mastersSchedulable", spec.MastersSchedulable != desired.MastersSchedulable, func() { spec.MastersSchedulable = desired.MastersSchedulable })
	set("manifestsConfigMapRefs", !slices.Equal(spec.ManifestsConfigMapRefs, desired.ManifestsConfigMapRefs),
		func() { spec.ManifestsConfigMapRefs = desired.ManifestsConfigMapRefs })
	set("diskEncryption", !equality.Semantic.DeepEqual(normDisk(spec.DiskEncryption), normDisk(desired.DiskEncryption)),
		func() { spec.DiskEncryption = desired.DiskEncryption })
	set("proxy", !equality.Semantic.DeepEqual(normProxy(spec.Proxy), normProxy(desired.Proxy)), func() { spec.Proxy = desired.Proxy })
	set("mirrorRegistryRef", !equality.Semantic.DeepEqual(spec.MirrorRegistryRef, desired.MirrorRegistryRef),
		func() { spec.MirrorRegistryRef = desired.MirrorRegistryRef })
	return changed
}

// normDisk treats the API server's default (enableOn: none) as unset.
func normDisk(d *hiveextv1beta1.DiskEncryption) *hiveextv1beta1.DiskEncryption {
	if d == nil || (d.Mode == nil && d.TangServers == "" && (d.EnableOn == nil || *d.EnableOn == "none")) {
		return nil
	}
	return d
}

func normProxy(p *hiveextv1beta1.Proxy) *hiveextv1beta1.Proxy {
	if p == nil || *p == (hiveextv1beta1.Proxy{}) {
		return nil
	}
	return p
}

// ApplyAnnotation sets (or, for "", removes) the install-config overrides
// annotation on obj and tells whether it changed.
func ApplyAnnotation(obj metav1.Object, value string) bool {
	a := obj.GetAnnotations()
	old, had := a[InstallConfigOverridesAnnotation]
	switch {
	case value == "" && !had, had && old == value:
		return false
	case value == "":
		delete(a, InstallConfigOverridesAnnotation)
	default:
		if a == nil {
			a = map[string]string{}
		}
		a[InstallConfigOverridesAnnotation] = value
	}
	obj.SetAnnotations(a)
	return true
}

// The capabilities of bare-metal clusters managed by Cluster API (CAPOA's):
// baseline None plus what such a cluster needs; MachineAPI is left out
// because Cluster API manages the machines.
var bareMetalCapabilities = []string{
	"baremetal", "Console", "Insights", "OperatorLifecycleManager", "Ingress", "marketplace", "NodeTuning", "DeploymentConfig",
}

var baselineRE = regexp.MustCompile(`^(None|vCurrent|v4\.[0-9]+)$`)

// ValidBaseline tells whether a baselineCapability value is valid.
func ValidBaseline(b string) bool { return b == "" || baselineRE.MatchString(b) }

// InstallConfigOverrides merges the user's install-config overrides (the
// control plane's annotation, JSON) with the capabilities: on a BareMetal
// platform the baseline defaults to None plus the bare-metal set, elsewhere
// capabilities are only written when given. The capabilities win over a
// capabilities key of the user's JSON. "" means no overrides.
func InstallConfigOverrides(user string, caps controlplanev1.Capabilities, bareMetal bool) (string, error) {
	merged := map[string]any{}
	if strings.TrimSpace(user) != "" {
		if err := json.Unmarshal([]byte(user), &merged); err != nil {
			return "", fmt.Errorf("annotation %s is not a JSON object: %w", controlplanev1.InstallConfigOverrideAnnotation, err)
		}
		// null decodes into a nil map without error; writing to it would
		// panic, and it is no object.
		if merged == nil {
			return "", fmt.Errorf("annotation %s is not a JSON object: null", controlplanev1.InstallConfigOverrideAnnotation)
		}
	}
	empty := caps.BaselineCapability == "" && len(caps.AdditionalEnabledCapabilities) == 0
	if !empty || bareMetal {
		if !ValidBaseline(caps.BaselineCapability) {
			return "", fmt.Errorf("spec.config.capabilities.baselineCapability %q: want None, vCurrent or v4.x", caps.BaselineCapability)
		}
		baseline := caps.BaselineCapability
		var additional []string
		if bareMetal {
			additional = slices.Clone(bareMetalCapabilities)
			if baseline == "" {
				baseline = "None"
			}
		} else if baseline == "" {
			baseline = "vCurrent"
		}
		for _, c := range caps.AdditionalEnabledCapabilities {
			if (bareMetal && strings.EqualFold(c, "MachineAPI")) || slices.Contains(additional, c) {
				continue
			}
			additional = append(additional, c)
		}
		capabilities := map[string]any{"baselineCapabilitySet": baseline}
		if len(additional) > 0 {
			capabilities["additionalEnabledCapabilities"] = additional
		}
		merged["capabilities"] = capabilities
	}
	if len(merged) == 0 {
		return "", nil
	}
	out, err := json.Marshal(merged) // map keys are sorted: stable output
	return string(out), err
}

// Workers counts the workers of the cluster: the replicas of every
// MachineDeployment, plus those of every MachineSet that no
// MachineDeployment owns (a MachineDeployment's MachineSets are counted
// through it). Objects being deleted count 0; unset replicas count 0.
func Workers(cluster string, mds []clusterv1.MachineDeployment, mss []clusterv1.MachineSet) int32 {
	var n int32
	for i := range mds {
		md := &mds[i]
		if md.Spec.ClusterName == cluster && md.DeletionTimestamp.IsZero() && md.Spec.Replicas != nil {
			n += *md.Spec.Replicas
		}
	}
	for i := range mss {
		ms := &mss[i]
		if ms.Spec.ClusterName != cluster || !ms.DeletionTimestamp.IsZero() || ms.Spec.Replicas == nil {
			continue
		}
		if slices.ContainsFunc(ms.OwnerReferences, func(r metav1.OwnerReference) bool { return r.Kind == "MachineDeployment" }) {
			continue
		}
		n += *ms.Spec.Replicas
	}
	return n
}
