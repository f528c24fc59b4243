/*
Copyright 2026 The ocp-capi Authors.

SPDX-License-Identifier: Apache-2.0
*/

// Package v1alpha1 mirrors OpenstackProviderSpec of machine.openshift.io/v1alpha1,
// the OpenStack provider configuration that MAPI carries inside a Machine's
// or MachineSet template's spec.providerSpec.value.
//
// Upstream: github.com/openshift/api, path machine/v1alpha1/types_openstack.go
// at commit 2a3d73913b5a7caec4c57d5c3d04f51106ec4da3.
//
// Unlike the other consumed packages this one models every field upstream
// has, including the deprecated ones, because the MAPI to CAPI conversion must
// map or reject each of them: a field missing here would be dropped silently.
// Only the List type and the constants not needed by the conversion are left
// out. The JSON names, omitempty and pointer-ness follow upstream's Go types.
//
// There is no CRD for this type: it only ever appears embedded in another
// object. It is registered in a scheme so that providerSpec.value can be
// decoded by kind.
//
// +kubebuilder:skip
package v1alpha1
