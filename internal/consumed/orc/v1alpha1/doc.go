/*
Copyright 2026 The ocp-capi Authors.

SPDX-License-Identifier: Apache-2.0
*/

// Package v1alpha1 mirrors a subset of openstack.k-orc.cloud/v1alpha1 of the
// OpenStack Resource Controller (ORC): the Image kind, which CAPO's
// image.imageRef names and this provider resolves to a Glance image ID.
//
// Upstream: github.com/k-orc/openstack-resource-controller, path
// api/v1alpha1/image_types.go at tag v2.4.0 (the release CAPO v0.14.7
// pins). shared/upstream-crds has no ORC CRD, so the schema tests log "no
// upstream CRD" for Image; they pass with OCP_CAPI_UPSTREAM_CRDS pointing at
// a copy that adds ORC's config/crd/bases/openstack.k-orc.cloud_images.yaml
// of v2.4.0. Against v2.6.0 (CAPO main's) they report one difference: spec
// is required there.
//
// The provider only reads Images: status.id once the condition Available
// is True, and the condition Progressing to tell a failed import from one
// still under way. The spec is modelled so that tests can create Images as
// users write them (CAPO's image templates): cloudCredentialsRef,
// managementPolicy, managedOptions, import (id or filter) and resource
// (name, tags, visibility, protected, content with its download). Not
// modelled: resource.properties, import.filter.visibility, and status
// fields other than conditions, id, resource.name and resource.status,
// downloadAttempts.
package v1alpha1
