//go:build tools

// Package tools pins the tools built by the Makefile.
package tools

import (
	_ "helm.sh/helm/v3/cmd/helm"
	_ "sigs.k8s.io/cluster-api/cmd/clusterctl"
	_ "sigs.k8s.io/cluster-api/core"
	_ "sigs.k8s.io/controller-tools/cmd/controller-gen"
)
