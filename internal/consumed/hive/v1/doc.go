/*
Copyright 2026 The ocp-capi Authors.

SPDX-License-Identifier: Apache-2.0
*/

// Package v1 mirrors a subset of hive.openshift.io/v1: ClusterDeployment
// (namespaced) and ClusterImageSet (cluster-scoped), plus the hive types that
// AgentClusterInstall embeds (ClusterMetadata, ClusterImageSetReference,
// ClusterInstallCondition).
//
// Upstream: github.com/openshift/hive, path apis/hive/v1
// (clusterdeployment_types.go, clusterimageset_types.go,
// clusterinstall_conditions.go, agent/platform.go) at commit
// c02e51732cbcd84a43785dc49d70e718d0999cba.
//
// This is a wire-compatible subset written for this project: the fields the
// agent control-plane provider writes and reads. JSON names, omitempty and
// pointer-ness follow upstream's Go types; in particular
// spec.platform.agentBareMetal.agentSelector and spec.installed have no
// omitempty. Only the agentBareMetal platform is modelled; the cloud
// platforms, ingress, certificate bundles, provisioning, pools, hibernation
// and almost all of the status are not. Writers must patch, so that those
// fields survive.
package v1
