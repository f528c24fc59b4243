/*
Copyright 2026 The ocp-capi Authors.

SPDX-License-Identifier: Apache-2.0
*/

// +kubebuilder:object:generate=true
// +groupName=agent-install.openshift.io

package v1beta1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version mirrored by this package.
	GroupVersion = schema.GroupVersion{Group: "agent-install.openshift.io", Version: "v1beta1"}

	// SchemeGroupVersion is GroupVersion under the name generated clients expect.
	SchemeGroupVersion = GroupVersion

	// SchemeBuilder collects the kinds of this package for a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the kinds of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func init() {
	SchemeBuilder.Register(
		&InfraEnv{}, &InfraEnvList{},
		&Agent{}, &AgentList{},
		&NMStateConfig{}, &NMStateConfigList{},
	)
}
