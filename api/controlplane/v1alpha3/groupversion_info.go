// Package v1alpha3 contains the v1alpha3 API of the OpenShift Assisted
// control-plane provider (group controlplane.cluster.x-k8s.io):
// OpenshiftAssistedControlPlane and OpenshiftAssistedControlPlaneTemplate.
//
// The JSON is that of the reference provider's storage version
// (openshift-assisted/cluster-api-provider-openshift-assisted, v1alpha3), so
// its users' manifests apply unchanged. On top of it this API adds
// spec.version (the Kubernetes version), spec.config.releaseImage,
// spec.openshiftAssistedConfigSpec.bootMode (the bootstrap API's), the
// status references to the ClusterDeployment and the ClusterImageSet, and the
// OpenshiftAssistedControlPlaneTemplate kind for ClusterClasses, which the
// reference lacks. docs/controlplane.md lists every difference and
// api/controlplane/compat_test.go checks them against the reference's CRD.
//
// +kubebuilder:object:generate=true
// +groupName=controlplane.cluster.x-k8s.io
package v1alpha3

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of this package.
	GroupVersion = schema.GroupVersion{Group: "controlplane.cluster.x-k8s.io", Version: "v1alpha3"}

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
