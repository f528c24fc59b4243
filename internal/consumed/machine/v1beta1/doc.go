/*
Copyright 2026 The ocp-capi Authors.

SPDX-License-Identifier: Apache-2.0
*/

// Package v1beta1 mirrors a subset of the Machine API (MAPI) group
// machine.openshift.io/v1beta1: MachineSet and Machine.
//
// Upstream: github.com/openshift/api, path machine/v1beta1
// (types_machineset.go, types_machine.go, types_provider.go) at commit
// 2a3d73913b5a7caec4c57d5c3d04f51106ec4da3. The schemas of reference are the
// TechPreviewNoUpgrade CRD manifests of that commit, which carry the
// MachineAPIMigration fields (spec.authoritativeAPI, status.authoritativeAPI,
// status.synchronizedAPI, status.synchronizedGeneration).
//
// This is a wire-compatible subset, written for this project: the JSON names,
// omitempty and pointer-ness follow upstream's Go types, but only the fields
// our controllers read or write are modelled. Notably absent: Machine
// status.lastOperation. Code that writes objects of these kinds must patch,
// so that fields we do not model survive.
package v1beta1
