package clients

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2"
)

// Class says how a controller must treat an OpenStack error.
type Class int

const (
	// Transient errors (429, 5xx, timeouts, dropped connections) are
	// retried with backoff for ever; they never mark anything failed.
	Transient Class = iota
	// Terminal errors need a change of the spec or of the cloud (bad
	// request, not found by filter, quota, forbidden). They get a
	// documented reason and a slow retry, not a hot loop.
	Terminal
)

// Error is an OpenStack error classified for the controllers: a condition
// reason, a message for users, and how long to wait before retrying.
type Error struct {
	Class   Class
	Reason  string
	Message string
	// RetryAfter is the server's Retry-After, or zero.
	RetryAfter time.Duration
	Err        error
}

func (e *Error) Error() string { return e.Message }
func (e *Error) Unwrap() error { return e.Err }

// IsTransient reports whether err is a transient OpenStack error.
func IsTransient(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Class == Transient
}

// Reasons. They are the condition reasons in api/infrastructure/v1beta2
// (kept as strings here so this package does not depend on the API).
const (
	ReasonUnavailable = "OpenStackUnavailable"
	ReasonRateLimited = "RateLimited"
	ReasonAuthFailed  = "AuthenticationFailed"
	ReasonInvalidSpec = "InvalidSpec"
	ReasonNotFound    = "NotFound"
	ReasonAmbiguous   = "Ambiguous"
	ReasonQuota       = "QuotaExceeded"
	ReasonForbidden   = "Forbidden"
	ReasonConflict    = "Conflict"
	// ReasonIdentityAccessDenied: the object's namespace may not use the
	// OpenStackClusterIdentity its identityRef names.
	ReasonIdentityAccessDenied = "IdentityAccessDenied"
	defaultRetryAfter          = 0
	maxRetryAfter              = 10 * time.Minute
	quotaMessageMarker         = "quota"
)

// Classify turns any error from gophercloud or the network into an *Error.
// what names the operation for the message ("creating port x-0").
func Classify(err error, what string) *Error {
	if err == nil {
		return nil
	}
	var already *Error
	if errors.As(err, &already) {
		return already
	}
	msg := func(detail string) string {
		if what == "" {
			return detail
		}
		return what + ": " + detail
	}

	// A 401 whose re-authentication was refused: the credentials are bad.
	// gophercloud's error does not unwrap, so look at the refusal itself.
	var reauth *gophercloud.ErrUnableToReauthenticate
	if errors.As(err, &reauth) {
		return withReason(Classify(reauth.ErrReauth, what), ReasonAuthFailed)
	}

	var code gophercloud.ErrUnexpectedResponseCode
	var codePtr *gophercloud.ErrUnexpectedResponseCode
	switch {
	case errors.As(err, &code):
		return classifyCode(&code, err, msg)
	case errors.As(err, &codePtr):
		return classifyCode(codePtr, err, msg)
	}

	if errors.Is(err, context.DeadlineExceeded) {
		return &Error{Class: Transient, Reason: ReasonUnavailable, Message: msg("timed out"), Err: err}
	}
	var netErr net.Error
	if errors.As(err, &netErr) || isConnectionError(err) {
		return &Error{Class: Transient, Reason: ReasonUnavailable, Message: msg("cannot reach OpenStack: " + err.Error()), Err: err}
	}
	// Anything else (a malformed answer, a library error) is retried: it is
	// more likely a passing fault than something the user can fix.
	return &Error{Class: Transient, Reason: ReasonUnavailable, Message: msg(err.Error()), Err: err}
}

func isConnectionError(err error) bool {
	s := err.Error()
	for _, m := range []string{"connection reset", "connection refused", "EOF", "broken pipe", "no such host", "TLS handshake timeout"} {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

func classifyCode(code *gophercloud.ErrUnexpectedResponseCode, err error, msg func(string) string) *Error {
	body := faultMessage(code.Body)
	detail := fmt.Sprintf("%s %s returned %d", code.Method, redactURL(code.URL), code.Actual)
	if body != "" {
		detail += ": " + body
	}
	e := &Error{Message: msg(detail), Err: err}
	switch {
	case code.Actual == http.StatusTooManyRequests:
		e.Class, e.Reason = Transient, ReasonRateLimited
		e.RetryAfter = retryAfter(code.ResponseHeader)
	case code.Actual == http.StatusUnauthorized:
		// gophercloud already re-authenticated once; the credentials are
		// wrong or revoked. Transient: fixing the Secret must heal it.
		e.Class, e.Reason = Transient, ReasonAuthFailed
	case code.Actual == http.StatusForbidden && strings.Contains(strings.ToLower(body), quotaMessageMarker):
		e.Class, e.Reason = Terminal, ReasonQuota
	case code.Actual == http.StatusForbidden:
		e.Class, e.Reason = Terminal, ReasonForbidden
	case code.Actual == http.StatusNotFound:
		e.Class, e.Reason = Terminal, ReasonNotFound
	case code.Actual == http.StatusConflict && strings.Contains(strings.ToLower(body), quotaMessageMarker):
		e.Class, e.Reason = Terminal, ReasonQuota
	case code.Actual == http.StatusConflict:
		// Conflicts (a port in use, an object in a transitional state)
		// resolve themselves.
		e.Class, e.Reason = Transient, ReasonConflict
	case code.Actual == http.StatusRequestEntityTooLarge:
		// Nova answers 413 for over-quota, with Retry-After when it is a
		// rate limit instead.
		if ra := retryAfter(code.ResponseHeader); ra > 0 {
			e.Class, e.Reason, e.RetryAfter = Transient, ReasonRateLimited, ra
		} else {
			e.Class, e.Reason = Terminal, ReasonQuota
		}
	case code.Actual == http.StatusBadRequest && strings.Contains(strings.ToLower(body), quotaMessageMarker):
		e.Class, e.Reason = Terminal, ReasonQuota
	case code.Actual >= 500 && code.Actual != http.StatusNotImplemented:
		e.Class, e.Reason = Transient, ReasonUnavailable
		e.RetryAfter = retryAfter(code.ResponseHeader)
	default:
		e.Class, e.Reason = Terminal, ReasonInvalidSpec
	}
	return e
}

// retryAfter parses Retry-After as seconds or an HTTP date, capped so a
// misbehaving server cannot park a resource for hours.
func retryAfter(h http.Header) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return defaultRetryAfter
	}
	var d time.Duration
	if secs, err := strconv.Atoi(v); err == nil && secs >= 0 {
		d = time.Duration(secs) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = time.Until(t)
	}
	if d < 0 {
		d = 0
	}
	if d > maxRetryAfter {
		d = maxRetryAfter
	}
	return d
}

// redactURL keeps the path but drops the query, which may hold filters with
// user data; hosts stay, they help debugging and are not secret.
func redactURL(u string) string {
	if i := strings.IndexByte(u, '?'); i >= 0 {
		return u[:i]
	}
	return u
}

// faultMessage pulls the human message out of an OpenStack error body. The
// services wrap it differently: {"badRequest":{"message":...}} (Nova),
// {"NeutronError":{"message":...}}, {"error":{"message":...}} (Keystone),
// {"itemNotFound":{...}} (Cinder), {"faultstring":...} (Octavia).
func faultMessage(body []byte) string {
	s := strings.TrimSpace(string(body))
	if s == "" {
		return ""
	}
	var generic map[string]any
	if err := jsonUnmarshal(body, &generic); err == nil {
		if m, ok := generic["message"].(string); ok {
			return m
		}
		if m, ok := generic["faultstring"].(string); ok {
			return m
		}
		for _, v := range generic {
			if inner, ok := v.(map[string]any); ok {
				if m, ok := inner["message"].(string); ok {
					return m
				}
			}
		}
	}
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
