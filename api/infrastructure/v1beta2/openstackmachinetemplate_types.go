package v1beta2

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// OpenStackMachineTemplateResource is the template of an OpenStackMachine.
type OpenStackMachineTemplateResource struct {
	// metadata given to machines made from this template.
	// +optional
	ObjectMeta clusterv1.ObjectMeta `json:"metadata,omitempty,omitzero"`

	// spec of the machines.
	// +required
	Spec OpenStackMachineSpec `json:"spec"`
}

// OpenStackMachineTemplateSpec is the desired state of a template.
type OpenStackMachineTemplateSpec struct {
	// +required
	Template OpenStackMachineTemplateResource `json:"template"`
}

// NodeInfo describes the nodes a template makes, for scaling from zero.
type NodeInfo struct {
	// operatingSystem of the nodes (linux).
	// +optional
	OperatingSystem string `json:"operatingSystem,omitempty"`
}

// OpenStackMachineTemplateStatus is the observed state of a template.
type OpenStackMachineTemplateStatus struct {
	// capacity of a machine made from this template (cpu, memory,
	// ephemeral-storage), from its flavor, so that the cluster autoscaler
	// can scale a MachineDeployment from zero.
	// +optional
	Capacity corev1.ResourceList `json:"capacity,omitempty"`

	// nodeInfo about the nodes.
	// +optional
	NodeInfo *NodeInfo `json:"nodeInfo,omitempty"`

	// conditions: Ready (summary), CapacityResolved.
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// OpenStackMachineTemplate is a template of OpenStackMachines for
// MachineDeployments, MachineSets and control planes.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:resource:path=openstackmachinetemplates,scope=Namespaced,categories=cluster-api,shortName=osmt
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1beta2"
// +kubebuilder:printcolumn:name="Flavor",type="string",JSONPath=".spec.template.spec.flavor.filter.name",description="Flavor name"
// +kubebuilder:printcolumn:name="CPU",type="string",JSONPath=".status.capacity.cpu",description="vCPUs of the flavor"
// +kubebuilder:printcolumn:name="Memory",type="string",JSONPath=".status.capacity.memory",description="Memory of the flavor"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type OpenStackMachineTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec OpenStackMachineTemplateSpec `json:"spec"`
	// +optional
	Status OpenStackMachineTemplateStatus `json:"status,omitempty"`
}

// GetConditions returns the conditions.
func (t *OpenStackMachineTemplate) GetConditions() []metav1.Condition { return t.Status.Conditions }

// SetConditions sets the conditions.
func (t *OpenStackMachineTemplate) SetConditions(c []metav1.Condition) { t.Status.Conditions = c }

// OpenStackMachineTemplateList is a list of OpenStackMachineTemplates.
//
// +kubebuilder:object:root=true
type OpenStackMachineTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OpenStackMachineTemplate `json:"items"`
}

func init() {
	registerTypes(&OpenStackMachineTemplate{}, &OpenStackMachineTemplateList{})
}
