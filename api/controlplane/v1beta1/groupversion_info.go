// Package v1beta1 is the v1beta1 API of the control-plane provider (group
// controlplane.cluster.x-k8s.io): OpenshiftAssistedControlPlane and
// OpenshiftAssistedControlPlaneTemplate with the machine template in the
// layout of Cluster API's v1beta2 control-plane contract, which a
// ClusterClass's topology controller writes:
// spec.machineTemplate.spec.infrastructureRef and
// spec.machineTemplate.spec.deletion (v1alpha3 has them one level up).
// Everything else is v1alpha3's, field for field.
//
// v1beta1 is served, not stored: v1alpha3 is the storage version and the
// conversion hub, and the only version the controllers read. The
// conversion (conversion.go) is lossless both ways without annotations.
//
// +kubebuilder:object:generate=true
// +groupName=controlplane.cluster.x-k8s.io
package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of this package.
	GroupVersion = schema.GroupVersion{Group: "controlplane.cluster.x-k8s.io", Version: "v1beta1"}

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
