/*
Copyright 2026 The ocp-capi Authors.

SPDX-License-Identifier: Apache-2.0
*/

// Package v1alpha1 mirrors BareMetalMachineProviderSpec of
// baremetal.cluster.k8s.io/v1alpha1, the bare-metal provider configuration
// that MAPI carries inside spec.providerSpec.value.
//
// Upstream: github.com/openshift/cluster-api-provider-baremetal, path
// pkg/apis/baremetal/v1alpha1/baremetalmachineproviderspec_types.go at commit
// f2b0db1919fff1344bc68948894c6775c0bf24a3.
//
// A wire-compatible subset written for this project: every field of the spec
// is modelled (image, customDeploy, userData, hostSelector), the List type and
// the provider status are not. JSON names and omitempty follow upstream.
//
// There is no CRD for this type: it only appears embedded in another object.
//
// +kubebuilder:skip
package v1alpha1
