/*
Copyright 2026 The ocp-capi Authors.

SPDX-License-Identifier: Apache-2.0
*/

// Package v1alpha1 mirrors a subset of the bare-metal operator's
// metal3.io/v1alpha1 API: BareMetalHost.
//
// Upstream: github.com/metal3-io/baremetal-operator, path
// apis/metal3.io/v1alpha1/baremetalhost_types.go at commit
// 02aa5059e3482f9dc3b5115c3a45cec4b000ae16.
//
// This is a wire-compatible subset written for this project. JSON names,
// omitempty and pointer-ness follow upstream's Go types. Upstream's status
// has several fields without omitempty that its CRD requires
// (operationalStatus, provisioning with state and ID, errorMessage,
// poweredOn, errorCount, provisioningFailCount); they are all modelled, so
// that a status write made with these types passes validation. Not modelled,
// among others: spec taints, raid, firmware, rootDeviceHints,
// preprovisioningNetworkDataName, networkInterfaces, and status hardware,
// credentials, operationHistory and conditions. Writers must patch, so that
// those fields survive.
package v1alpha1
