package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OpenStackCredentialSecretReference names a Secret in any namespace.
type OpenStackCredentialSecretReference struct {
	// name of the Secret. It must hold a clouds.yaml key and may hold
	// cacert.
	// +required
	Name string `json:"name"`
	// namespace of the Secret.
	// +required
	Namespace string `json:"namespace"`
}

// OpenStackClusterIdentitySpec says where the credentials are and who may
// use them.
type OpenStackClusterIdentitySpec struct {
	// secretRef is the Secret with the credentials (clouds.yaml, optionally
	// cacert). Only the infrastructure-manager reads it, and only for
	// objects of namespaces that namespaceSelector allows.
	// +required
	SecretRef OpenStackCredentialSecretReference `json:"secretRef"`

	// namespaceSelector selects the namespaces whose objects may use this
	// identity (identityRef.type: ClusterIdentity). Unset: every namespace;
	// an empty selector also matches every namespace.
	// +optional
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`
}

// OpenStackClusterIdentity is cluster-scoped OpenStack credentials that
// objects of the namespaces it allows name with identityRef.type:
// ClusterIdentity, so that a tenant's namespace does not hold the Secret.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=openstackclusteridentities,scope=Cluster,categories=cluster-api,shortName=osci
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1alpha1"
type OpenStackClusterIdentity struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec OpenStackClusterIdentitySpec `json:"spec,omitempty"`
}

// OpenStackClusterIdentityList is a list of OpenStackClusterIdentities.
//
// +kubebuilder:object:root=true
type OpenStackClusterIdentityList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OpenStackClusterIdentity `json:"items"`
}

func init() {
	registerTypes(&OpenStackClusterIdentity{}, &OpenStackClusterIdentityList{})
}
