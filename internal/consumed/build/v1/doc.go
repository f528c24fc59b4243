/*
Copyright 2026 The ocp-capi Authors.

SPDX-License-Identifier: Apache-2.0
*/

// Package v1 mirrors a subset of build.openshift.io/v1: the Build kind, as
// the MCO layering BuildController creates and watches it (a Dockerfile
// source with ConfigMap inputs, the Docker strategy, an image output with a
// push secret).
//
// Upstream: github.com/openshift/api, path build/v1/types.go at commit
// 2a3d73913b5a7caec4c57d5c3d04f51106ec4da3.
//
// OpenShift serves Build from an aggregated API server, not from a CRD, so
// there is no upstream CRD to check against: the CRD generated from this
// package (for the test environment only) is the only one. It is a
// structural schema of the modelled subset and, like the aggregated API,
// has no status subresource (status is written through the main resource,
// by the build controller and by `oc cancel-build` alike); a finished
// phase cannot change, as the API server's update validation says. JSON
// names, omitempty and pointer-ness follow upstream's Go types. Not modelled:
// triggeredBy, revision, postCommit, mountTrustedCA, the git, binary and
// image sources, the source, custom and pipeline strategies, and the status
// fields config and stages.
package v1
