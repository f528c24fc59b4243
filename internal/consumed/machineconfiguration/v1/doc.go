/*
Copyright 2026 The ocp-capi Authors.

SPDX-License-Identifier: Apache-2.0
*/

// Package v1 mirrors a subset of machineconfiguration.openshift.io/v1, the
// Machine Config Operator's API: MachineConfigPool, MachineConfig,
// MachineOSConfig and MachineOSBuild, all cluster-scoped.
//
// Upstream: github.com/openshift/api, paths machineconfiguration/v1/types.go,
// types_machineosconfig.go and types_machineosbuild.go at commit 2a3d73913b5a7caec4c57d5c3d04f51106ec4da3.
//
// This is a wire-compatible subset written for this project. JSON names,
// omitempty and pointer-ness follow upstream's Go types, which write many
// fields even when empty (paused, the machine counts, the condition fields,
// most MachineConfig spec fields). Not modelled: pinnedImageSets,
// osImageStream, certExpirys, poolSynchronizersStatus and MachineConfig
// baseOSExtensionsContainerImage. Writers must patch, so that those fields
// survive.
package v1
