package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	bootstrapv1 "github.com/ocp-capi/ocp-capi/api/bootstrap/v1alpha2"
	controlplanev1 "github.com/ocp-capi/ocp-capi/api/controlplane/v1alpha3"
)

// OpenshiftAssistedControlPlaneMachineTemplate is how control-plane Machines
// are made, in the layout of Cluster API's v1beta2 control-plane contract
// (the one KubeadmControlPlane v1beta2 has).
type OpenshiftAssistedControlPlaneMachineTemplate struct {
	// metadata is given to the Machines: labels and annotations.
	// +optional
	ObjectMeta clusterv1.ObjectMeta `json:"metadata,omitempty,omitzero"`

	// spec is how the Machines are made. A ClusterClass's topology sets
	// its infrastructureRef to its clone of the class's
	// machineInfrastructure template. A control plane requires it, with
	// its infrastructureRef (a rule on its spec).
	// +optional
	Spec OpenshiftAssistedControlPlaneMachineTemplateSpec `json:"spec,omitempty,omitzero"`
}

// OpenshiftAssistedControlPlaneMachineTemplateSpec is the spec of the
// control-plane Machines.
type OpenshiftAssistedControlPlaneMachineTemplateSpec struct {
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
	Config controlplanev1.OpenshiftAssistedControlPlaneConfigSpec `json:"config,omitempty"`

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

// OpenshiftAssistedControlPlane is the control plane of an OpenShift
// cluster installed by the assisted installer: the hive ClusterDeployment,
// ClusterImageSet and AgentClusterInstall, the control-plane Machines, the
// cluster's kubeconfig, and in-place upgrades through its ClusterVersion.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
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
	// +kubebuilder:validation:XValidation:rule="has(self.machineTemplate) && has(self.machineTemplate.spec) && has(self.machineTemplate.spec.infrastructureRef)",message="name the infrastructure machine template (such as a Metal3MachineTemplate) that each control-plane Machine's infrastructure machine is cloned from",fieldPath=".machineTemplate.spec.infrastructureRef",reason=FieldValueRequired
	// +kubebuilder:validation:XValidation:rule="(has(self.config) && has(self.config.baseDomain) ? self.config.baseDomain : '') == (has(oldSelf.config) && has(oldSelf.config.baseDomain) ? oldSelf.config.baseDomain : '')",message="the base domain is part of the cluster's DNS names and cannot change",fieldPath=".config.baseDomain",reason=FieldValueForbidden
	// +kubebuilder:validation:XValidation:rule="(has(self.config) && has(self.config.clusterName) ? self.config.clusterName : '') == (has(oldSelf.config) && has(oldSelf.config.clusterName) ? oldSelf.config.clusterName : '')",message="the cluster name is part of the cluster's DNS names and cannot change",fieldPath=".config.clusterName",reason=FieldValueForbidden
	// +kubebuilder:validation:XValidation:rule="((has(self.replicas) ? self.replicas : 3) == 1) == ((has(oldSelf.replicas) ? oldSelf.replicas : 3) == 1)",message="a single-node control plane cannot become highly available, nor the other way round: replicas cannot change between 1 and more than 1",fieldPath=".replicas",reason=FieldValueForbidden
	Spec OpenshiftAssistedControlPlaneSpec `json:"spec,omitempty"`
	// +optional
	Status controlplanev1.OpenshiftAssistedControlPlaneStatus `json:"status,omitempty"`
}

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
