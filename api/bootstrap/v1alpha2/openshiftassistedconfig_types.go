package v1alpha2

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BootMode is how a machine gets the assisted installer's discovery
// environment.
// +kubebuilder:validation:Enum=LiveISO;DiscoveryIgnition
type BootMode string

const (
	// BootModeLiveISO boots the InfraEnv's discovery ISO: the ISO URL is
	// written on the Metal3Machine (and its Metal3MachineTemplate) with
	// format live-iso, and the bootstrap data Secret is empty. Machines made
	// from one template share one InfraEnv, since a template carries one
	// ISO URL.
	BootModeLiveISO BootMode = "LiveISO"
	// BootModeDiscoveryIgnition boots the infrastructure's own image (RHCOS)
	// with the InfraEnv's discovery ignition as user data: the bootstrap
	// data Secret holds the ignition. It works with any infrastructure
	// provider that passes user data, OpenStack included.
	BootModeDiscoveryIgnition BootMode = "DiscoveryIgnition"
)

// Annotations read on an OpenshiftAssistedConfig (the reference's keys).
const (
	// DiscoveryIgnitionOverrideAnnotation holds an Ignition config (JSON)
	// that is copied into the InfraEnv's spec.ignitionConfigOverride, so it
	// applies to the discovery boot.
	DiscoveryIgnitionOverrideAnnotation = "openshiftassistedconfig.cluster.x-k8s.io/discovery-ignition-override"
	// IgnitionOverrideAnnotation is the reference's install-time Ignition
	// override. This provider does not merge it; the webhook warns.
	IgnitionOverrideAnnotation = "openshiftassistedconfig.cluster.x-k8s.io/ignition-override"
)

// Proxy is the proxy of the discovery agent and of the installed cluster's
// hosts (InfraEnv spec.proxy).
type Proxy struct {
	// httpProxy is the URL of the proxy for HTTP requests.
	// +optional
	HTTPProxy string `json:"httpProxy,omitempty"`
	// httpsProxy is the URL of the proxy for HTTPS requests.
	// +optional
	HTTPSProxy string `json:"httpsProxy,omitempty"`
	// noProxy is a comma-separated list of domains and CIDRs for which the
	// proxy should not be used.
	// +optional
	NoProxy string `json:"noProxy,omitempty"`
}

// KernelArgument edits the discovery image's kernel command line
// (InfraEnv spec.kernelArguments).
type KernelArgument struct {
	// operation is the operation to apply on the kernel argument.
	// +kubebuilder:validation:Enum=append;replace;delete
	// +optional
	Operation string `json:"operation,omitempty"`
	// value has the form <parameter> or <parameter>=<value>, e.g.
	// rd.net.timeout.carrier=60 or quiet.
	// +kubebuilder:validation:Pattern=`^(?:(?:[^ \t\n\r"]+)|(?:"[^"]*"))+$`
	// +optional
	Value string `json:"value,omitempty"`
}

// OpenshiftAssistedConfigSpec is the discovery environment of one machine.
// Its InfraEnv-facing fields are copied into the machine's InfraEnv.
type OpenshiftAssistedConfigSpec struct {
	// proxy defines the proxy settings for agents and clusters that use the
	// InfraEnv. If unset, the agents and clusters will not be configured to
	// use a proxy.
	// +optional
	Proxy *Proxy `json:"proxy,omitempty"`

	// pullSecretRef is the reference to the secret to use when pulling
	// images. When unset, the ClusterDeployment's pull secret is used.
	// +optional
	PullSecretRef *corev1.LocalObjectReference `json:"pullSecretRef,omitempty"`

	// additionalNTPSources is a list of NTP sources (hostname or IP) to be
	// added to all cluster hosts. They are added to any NTP sources that
	// were configured through other means.
	// +optional
	AdditionalNTPSources []string `json:"additionalNTPSources,omitempty"`

	// sshAuthorizedKey is an SSH public key that will be added to all agents
	// (discovery phase) for use in debugging.
	// +optional
	SSHAuthorizedKey string `json:"sshAuthorizedKey,omitempty"`

	// nmStateConfigLabelSelector associates NMStateConfigs for hosts that
	// are considered part of this installation environment.
	// +optional
	NMStateConfigLabelSelector metav1.LabelSelector `json:"nmStateConfigLabelSelector,omitempty"`

	// cpuArchitecture specifies the target CPU architecture. Default is x86_64.
	// +kubebuilder:default=x86_64
	// +optional
	CpuArchitecture string `json:"cpuArchitecture,omitempty"` //nolint:revive // the reference's Go name

	// kernelArguments are additional kernel arguments of the discovery
	// image's boot.
	// +optional
	KernelArguments []KernelArgument `json:"kernelArguments,omitempty"`

	// additionalTrustBundle is a PEM-encoded X.509 certificate bundle. Hosts
	// discovered by this InfraEnv trust the certificates in this bundle, and
	// so do clusters formed from them.
	// +optional
	AdditionalTrustBundle string `json:"additionalTrustBundle,omitempty"`

	// osImageVersion is the version of the OS image to use when generating
	// the InfraEnv: an OpenshiftVersion of the AgentServiceConfig's
	// osImages.
	// +optional
	OSImageVersion string `json:"osImageVersion,omitempty"`

	// preBootstrapCommands run once, as root, before kubelet starts on the
	// installed host's first boot (a oneshot systemd unit ordered
	// Before=kubelet.service). On failure they are retried on the next boot.
	// +optional
	// +listType=atomic
	PreBootstrapCommands []string `json:"preBootstrapCommands,omitempty"`

	// postBootstrapCommands run once, as root, after kubelet starts on the
	// installed host's first boot, once postBootstrapKubeconfigPath exists
	// (exported to them as KUBECONFIG). On failure they are retried on the
	// next boot.
	// +optional
	// +listType=atomic
	PostBootstrapCommands []string `json:"postBootstrapCommands,omitempty"`

	// bootstrapCommandSentinelDir is the directory of the run-once sentinel
	// files of preBootstrapCommands and postBootstrapCommands. Default
	// /var/lib/capoa. An absolute path of safe characters.
	// +optional
	// +kubebuilder:validation:Pattern=`^/[a-zA-Z0-9_./-]+$`
	BootstrapCommandSentinelDir string `json:"bootstrapCommandSentinelDir,omitempty"`

	// postBootstrapKubeconfigPath is the kubeconfig that postBootstrapCommands
	// wait for and use. Default /var/lib/kubelet/kubeconfig. An absolute
	// path of safe characters.
	// +optional
	// +kubebuilder:validation:Pattern=`^/[a-zA-Z0-9_./-]+$`
	PostBootstrapKubeconfigPath string `json:"postBootstrapKubeconfigPath,omitempty"`

	// nodeRegistration holds fields related to registering the node to the
	// cluster.
	// +optional
	NodeRegistration NodeRegistrationOptions `json:"nodeRegistration,omitempty"`

	// bootMode is how the machine boots into the discovery environment:
	// LiveISO (the InfraEnv's ISO, for Metal3 machines) or DiscoveryIgnition
	// (the infrastructure's image with the discovery ignition as user data).
	// When unset it follows the infrastructure machine: a Metal3Machine with
	// no image, or a live-iso image, boots LiveISO; anything else (a Metal3
	// disk image, an OpenStackMachine, other providers) boots
	// DiscoveryIgnition. status.bootMode shows the mode in effect.
	// +optional
	BootMode BootMode `json:"bootMode,omitempty"`
}

// NodeRegistrationOptions are about registering the node to the cluster.
//
// The values may name host variables, written $NAME or ${NAME}, which the
// controller resolves from the machine's host when it binds the Agent:
// METADATA_UUID (the BareMetalHost's UID, or the OpenStack server's ID),
// METADATA_NAME (the BareMetalHost's or the server's name),
// METADATA_HOSTNAME and METADATA_LOCAL_HOSTNAME (the infrastructure
// machine's name), METADATA_METAL3_NAME and METADATA_METAL3_NAMESPACE (the
// BareMetalHost's name and namespace). Other variables are rejected.
type NodeRegistrationOptions struct {
	// name is the node's hostname: a literal, or a host variable such as
	// $METADATA_NAME. It becomes the Agent's spec.hostname.
	// +optional
	Name string `json:"name,omitempty"`

	// kubeletExtraLabels are extra node labels, each key=value (the value
	// may use host variables). They become the Agent's spec.nodeLabels.
	// +optional
	KubeletExtraLabels []string `json:"kubeletExtraLabels,omitempty"`

	// providerID is passed to kubelet (KUBELET_PROVIDERID in
	// /etc/kubernetes/kubelet-env): a literal or a value with host
	// variables, such as openstack:///$METADATA_UUID. When unset, an
	// OpenStack machine gets its OpenStackMachine's spec.providerID, and a
	// Metal3 node gets the metal3.io/uuid label that CAPM3 matches instead.
	// +optional
	ProviderID string `json:"providerID,omitempty"`
}

// OpenshiftAssistedConfigInitializationStatus is the Cluster API contract's
// initialization status of a bootstrap config.
type OpenshiftAssistedConfigInitializationStatus struct {
	// dataSecretCreated is true when the Machine's bootstrap secret is
	// created.
	// NOTE: this field is part of the Cluster API contract, and it is used
	// to orchestrate initial Machine provisioning.
	// +optional
	DataSecretCreated *bool `json:"dataSecretCreated,omitempty"`
}

// LocalObjectReference names an object in the config's namespace.
type LocalObjectReference struct {
	// name of the object.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`
}

// OpenshiftAssistedConfigStatus is the observed state of a config.
type OpenshiftAssistedConfigStatus struct {
	// conditions: Ready (summary of DataSecretAvailable),
	// DataSecretAvailable, AgentApproved and Paused.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// initialization provides observations of the config's initialization
	// process.
	// NOTE: Fields in this struct are part of the Cluster API contract and
	// are used to orchestrate initial Machine provisioning.
	// +optional
	Initialization OpenshiftAssistedConfigInitializationStatus `json:"initialization,omitempty,omitzero"`

	// dataSecretName is the name of the secret that stores the bootstrap
	// data.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	DataSecretName string `json:"dataSecretName,omitempty"`

	// bootMode is the boot mode in effect (spec.bootMode, or the one chosen
	// for the infrastructure machine when that is unset).
	// +optional
	BootMode BootMode `json:"bootMode,omitempty"`

	// infraEnvRef names the InfraEnv the machine boots from. Machines made
	// from one Metal3MachineTemplate in LiveISO mode share it.
	// +optional
	InfraEnvRef *LocalObjectReference `json:"infraEnvRef,omitempty"`

	// agentRef names the Agent bound to the machine: the only one the
	// controller approves for it.
	// +optional
	AgentRef *LocalObjectReference `json:"agentRef,omitempty"`

	// observedGeneration is the latest generation observed by the controller.
	// +optional
	// +kubebuilder:validation:Minimum=1
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// OpenshiftAssistedConfig is the bootstrap configuration of one machine
// installed by the OpenShift assisted installer: an InfraEnv, the boot
// artifact that makes the machine register as an Agent, and the Agent's
// binding to the machine.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:resource:path=openshiftassistedconfigs,scope=Namespaced,categories=cluster-api,shortName=oac;oacs
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1alpha2"
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']",description="Cluster"
// +kubebuilder:printcolumn:name="Machine",type="string",JSONPath=".metadata.ownerReferences[?(@.kind==\"Machine\")].name",description="Machine that owns this config"
// +kubebuilder:printcolumn:name="Boot Mode",type="string",JSONPath=".status.bootMode",description="Boot mode in effect"
// +kubebuilder:printcolumn:name="Data Secret Created",type="string",JSONPath=".status.initialization.dataSecretCreated",description="Bootstrap data secret is created"
// +kubebuilder:printcolumn:name="Agent",type="string",JSONPath=".status.agentRef.name",description="Agent bound to the machine"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status",description="Ready condition"
// +kubebuilder:printcolumn:name="Reason",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].reason",description="Ready condition reason"
// +kubebuilder:printcolumn:name="InfraEnv",type="string",JSONPath=".status.infraEnvRef.name",description="InfraEnv the machine boots from",priority=1
// +kubebuilder:printcolumn:name="Paused",type="string",JSONPath=".status.conditions[?(@.type==\"Paused\")].status",description="Reconciliation paused",priority=10
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type OpenshiftAssistedConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec OpenshiftAssistedConfigSpec `json:"spec,omitempty"`
	// +optional
	Status OpenshiftAssistedConfigStatus `json:"status,omitempty"`
}

// GetConditions returns the conditions (CAPI conditions helpers use it).
func (c *OpenshiftAssistedConfig) GetConditions() []metav1.Condition { return c.Status.Conditions }

// SetConditions sets the conditions.
func (c *OpenshiftAssistedConfig) SetConditions(conds []metav1.Condition) {
	c.Status.Conditions = conds
}

// OpenshiftAssistedConfigList is a list of OpenshiftAssistedConfigs.
//
// +kubebuilder:object:root=true
type OpenshiftAssistedConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OpenshiftAssistedConfig `json:"items"`
}

func init() {
	registerTypes(&OpenshiftAssistedConfig{}, &OpenshiftAssistedConfigList{})
}
