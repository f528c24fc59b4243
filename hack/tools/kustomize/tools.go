//go:build tools

// Package tools pins the kustomize CLI built by the Makefile.
package tools

import _ "sigs.k8s.io/kustomize/kustomize/v5"
