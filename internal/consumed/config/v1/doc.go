/*
Copyright 2026 The ocp-capi Authors.

SPDX-License-Identifier: Apache-2.0
*/

// Package v1 mirrors a subset of config.openshift.io/v1: the cluster-scoped
// singletons Infrastructure and ClusterVersion.
//
// Upstream: github.com/openshift/api, path config/v1 (types_infrastructure.go,
// types_cluster_version.go, types_cluster_operator.go) at commit
// 2a3d73913b5a7caec4c57d5c3d04f51106ec4da3; the schemas of reference are the
// Default feature-set CRD manifests of that commit.
//
// This is a wire-compatible subset written for this project. JSON names,
// omitempty and pointer-ness follow upstream's Go types; in particular several
// status fields are written even when empty, and ClusterVersion status fields
// that upstream requires (desired, observedGeneration, versionHash,
// availableUpdates) have no omitempty. Only the fields our controllers read or
// write are modelled: the per-platform specs and statuses (except a part of
// OpenStack's status: the VIPs and the load balancer type), capabilities,
// overrides, signature stores and conditional updates are not. Writers must
// patch, so that those fields survive.
package v1
