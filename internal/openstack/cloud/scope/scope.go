// Package scope holds what every plain-Go OpenStack step takes (the clients
// of one identity and a logger) and what it returns while OpenStack is
// still working (Progress). The controllers get the clients from
// controllers/identity.
package scope

import (
	"fmt"
	"time"

	"github.com/go-logr/logr"

	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/clients"
)

// Scope is what every OpenStack step needs: the clients of one identity
// and a logger.
type Scope struct {
	Clients *clients.Clients
	Log     logr.Logger
}

// Progress says that a step is not finished and when to look again. It is
// not an error: nothing went wrong, OpenStack is still working.
type Progress struct {
	Reason  string
	Message string
	After   time.Duration
}

func (p *Progress) Error() string { return p.Message }

// WaitReason is the condition reason while waiting.
func (p *Progress) WaitReason() string { return p.Reason }

// WaitAfter is when to look again.
func (p *Progress) WaitAfter() time.Duration { return p.After }

// Wait returns a Progress.
func Wait(reason string, after time.Duration, format string, args ...any) *Progress {
	return &Progress{Reason: reason, Message: fmt.Sprintf(format, args...), After: after}
}
