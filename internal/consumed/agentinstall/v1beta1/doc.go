/*
Copyright 2026 The ocp-capi Authors.

SPDX-License-Identifier: Apache-2.0
*/

// Package v1beta1 mirrors a subset of agent-install.openshift.io/v1beta1, the
// assisted installer's Kubernetes API: InfraEnv, Agent and NMStateConfig.
//
// Upstream: github.com/openshift/assisted-service, path api/v1beta1
// (infraenv_types.go, agent_types.go, nmstate_config_types.go) at commit
// 063b257950f726d6b291dc94b806bc243a1b56de. The condition type is
// Condition of github.com/openshift/custom-resource-status conditions/v1,
// as vendored by that commit.
//
// This is a wire-compatible subset written for this project. JSON names,
// omitempty and pointer-ness follow upstream's Go types; in particular Agent
// spec.role and spec.approved, Agent status.role and status.debugInfo, the
// interface address and flag lists of the inventory, InfraEnv
// spec.pullSecretRef and spec.ipxeScriptType, InfraEnv status.debugInfo,
// its eventsURL and status.bootArtifacts have no omitempty. Two deliberate
// differences: NMStateConfig spec.interfaces is a slice of values (upstream:
// of pointers; the JSON is the same), and spec.config is a
// runtime.RawExtension (upstream keeps the YAML text and converts it to
// JSON when marshalling; the JSON is the same). Not modelled, among others:
// InfraEnv ntpSources, mirrorRegistryRef, agentApproval,
// networkDiscoveryDelaySeconds and status.agentLabelSelector; Agent
// ignitionEndpoint*, fencingCredentialsSecretRef, and most of the inventory,
// validationsInfo, csrStatus and deprovision_info. Writers must patch, so
// that those fields survive.
package v1beta1
