// Package v1beta2 contains the v1beta2 API of the OpenStack infrastructure
// provider (group infrastructure.cluster.x-k8s.io): OpenStackMachine and
// OpenStackMachineTemplate, and the types they share with OpenStackServer.
//
// The JSON is that of Cluster API Provider OpenStack's (CAPO) v1beta2 API, so
// existing CAPO manifests apply unchanged. Fields that CAPO has and this
// provider does not implement yet are kept in the schema but rejected by
// validation, never silently dropped; docs/openstack/capo-support.md lists
// them.
//
// +kubebuilder:object:generate=true
// +groupName=infrastructure.cluster.x-k8s.io
package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of this package.
	GroupVersion = schema.GroupVersion{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta2"}

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
