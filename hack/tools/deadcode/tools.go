//go:build tools

// Package tools pins deadcode, built by `make deadcode`.
package tools

import _ "golang.org/x/tools/cmd/deadcode"
