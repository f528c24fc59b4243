/*
Copyright 2026 The ocp-capi Authors.

SPDX-License-Identifier: Apache-2.0
*/

// Package v1beta1 mirrors a subset of extensions.hive.openshift.io/v1beta1:
// AgentClusterInstall (short name aci), the assisted installer's hive
// cluster-install implementation.
//
// Upstream: github.com/openshift/assisted-service, path
// api/hiveextension/v1beta1/agentclusterinstall_types.go at commit
// 063b257950f726d6b291dc94b806bc243a1b56de. As upstream does, the hive types
// it embeds (ClusterMetadata, ClusterImageSetReference,
// ClusterInstallCondition) come from the hive package, here
// internal/consumed/hive/v1.
//
// This is a wire-compatible subset written for this project. JSON names,
// omitempty and pointer-ness follow upstream's Go types; in particular
// clusterDeploymentRef, networking, provisionRequirements and
// provisionRequirements.controlPlaneAgents, status.progress.totalPercentage
// and status.debugInfo.eventsURL/logsURL have no omitempty. Not modelled:
// ntpSources, controlPlane, compute, arbiter, ignitionEndpoint, external,
// mirrorRegistryRef, loadBalancer, and in the status the agent counts,
// machineNetwork, apiVIP, ingressVIP, userManagedNetworking and
// validationsInfo. Writers must patch, so that those fields survive.
package v1beta1
