package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// OpenshiftAssistedControlPlaneTemplateResource is the template of an
// OpenshiftAssistedControlPlane.
type OpenshiftAssistedControlPlaneTemplateResource struct {
	// metadata given to control planes made from this template.
	// +optional
	ObjectMeta clusterv1.ObjectMeta `json:"metadata,omitempty,omitzero"`

	// spec of the control planes. A ClusterClass's topology sets replicas
	// (spec.topology.controlPlane.replicas); the rest comes from here and
	// the ClusterClass's patches.
	// +required
	Spec OpenshiftAssistedControlPlaneSpec `json:"spec"`
}

// OpenshiftAssistedControlPlaneTemplateSpec is the desired state of a
// template.
type OpenshiftAssistedControlPlaneTemplateSpec struct {
	// template of the control planes.
	// +required
	Template OpenshiftAssistedControlPlaneTemplateResource `json:"template"`
}

// OpenshiftAssistedControlPlaneTemplate is a template of
// OpenshiftAssistedControlPlanes, for ClusterClasses (the reference provider
// has none).
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=openshiftassistedcontrolplanetemplates,scope=Namespaced,categories=cluster-api,shortName=oacpt;oacpts
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1alpha3_v1beta1"
// +kubebuilder:printcolumn:name="Distribution Version",type=string,JSONPath=".spec.template.spec.distributionVersion",description="OpenShift version"
// +kubebuilder:printcolumn:name="ClusterClass",type="string",JSONPath=".metadata.ownerReferences[?(@.kind==\"ClusterClass\")].name",description="ClusterClass owning this template",priority=1
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type OpenshiftAssistedControlPlaneTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec OpenshiftAssistedControlPlaneTemplateSpec `json:"spec,omitempty"`
}

// OpenshiftAssistedControlPlaneTemplateList is a list of templates.
//
// +kubebuilder:object:root=true
type OpenshiftAssistedControlPlaneTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OpenshiftAssistedControlPlaneTemplate `json:"items"`
}

func init() {
	registerTypes(&OpenshiftAssistedControlPlaneTemplate{}, &OpenshiftAssistedControlPlaneTemplateList{})
}
