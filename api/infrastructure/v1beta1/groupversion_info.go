// Package v1beta1 serves Cluster API Provider OpenStack's (CAPO) v1beta1 API
// of OpenStackCluster, OpenStackClusterTemplate, OpenStackMachine and
// OpenStackMachineTemplate: the version CAPO v0.13 and v0.14 serve and
// store, so that CAPO users' manifests, ClusterClasses and stored objects
// work unchanged.
//
// Nothing reconciles these types: the storage version, and the version the
// controllers use, is v1beta2 (api/infrastructure/v1beta2, the hub). Every
// object read or written at v1beta1 is converted by the conversion webhook
// of the infrastructure-manager (conversion.go). What v1beta2 cannot hold
// survives in the annotation cluster.x-k8s.io/conversion-data, so round
// trips in either direction lose nothing. docs/openstack/v1beta1.md lists
// the field mapping.
//
// The JSON, list types, enums, defaults and CEL rules are CAPO's, checked
// against CAPO's CRDs by api/infrastructure/compat_test.go.
//
// +kubebuilder:object:generate=true
// +groupName=infrastructure.cluster.x-k8s.io
package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of this package.
	GroupVersion = schema.GroupVersion{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1"}

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
