/*
Copyright 2026 The ocp-capi Authors.

SPDX-License-Identifier: Apache-2.0
*/

// Package consumed gathers the Go types of the external APIs this project
// consumes but does not serve: minimal, wire-compatible subsets of upstream's
// types, one package per group and version below this directory. Each
// package's doc says which upstream repository, path and commit it mirrors
// and what it leaves out.
//
// Their CRDs (generated into test/crds/consumed) are for the test
// environment only, used when the real upstream CRDs are not at hand; they
// are never part of a release.
package consumed

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	agentinstallv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/agentinstall/v1beta1"
	baremetalv1alpha1 "github.com/ocp-capi/ocp-capi/internal/consumed/baremetal/v1alpha1"
	baremetalhostv1alpha1 "github.com/ocp-capi/ocp-capi/internal/consumed/baremetalhost/v1alpha1"
	buildv1 "github.com/ocp-capi/ocp-capi/internal/consumed/build/v1"
	configv1 "github.com/ocp-capi/ocp-capi/internal/consumed/config/v1"
	hivev1 "github.com/ocp-capi/ocp-capi/internal/consumed/hive/v1"
	hiveextv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/hiveext/v1beta1"
	machinev1alpha1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1alpha1"
	machinev1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
	machineconfigurationv1 "github.com/ocp-capi/ocp-capi/internal/consumed/machineconfiguration/v1"
	metal3v1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/metal3/v1beta1"
	orcv1alpha1 "github.com/ocp-capi/ocp-capi/internal/consumed/orc/v1alpha1"
)

// AddToScheme registers every consumed API group and version in s.
func AddToScheme(s *runtime.Scheme) error {
	for _, add := range []func(*runtime.Scheme) error{
		machinev1beta1.AddToScheme,
		machinev1alpha1.AddToScheme,
		baremetalv1alpha1.AddToScheme,
		configv1.AddToScheme,
		machineconfigurationv1.AddToScheme,
		buildv1.AddToScheme,
		agentinstallv1beta1.AddToScheme,
		hiveextv1beta1.AddToScheme,
		hivev1.AddToScheme,
		metal3v1beta1.AddToScheme,
		baremetalhostv1alpha1.AddToScheme,
		orcv1alpha1.AddToScheme,
	} {
		if err := add(s); err != nil {
			return err
		}
	}
	return nil
}

// Kind is a consumed top-level kind that has a CRD: the kinds that live in
// the API server, as opposed to types only ever embedded in other objects
// (such as the MAPI provider specs).
type Kind struct {
	schema.GroupVersionKind
	// Plural is the resource name, as in the CRD's name <plural>.<group>.
	Plural string
	// Namespaced is false for cluster-scoped kinds.
	Namespaced bool
}

// CRDName is the name of the kind's CustomResourceDefinition.
func (k Kind) CRDName() string { return k.Plural + "." + k.Group }

// Kinds lists every consumed kind with a CRD. Tests iterate over it; a test
// checks that it matches the CRDs generated into test/crds/consumed.
var Kinds = []Kind{
	{machinev1beta1.GroupVersion.WithKind("MachineSet"), "machinesets", true},
	{machinev1beta1.GroupVersion.WithKind("Machine"), "machines", true},
	{configv1.GroupVersion.WithKind("Infrastructure"), "infrastructures", false},
	{configv1.GroupVersion.WithKind("ClusterVersion"), "clusterversions", false},
	{machineconfigurationv1.GroupVersion.WithKind("MachineConfigPool"), "machineconfigpools", false},
	{machineconfigurationv1.GroupVersion.WithKind("MachineConfig"), "machineconfigs", false},
	{machineconfigurationv1.GroupVersion.WithKind("MachineOSConfig"), "machineosconfigs", false},
	{machineconfigurationv1.GroupVersion.WithKind("MachineOSBuild"), "machineosbuilds", false},
	{buildv1.GroupVersion.WithKind("Build"), "builds", true},
	{agentinstallv1beta1.GroupVersion.WithKind("InfraEnv"), "infraenvs", true},
	{agentinstallv1beta1.GroupVersion.WithKind("Agent"), "agents", true},
	{agentinstallv1beta1.GroupVersion.WithKind("NMStateConfig"), "nmstateconfigs", true},
	{hiveextv1beta1.GroupVersion.WithKind("AgentClusterInstall"), "agentclusterinstalls", true},
	{hivev1.GroupVersion.WithKind("ClusterDeployment"), "clusterdeployments", true},
	{hivev1.GroupVersion.WithKind("ClusterImageSet"), "clusterimagesets", false},
	{metal3v1beta1.GroupVersion.WithKind("Metal3Cluster"), "metal3clusters", true},
	{metal3v1beta1.GroupVersion.WithKind("Metal3Machine"), "metal3machines", true},
	{metal3v1beta1.GroupVersion.WithKind("Metal3MachineTemplate"), "metal3machinetemplates", true},
	{baremetalhostv1alpha1.GroupVersion.WithKind("BareMetalHost"), "baremetalhosts", true},
	{orcv1alpha1.GroupVersion.WithKind("Image"), "images", true},
}
