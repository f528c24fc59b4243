// Package v1alpha2 contains the v1alpha2 API of the OpenShift Assisted
// bootstrap provider (group bootstrap.cluster.x-k8s.io):
// OpenshiftAssistedConfig and OpenshiftAssistedConfigTemplate.
//
// The JSON is that of the reference provider's storage version
// (openshift-assisted/cluster-api-provider-openshift-assisted, v1alpha2), so
// its users' manifests apply unchanged. On top of it this API adds
// spec.bootMode, and its status follows the Cluster API v1beta2 bootstrap
// contract: status.initialization.dataSecretCreated, status.dataSecretName,
// metav1 conditions and observedGeneration, without the reference's
// non-standard status.v1beta1Conditions. docs/bootstrap.md lists every
// difference.
//
// +kubebuilder:object:generate=true
// +groupName=bootstrap.cluster.x-k8s.io
package v1alpha2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of this package.
	GroupVersion = schema.GroupVersion{Group: "bootstrap.cluster.x-k8s.io", Version: "v1alpha2"}

	// SchemeBuilder registers this package's types (see registerTypes). It
	// keeps the package free of controller-runtime, so that it is cheap to
	// import.
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
