/*
Copyright 2026 The ocp-capi Authors.

SPDX-License-Identifier: Apache-2.0
*/

// Package v1beta1 mirrors a subset of the Metal3 infrastructure provider's
// infrastructure.cluster.x-k8s.io/v1beta1 API: Metal3Cluster, Metal3Machine
// and Metal3MachineTemplate.
//
// Upstream: github.com/metal3-io/cluster-api-provider-metal3, path
// api/v1beta1 (metal3cluster_types.go, metal3machine_types.go,
// metal3machinetemplate_types.go, common_types.go) at commit
// 2f6d76b88b8a20f3030e8c6e00f4c441bb46825b. JSON names, omitempty and
// pointer-ness follow upstream's Go types.
//
// # Only what v1beta1 and v1beta2 share
//
// At that commit the CRDs serve v1beta1 and v1beta2 and store v1beta2. The
// CRD files in config/crd/bases carry no conversion stanza (strategy None);
// CAPM3's kustomize adds a conversion webhook for real deployments, but a
// test API server that installs the bare CRDs converts by relabelling the
// apiVersion only, and prunes the object against the v1beta2 schema before
// storing it. A v1beta1 field that v1beta2 lacks, or spells differently, is
// then silently dropped. So this package models only fields whose path and
// type are the same in both versions. The differences found, for the fields
// of interest:
//
//   - Metal3Cluster spec.noCloudProvider exists only in v1beta1 (v1beta2 keeps
//     only cloudProviderEnabled, which both have): not modelled, use
//     cloudProviderEnabled.
//   - Metal3Cluster spec/status.failureDomains is a map in v1beta1 and a list
//     in v1beta2: not modelled.
//   - Metal3Cluster and Metal3Machine status.ready, failureReason and
//     failureMessage, and Metal3Machine status.phase, exist only in v1beta1
//     (v1beta2 has status.initialization.provisioned instead): not modelled.
//   - status.conditions are CAPI v1beta1 conditions (with severity) in v1beta1
//     and metav1.Conditions in v1beta2: not modelled.
//   - Metal3Machine(Template) spec.image.format is spelled diskFormat in
//     v1beta2: not modelled; url, checksum and checksumType are.
//   - spec.dataTemplate and status.renderedData are full ObjectReferences in
//     v1beta1 but only {name, namespace} in v1beta2: modelled as a
//     {name, namespace} reference, which is valid in both.
//   - v1beta2 adds length limits (for example a non-empty providerID, a
//     url of format uri, at least one hostSelector matchExpression when the
//     list is present), list types and spec.template.metadata on
//     Metal3MachineTemplate. The API server validates a write against the
//     version it was sent in (v1beta1), so these do not reject our objects,
//     but real clusters run CAPM3's conversion webhook, so stay within them.
//
// Everything modelled here has the same path and type in both versions.
package v1beta1
