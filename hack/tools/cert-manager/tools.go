//go:build tools

// Package tools pins the cert-manager commands the Makefile builds
// (hack/make/images.mk).
package tools

import (
	_ "github.com/cert-manager/cert-manager/cmd/acmesolver"
	_ "github.com/cert-manager/cert-manager/cmd/cainjector"
	_ "github.com/cert-manager/cert-manager/cmd/controller"
	_ "github.com/cert-manager/cert-manager/cmd/webhook"
)
