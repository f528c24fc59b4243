//go:build tools

// Package tools pins the CoreDNS server built by hack/make/node.mk.
package tools

import _ "github.com/coredns/coredns"
