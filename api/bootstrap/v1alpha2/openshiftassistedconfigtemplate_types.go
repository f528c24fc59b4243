package v1alpha2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// OpenshiftAssistedConfigTemplateResource is the template of an
// OpenshiftAssistedConfig.
type OpenshiftAssistedConfigTemplateResource struct {
	// metadata given to configs made from this template.
	// +optional
	ObjectMeta clusterv1.ObjectMeta `json:"metadata,omitempty"`

	// spec of the configs.
	// +optional
	Spec OpenshiftAssistedConfigSpec `json:"spec,omitempty"`
}

// OpenshiftAssistedConfigTemplateSpec is the desired state of a template.
type OpenshiftAssistedConfigTemplateSpec struct {
	// template of the OpenshiftAssistedConfigs.
	// +required
	Template OpenshiftAssistedConfigTemplateResource `json:"template"`
}

// OpenshiftAssistedConfigTemplateStatus is empty: a template has no
// observed state.
type OpenshiftAssistedConfigTemplateStatus struct{}

// OpenshiftAssistedConfigTemplate is a template of OpenshiftAssistedConfigs
// for MachineDeployments, MachineSets and ClusterClasses.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:resource:path=openshiftassistedconfigtemplates,scope=Namespaced,categories=cluster-api,shortName=oact
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1alpha2"
// +kubebuilder:printcolumn:name="Boot Mode",type="string",JSONPath=".spec.template.spec.bootMode",description="Boot mode (empty: chosen per infrastructure machine)"
// +kubebuilder:printcolumn:name="ClusterClass",type="string",JSONPath=".metadata.ownerReferences[?(@.kind==\"ClusterClass\")].name",description="ClusterClass owning this template",priority=1
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type OpenshiftAssistedConfigTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec OpenshiftAssistedConfigTemplateSpec `json:"spec,omitempty"`
	// +optional
	Status OpenshiftAssistedConfigTemplateStatus `json:"status,omitempty"`
}

// OpenshiftAssistedConfigTemplateList is a list of templates.
//
// +kubebuilder:object:root=true
type OpenshiftAssistedConfigTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OpenshiftAssistedConfigTemplate `json:"items"`
}

func init() {
	registerTypes(&OpenshiftAssistedConfigTemplate{}, &OpenshiftAssistedConfigTemplateList{})
}
