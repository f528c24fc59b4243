package instance

import (
	"errors"
	"time"

	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/clients"
)

// Reasons of an *Error. They are the condition reasons the OpenStackServer
// controller reports for the same failures.
const (
	// ReasonInvalidSpec: the spec (Error.Field names the field) or the
	// request was refused. Terminal.
	ReasonInvalidSpec = clients.ReasonInvalidSpec
	// ReasonNotFound: a Ref by name or tags matches nothing. Terminal.
	ReasonNotFound = clients.ReasonNotFound
	// ReasonAmbiguous: a Ref matches several resources, or several
	// resources carry one of the deterministic names. Terminal.
	ReasonAmbiguous = clients.ReasonAmbiguous
	// ReasonQuotaExceeded: a project quota is exhausted. Terminal.
	ReasonQuotaExceeded = clients.ReasonQuota
	// ReasonForbidden: the credentials may not do this. Terminal.
	ReasonForbidden = clients.ReasonForbidden
	// ReasonRateLimited: OpenStack answered 429; see Error.RetryAfter.
	ReasonRateLimited = clients.ReasonRateLimited
	// ReasonUnavailable: 5xx, timeouts, dropped connections. Transient.
	ReasonUnavailable = clients.ReasonUnavailable
	// ReasonAuthenticationFailed: the credentials were refused or cannot
	// be read. Transient, so that fixing them heals it.
	ReasonAuthenticationFailed = clients.ReasonAuthFailed
	// ReasonConflict: a resource is in a transitional state. Transient.
	ReasonConflict = clients.ReasonConflict
	// ReasonInstanceError: Nova put the server in ERROR; Error.Message
	// carries Nova's fault. Delete it to try again.
	ReasonInstanceError = "InstanceError"
	// ReasonInstanceDeleted: the server was ACTIVE once and has since
	// been deleted outside this package. It is not recreated: a machine's
	// server is not fungible, the caller decides.
	ReasonInstanceDeleted = "InstanceDeleted"
)

// Error is what Create, Delete and New return on failure; Spec.Validate
// (and so Create) may join several, so use errors.As. Transient errors heal
// by themselves: retry after RetryAfter, or with backoff. Terminal ones need
// a change of the spec or of the cloud; retrying them at a slow pace is
// safe.
type Error struct {
	Reason string
	// Field is the Spec or Cloud field at fault ("Ports[1].Network"), for
	// errors found before calling OpenStack.
	Field   string
	Message string
	// Transient is true when retrying unchanged can succeed.
	Transient bool
	// RetryAfter is OpenStack's Retry-After, or zero.
	RetryAfter time.Duration
	// Err is the underlying error (context errors can be found through it).
	Err error
}

func (e *Error) Error() string {
	if e.Field != "" {
		return e.Field + ": " + e.Message
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// publicError turns the internal packages' classified errors into *Error,
// so that callers outside this module can inspect them.
func publicError(err error) error {
	if err == nil {
		return nil
	}
	var pub *Error
	if errors.As(err, &pub) {
		return err
	}
	var ce *clients.Error
	if !errors.As(err, &ce) {
		ce = clients.Classify(err, "")
	}
	return &Error{Reason: ce.Reason, Message: ce.Message, Transient: ce.Class == clients.Transient,
		RetryAfter: ce.RetryAfter, Err: err}
}
