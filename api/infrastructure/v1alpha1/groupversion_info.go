// Package v1alpha1 contains the v1alpha1 API of the OpenStack provider:
// OpenStackServer, one Nova server with its ports, trunks and volumes,
// created for an OpenStackMachine or for the cluster's bastion.
//
// Its JSON is CAPO's v1alpha1 OpenStackServer spec. The status differs by
// design (v1beta2 contract): it has initialization.provisioned, addresses,
// a Ready summary condition and the volumes and MAC addresses of what was
// created, and no status.ready.
//
// +kubebuilder:object:generate=true
// +groupName=infrastructure.cluster.x-k8s.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of this package.
	GroupVersion = schema.GroupVersion{Group: "infrastructure.cluster.x-k8s.io", Version: "v1alpha1"}

	// SchemeBuilder registers this package's types (see registerTypes).
	SchemeBuilder = runtime.NewSchemeBuilder(func(s *runtime.Scheme) error {
		s.AddKnownTypes(GroupVersion, knownTypes...)
		metav1.AddToGroupVersion(s, GroupVersion)
		return nil
	})

	// knownTypes are the types registerTypes collected.
	knownTypes []runtime.Object

	// AddToScheme adds this package's types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// registerTypes adds types to those SchemeBuilder registers.
func registerTypes(objs ...runtime.Object) { knownTypes = append(knownTypes, objs...) }
