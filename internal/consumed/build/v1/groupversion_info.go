/*
Copyright 2026 The ocp-capi Authors.

SPDX-License-Identifier: Apache-2.0
*/

// +kubebuilder:object:generate=true
// +kubebuilder:validation:Optional
// +groupName=build.openshift.io

package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version mirrored by this package.
	GroupVersion = schema.GroupVersion{Group: "build.openshift.io", Version: "v1"}

	// SchemeGroupVersion is GroupVersion under the name generated clients expect.
	SchemeGroupVersion = GroupVersion

	// SchemeBuilder registers this package's types (see registerTypes).
	SchemeBuilder = runtime.NewSchemeBuilder(func(s *runtime.Scheme) error {
		s.AddKnownTypes(GroupVersion, knownTypes...)
		metav1.AddToGroupVersion(s, GroupVersion)
		return nil
	})

	// knownTypes are the types registerTypes collected.
	knownTypes []runtime.Object

	// AddToScheme adds the kinds of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func init() {
	registerTypes(&Build{}, &BuildList{})
}

// registerTypes adds types to those SchemeBuilder registers.
func registerTypes(objs ...runtime.Object) { knownTypes = append(knownTypes, objs...) }
