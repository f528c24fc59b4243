package v1alpha3

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	bootstrapv1 "github.com/ocp-capi/ocp-capi/api/bootstrap/v1alpha2"
)

// OpenshiftAssistedControlPlaneMachineTemplate is how control-plane Machines
// are made.
type OpenshiftAssistedControlPlaneMachineTemplate struct {
	// metadata is given to the Machines: labels and annotations.
	// +optional
	ObjectMeta clusterv1.ObjectMeta `json:"metadata,omitempty,omitzero"`

	// infrastructureRef is the infrastructure machine template (for
	// example a Metal3MachineTemplate) each control-plane Machine's
	// infrastructure machine is cloned from. A control plane requires it
	// (a rule on its spec); a control-plane template leaves it out, since
	// a ClusterClass's topology sets it from the class's
	// machineInfrastructure.
	// +optional
	InfrastructureRef clusterv1.ContractVersionedObjectReference `json:"infrastructureRef,omitempty,omitzero"`

	// deletion contains configuration options for Machine deletion. It is
	// applied to existing Machines too, without replacing them.
	// +optional
	// +kubebuilder:default={nodeDeletionTimeoutSeconds: 10}
	Deletion clusterv1.MachineDeletionSpec `json:"deletion,omitempty,omitzero"`
}

// OpenshiftAssistedControlPlaneSpec is the desired control plane: the
// OpenShift version, the number of control-plane Machines, how they are
// made, and the cluster's install-time configuration.
type OpenshiftAssistedControlPlaneSpec struct {
	// config is the cluster's install-time configuration, copied into the
	// ClusterDeployment and the AgentClusterInstall.
	// +optional
	Config OpenshiftAssistedControlPlaneConfigSpec `json:"config,omitempty"`

	// machineTemplate is how control-plane Machines are made. A control
	// plane requires it, with its infrastructureRef (a rule on its spec).
	// +optional
	MachineTemplate OpenshiftAssistedControlPlaneMachineTemplate `json:"machineTemplate,omitempty,omitzero"`

	// openshiftAssistedConfigSpec is the bootstrap configuration of every
	// control-plane Machine (its OpenshiftAssistedConfig's spec).
	// +optional
	OpenshiftAssistedConfigSpec bootstrapv1.OpenshiftAssistedConfigSpec `json:"openshiftAssistedConfigSpec,omitempty"`

	// replicas is the number of control-plane Machines: 1 (single-node
	// OpenShift), 3, 4 or 5 (4 and 5 need OpenShift 4.18 or later). Default
	// 3. It cannot change between 1 and more than 1.
	//
	// The allowed values are checked by the schema, not a webhook, because
	// the scale subresource (kubectl scale) bypasses admission webhooks
	// registered for the main resource.
	// +optional
	// +kubebuilder:default=3
	// +kubebuilder:validation:XValidation:rule="self == 1 || (self >= 3 && self <= 5)",message="an OpenShift control plane has 1 (single-node OpenShift), 3, 4 or 5 nodes"
	Replicas *int32 `json:"replicas,omitempty"`

	// distributionVersion is the OpenShift version, such as 4.19.0 or
	// 4.19.0-okd-scos.ec.6 (4.14 or later). Before the installation starts it
	// is the version installed; once the cluster is installed, changing it
	// upgrades the cluster through its ClusterVersion.
	// +required
	DistributionVersion string `json:"distributionVersion"`

	// version is the Kubernetes version of the control plane, such as
	// v1.32.0. It overrides the version status.version reports, which is
	// otherwise derived from distributionVersion by a built-in table
	// (v1.<minor>.0 of the Kubernetes minor the OpenShift minor ships): set
	// it for OpenShift versions the table does not know yet, or to report
	// the exact patch release. It installs nothing: distributionVersion
	// does. The release image is not pulled to check it; the webhook checks
	// that its minor is the table's for distributionVersion.
	//
	// It is CAPI's control-plane contract field spec.version, which a
	// ClusterClass topology sets from Cluster spec.topology.version; the
	// topology controller cannot manage a control plane without it. (The Go
	// field keeps the name KubernetesVersion, which says what it is.)
	// +optional
	// +kubebuilder:validation:Pattern=`^v?(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)([-+][0-9A-Za-z.+-]+)?$`
	// +kubebuilder:validation:MaxLength=256
	KubernetesVersion string `json:"version,omitempty"`
}

// OpenshiftAssistedControlPlaneConfigSpec is the cluster's install-time
// configuration: the AgentClusterInstall's and the ClusterDeployment's.
type OpenshiftAssistedControlPlaneConfigSpec struct {
	// apiVIPs are the virtual IPs used to reach the OpenShift cluster's
	// API: one IP for single-stack clusters, or up to two for dual-stack
	// clusters (at most one per IP stack, in the order of the cluster's
	// networks). With ingressVIPs they make the AgentClusterInstall's
	// platform BareMetal; without, None.
	// +kubebuilder:validation:MaxItems=2
	// +optional
	APIVIPs []string `json:"apiVIPs,omitempty"`

	// ingressVIPs are the virtual IPs used for cluster ingress traffic, as
	// apiVIPs.
	// +kubebuilder:validation:MaxItems=2
	// +optional
	IngressVIPs []string `json:"ingressVIPs,omitempty"`

	// manifestsConfigMapRefs are ConfigMaps of manifests that add to or
	// replace the installer's. Manifest names must be unique across them.
	// +optional
	ManifestsConfigMapRefs []ManifestsConfigMapReference `json:"manifestsConfigMapRefs,omitempty"`

	// diskEncryption enables disk encryption of the cluster's nodes.
	// +optional
	DiskEncryption *DiskEncryption `json:"diskEncryption,omitempty"`

	// proxy is the installed cluster's proxy.
	// +optional
	Proxy *Proxy `json:"proxy,omitempty"`

	// mastersSchedulable makes the control-plane nodes schedulable for
	// workloads.
	// +optional
	MastersSchedulable bool `json:"mastersSchedulable,omitempty"`

	// sshAuthorizedKey is the SSH key for accessing the installed nodes.
	// +optional
	SSHAuthorizedKey string `json:"sshAuthorizedKey,omitempty"`

	// clusterName is the friendly name of the cluster, used in its DNS
	// names (api.<clusterName>.<baseDomain>). Default: the CAPI Cluster's
	// name. It cannot change.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	ClusterName string `json:"clusterName"`

	// baseDomain is the base domain of the cluster, such as example.com.
	// It cannot change.
	// +required
	// +kubebuilder:validation:MaxLength=253
	BaseDomain string `json:"baseDomain"`

	// pullSecretRef names the Secret (type kubernetes.io/dockerconfigjson)
	// used to pull the release. Unset (OKD): a placeholder Secret is made.
	// +optional
	PullSecretRef *corev1.LocalObjectReference `json:"pullSecretRef,omitempty"`

	// imageRegistryRef names a ConfigMap with registries.conf (mirrors) and
	// optionally ca-bundle.crt for the installed cluster; it becomes the
	// AgentClusterInstall's mirrorRegistryRef.
	// +optional
	ImageRegistryRef *corev1.LocalObjectReference `json:"imageRegistryRef,omitempty"`

	// capabilities are the OpenShift capabilities set at installation.
	// +optional
	Capabilities Capabilities `json:"capabilities,omitempty"`

	// releaseImage overrides the release image pullspec (tag or digest) of
	// distributionVersion, e.g. a mirror. When unset it is
	// quay.io/openshift-release-dev/ocp-release:<version>-<arch>, or
	// quay.io/okd/scos-release:<version> for OKD versions. It must be the
	// release of distributionVersion: change both together.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	ReleaseImage string `json:"releaseImage,omitempty"`
}

// ManifestsConfigMapReference names a ConfigMap of install manifests.
type ManifestsConfigMapReference struct {
	// name of the ConfigMap, in the control plane's namespace.
	Name string `json:"name"`
}

// DiskEncryption configures encryption of the installed disks (the
// AgentClusterInstall's).
type DiskEncryption struct {
	// enableOn is none, all, or the roles whose disks are encrypted.
	// +kubebuilder:default=none
	// +kubebuilder:validation:Enum=none;all;masters;arbiters;workers;"masters,arbiters";"masters,workers";"arbiters,workers";"masters,arbiters,workers"
	// +optional
	EnableOn *string `json:"enableOn,omitempty"`
	// mode is the disk encryption mode.
	// +kubebuilder:validation:Enum=tpmv2;tang
	// +optional
	Mode *string `json:"mode,omitempty"`
	// tangServers is a JSON list of tang servers.
	// +optional
	TangServers string `json:"tangServers,omitempty"`
}

// Proxy is the installed cluster's proxy.
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

// Capabilities are the OpenShift capabilities set at installation.
type Capabilities struct {
	// baselineCapability is the base set: vCurrent, v4.x or None. Default:
	// None for a BareMetal platform (with the capabilities a bare-metal
	// cluster managed by Cluster API needs added), else vCurrent.
	// +optional
	BaselineCapability string `json:"baselineCapability,omitempty"`

	// additionalEnabledCapabilities are enabled on top of the baseline.
	// MachineAPI is dropped on BareMetal: Cluster API manages the machines.
	// +optional
	AdditionalEnabledCapabilities []string `json:"additionalEnabledCapabilities,omitempty"`
}

// OpenshiftAssistedControlPlaneInitializationStatus is the Cluster API
// contract's initialization status of a control plane.
// +kubebuilder:validation:MinProperties=1
type OpenshiftAssistedControlPlaneInitializationStatus struct {
	// controlPlaneInitialized is true once the control plane accepts
	// requests: the AgentClusterInstall reached finalizing (or later) and
	// <cluster>-kubeconfig exists. It never goes back to false.
	// NOTE: this field is part of the Cluster API contract, and it is used
	// to orchestrate initial Machine provisioning.
	// +optional
	ControlPlaneInitialized *bool `json:"controlPlaneInitialized,omitempty"`
}

// LocalObjectReference names an object.
type LocalObjectReference struct {
	// name of the object.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`
}

// OpenshiftAssistedControlPlaneStatus is the observed state of a control
// plane (Cluster API v1beta2 control-plane contract).
type OpenshiftAssistedControlPlaneStatus struct {
	// conditions: Ready (summary of Available, KubeconfigAvailable,
	// MachinesCreated, MachinesReady), Available, KubeconfigAvailable,
	// MachinesCreated, MachinesReady, UpgradeCompleted,
	// KubernetesVersionAvailable and Paused.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// initialization provides observations of the control plane's
	// initialization process.
	// NOTE: Fields in this struct are part of the Cluster API contract and
	// are used to orchestrate initial Machine provisioning.
	// +optional
	Initialization OpenshiftAssistedControlPlaneInitializationStatus `json:"initialization,omitempty,omitzero"`

	// selector is the label selector of the control-plane Machines, in
	// query-param syntax (scale subresource).
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	Selector string `json:"selector,omitempty"`

	// replicas is the number of control-plane Machines (deleting ones
	// included).
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// readyReplicas is the number of Machines whose Ready condition is
	// true.
	// +optional
	ReadyReplicas *int32 `json:"readyReplicas,omitempty"`

	// availableReplicas is the number of Machines whose Available condition
	// is true.
	// +optional
	AvailableReplicas *int32 `json:"availableReplicas,omitempty"`

	// upToDateReplicas is the number of Machines whose UpToDate condition is
	// true: their bootstrap configuration is spec.openshiftAssistedConfigSpec
	// and their infrastructure machine was cloned from
	// spec.machineTemplate.infrastructureRef.
	// +optional
	UpToDateReplicas *int32 `json:"upToDateReplicas,omitempty"`

	// version is the minimum Kubernetes version of the control-plane
	// machines: spec.version, else the built-in table's version
	// for the installed OpenShift version.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Version string `json:"version,omitempty"`

	// distributionVersion is the OpenShift version installed: the version
	// installed on day 1, then the latest update the workload cluster's
	// ClusterVersion completed.
	// +optional
	DistributionVersion string `json:"distributionVersion,omitempty"`

	// clusterDeploymentRef names the hive ClusterDeployment of the cluster,
	// in the control plane's namespace.
	// +optional
	ClusterDeploymentRef *LocalObjectReference `json:"clusterDeploymentRef,omitempty"`

	// clusterImageSetRef names the cluster-scoped ClusterImageSet with the
	// release image the cluster is installed from.
	// +optional
	ClusterImageSetRef *LocalObjectReference `json:"clusterImageSetRef,omitempty"`

	// observedGeneration is the latest generation observed by the
	// controller.
	// +optional
	// +kubebuilder:validation:Minimum=1
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// OpenshiftAssistedControlPlane is the control plane of an OpenShift
// cluster installed by the assisted installer: the hive ClusterDeployment,
// ClusterImageSet and AgentClusterInstall, the control-plane Machines, the
// cluster's kubeconfig, and in-place upgrades through its ClusterVersion.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:resource:path=openshiftassistedcontrolplanes,scope=Namespaced,categories=cluster-api,shortName=oacp;oacps
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1alpha3_v1beta1"
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']",description="Cluster"
// +kubebuilder:printcolumn:name="Initialized",type=boolean,JSONPath=".status.initialization.controlPlaneInitialized",description="This denotes whether or not the control plane has been initialized"
// +kubebuilder:printcolumn:name="Desired",type=integer,JSONPath=".spec.replicas",description="Total number of machines desired by this control plane",priority=10
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=".status.replicas",description="Total number of non-terminated machines targeted by this control plane"
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=".status.readyReplicas",description="Total number of fully running and ready control plane machines"
// +kubebuilder:printcolumn:name="Up-To-Date",type=integer,JSONPath=".status.upToDateReplicas",description="Total number of up-to-date replicas targeted by this control plane"
// +kubebuilder:printcolumn:name="Available",type=integer,JSONPath=".status.availableReplicas",description="Total number of available machines targeted by this control plane"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time duration since creation of OpenshiftAssistedControlPlane"
// +kubebuilder:printcolumn:name="Distribution Version",type=string,JSONPath=".spec.distributionVersion",description="OpenShift version associated with this control plane"
// +kubebuilder:printcolumn:name="Installed Version",type=string,JSONPath=".status.distributionVersion",description="OpenShift version installed",priority=1
// +kubebuilder:printcolumn:name="Kubernetes",type=string,JSONPath=".status.version",description="Kubernetes version",priority=1
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=".status.conditions[?(@.type==\"Ready\")].reason",description="Ready condition reason",priority=1
// +kubebuilder:printcolumn:name="Paused",type="string",JSONPath=".status.conditions[?(@.type==\"Paused\")].status",description="Reconciliation paused",priority=10
type OpenshiftAssistedControlPlane struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired control plane. The rules below are the control
	// plane's only, not its template's: it names its infrastructure machine
	// template (which a template may leave to a ClusterClass); and, as
	// transition rules (a template stays mutable), the cluster's DNS names
	// and its control-plane topology are fixed at creation. They live in
	// the schema so that they hold through the scale subresource and
	// without the webhook; what depends on the status (the installed
	// version, the installation having started) is the webhook's.
	// +optional
	// +kubebuilder:validation:XValidation:rule="has(self.machineTemplate) && has(self.machineTemplate.infrastructureRef)",message="name the infrastructure machine template (such as a Metal3MachineTemplate) that each control-plane Machine's infrastructure machine is cloned from",fieldPath=".machineTemplate.infrastructureRef",reason=FieldValueRequired
	// +kubebuilder:validation:XValidation:rule="(has(self.config) && has(self.config.baseDomain) ? self.config.baseDomain : '') == (has(oldSelf.config) && has(oldSelf.config.baseDomain) ? oldSelf.config.baseDomain : '')",message="the base domain is part of the cluster's DNS names and cannot change",fieldPath=".config.baseDomain",reason=FieldValueForbidden
	// +kubebuilder:validation:XValidation:rule="(has(self.config) && has(self.config.clusterName) ? self.config.clusterName : '') == (has(oldSelf.config) && has(oldSelf.config.clusterName) ? oldSelf.config.clusterName : '')",message="the cluster name is part of the cluster's DNS names and cannot change",fieldPath=".config.clusterName",reason=FieldValueForbidden
	// +kubebuilder:validation:XValidation:rule="((has(self.replicas) ? self.replicas : 3) == 1) == ((has(oldSelf.replicas) ? oldSelf.replicas : 3) == 1)",message="a single-node control plane cannot become highly available, nor the other way round: replicas cannot change between 1 and more than 1",fieldPath=".replicas",reason=FieldValueForbidden
	Spec OpenshiftAssistedControlPlaneSpec `json:"spec,omitempty"`
	// +optional
	Status OpenshiftAssistedControlPlaneStatus `json:"status,omitempty"`
}

// GetConditions returns the conditions (CAPI conditions helpers use it).
func (c *OpenshiftAssistedControlPlane) GetConditions() []metav1.Condition {
	return c.Status.Conditions
}

// SetConditions sets the conditions.
func (c *OpenshiftAssistedControlPlane) SetConditions(conds []metav1.Condition) {
	c.Status.Conditions = conds
}

// DesiredReplicas is spec.replicas, 3 when unset.
func (c *OpenshiftAssistedControlPlane) DesiredReplicas() int32 {
	if c.Spec.Replicas == nil {
		return DefaultReplicas
	}
	return *c.Spec.Replicas
}

// DefaultReplicas is the number of control-plane Machines when
// spec.replicas is unset: OpenShift's highly available control plane.
const DefaultReplicas int32 = 3

// OpenshiftAssistedControlPlaneList is a list of control planes.
//
// +kubebuilder:object:root=true
type OpenshiftAssistedControlPlaneList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OpenshiftAssistedControlPlane `json:"items"`
}

func init() {
	registerTypes(&OpenshiftAssistedControlPlane{}, &OpenshiftAssistedControlPlaneList{})
}
