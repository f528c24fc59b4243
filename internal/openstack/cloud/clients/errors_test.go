package clients_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"

	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/clients"
)

// httpErr is what gophercloud returns for an unexpected status.
func httpErr(status int, body string, header ...string) gophercloud.ErrUnexpectedResponseCode {
	h := http.Header{}
	for i := 0; i+1 < len(header); i += 2 {
		h.Set(header[i], header[i+1])
	}
	return gophercloud.ErrUnexpectedResponseCode{Method: "POST", URL: "https://nova.example:8774/v2.1/servers?name=secret",
		Expected: []int{202}, Actual: status, Body: []byte(body), ResponseHeader: h}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

// refused returns a real "connection refused" from the network stack.
func refused(t *testing.T) error {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	_, err = http.Get("http://" + addr + "/v2.1/servers")
	if err == nil {
		t.Fatal("expected a connection error")
	}
	return err
}

func TestClassify(t *testing.T) {
	const novaQuota = `{"forbidden": {"code": 403, "message": "Quota exceeded for instances: Requested 1, but already used 10 of 10 instances"}}`
	const neutronQuota = `{"NeutronError": {"type": "OverQuota", "message": "Quota exceeded for resources: ['port'].", "detail": ""}}`
	inAMinute := time.Now().Add(time.Minute).UTC().Format(http.TimeFormat)
	already := &clients.Error{Class: clients.Terminal, Reason: clients.ReasonAmbiguous, Message: "two ports"}

	tests := []struct {
		name   string
		err    error
		class  clients.Class
		reason string
		// retryAfter is the expected RetryAfter, within two seconds below.
		retryAfter time.Duration
		message    string // a substring of the message
	}{
		{"429 with Retry-After in seconds", httpErr(429, `{"message": "slow down"}`, "Retry-After", "30"),
			clients.Transient, clients.ReasonRateLimited, 30 * time.Second, "returned 429: slow down"},
		{"429 with Retry-After as an HTTP date", httpErr(429, "", "Retry-After", inAMinute),
			clients.Transient, clients.ReasonRateLimited, time.Minute, "429"},
		{"429 with a huge Retry-After is capped", httpErr(429, "", "Retry-After", "86400"),
			clients.Transient, clients.ReasonRateLimited, 10 * time.Minute, "429"},
		{"429 with a garbage Retry-After", httpErr(429, "", "Retry-After", "soon"),
			clients.Transient, clients.ReasonRateLimited, 0, "429"},
		{"429 without Retry-After", httpErr(429, ""), clients.Transient, clients.ReasonRateLimited, 0, "429"},
		{"500", httpErr(500, `{"computeFault": {"code": 500, "message": "boom"}}`),
			clients.Transient, clients.ReasonUnavailable, 0, "returned 500: boom"},
		{"502", httpErr(502, "<html>Bad Gateway</html>"), clients.Transient, clients.ReasonUnavailable, 0, "<html>Bad Gateway</html>"},
		{"503 with Retry-After", httpErr(503, "", "Retry-After", "5"), clients.Transient, clients.ReasonUnavailable, 5 * time.Second, "503"},
		{"504", httpErr(504, ""), clients.Transient, clients.ReasonUnavailable, 0, "504"},
		{"501 is not retried", httpErr(501, ""), clients.Terminal, clients.ReasonInvalidSpec, 0, "501"},
		{"400", httpErr(400, `{"badRequest": {"code": 400, "message": "Invalid flavorRef"}}`),
			clients.Terminal, clients.ReasonInvalidSpec, 0, "Invalid flavorRef"},
		{"400 about quota", httpErr(400, `{"badRequest": {"message": "Quota exceeded for cores"}}`),
			clients.Terminal, clients.ReasonQuota, 0, "Quota exceeded"},
		{"401", httpErr(401, `{"error": {"code": 401, "message": "The request you have made requires authentication."}}`),
			clients.Transient, clients.ReasonAuthFailed, 0, "requires authentication"},
		{"403 quota", httpErr(403, novaQuota), clients.Terminal, clients.ReasonQuota, 0, "Quota exceeded for instances"},
		{"403", httpErr(403, `{"forbidden": {"message": "Policy doesn't allow os_compute_api:servers:create"}}`),
			clients.Terminal, clients.ReasonForbidden, 0, "Policy doesn't allow"},
		{"404", httpErr(404, `{"itemNotFound": {"code": 404, "message": "Instance x could not be found."}}`),
			clients.Terminal, clients.ReasonNotFound, 0, "could not be found"},
		{"409 quota (Neutron OverQuota)", httpErr(409, neutronQuota), clients.Terminal, clients.ReasonQuota, 0, "Quota exceeded for resources"},
		{"409", httpErr(409, `{"NeutronError": {"type": "TrunkInUse", "message": "Trunk t is currently in use."}}`),
			clients.Transient, clients.ReasonConflict, 0, "currently in use"},
		{"413 is quota", httpErr(413, `{"overLimit": {"message": "VolumeLimitExceeded"}}`), clients.Terminal, clients.ReasonQuota, 0, "VolumeLimitExceeded"},
		{"413 with Retry-After is a rate limit", httpErr(413, "", "Retry-After", "12"),
			clients.Transient, clients.ReasonRateLimited, 12 * time.Second, "413"},
		{"pointer to the response error", new(httpErr(404, "")), clients.Terminal, clients.ReasonNotFound, 0, "404"},
		{"wrapped with %w", fmt.Errorf("listing ports: %w", httpErr(403, novaQuota)), clients.Terminal, clients.ReasonQuota, 0, "Quota exceeded"},
		{"error after re-authentication", &gophercloud.ErrErrorAfterReauthentication{ErrOriginal: httpErr(404, "")},
			clients.Terminal, clients.ReasonNotFound, 0, "404"},
		{"context deadline", fmt.Errorf("get: %w", context.DeadlineExceeded), clients.Transient, clients.ReasonUnavailable, 0, "timed out"},
		{"HTTP client timeout", &url.Error{Op: "Get", URL: "https://nova.example", Err: timeoutErr{}},
			clients.Transient, clients.ReasonUnavailable, 0, "cannot reach OpenStack"},
		{"connection refused", refused(t), clients.Transient, clients.ReasonUnavailable, 0, "connection refused"},
		{"connection reset, as text only", errors.New("read tcp: connection reset by peer"),
			clients.Transient, clients.ReasonUnavailable, 0, "cannot reach OpenStack"},
		{"anything else is retried", errors.New("json: cannot unmarshal"), clients.Transient, clients.ReasonUnavailable, 0, "cannot unmarshal"},
		{"already classified", fmt.Errorf("wrapped: %w", already), clients.Terminal, clients.ReasonAmbiguous, 0, "two ports"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := clients.Classify(tt.err, "creating server a")
			if got.Class != tt.class || got.Reason != tt.reason {
				t.Errorf("class %v reason %q, want %v %q (%s)", got.Class, got.Reason, tt.class, tt.reason, got.Message)
			}
			if got.RetryAfter > tt.retryAfter || got.RetryAfter < tt.retryAfter-2*time.Second {
				t.Errorf("RetryAfter %v, want %v", got.RetryAfter, tt.retryAfter)
			}
			if !strings.Contains(got.Message, tt.message) {
				t.Errorf("message %q lacks %q", got.Message, tt.message)
			}
			if got.Err == nil && got != already {
				t.Errorf("the classified error does not wrap the original")
			}
			if clients.IsTransient(got) != (got.Class == clients.Transient) {
				t.Errorf("IsTransient disagrees with Class")
			}
		})
	}
}

func TestClassifyMessage(t *testing.T) {
	if clients.Classify(nil, "x") != nil {
		t.Error("Classify(nil) must be nil")
	}
	got := clients.Classify(httpErr(404, ""), "reading server a")
	// The operation comes first; the query (user filters) is dropped.
	if want := "reading server a: POST https://nova.example:8774/v2.1/servers returned 404"; got.Message != want {
		t.Errorf("message %q, want %q", got.Message, want)
	}
	long := strings.Repeat("x", 1000)
	if got := clients.Classify(httpErr(500, long), ""); len(got.Message) > 400 {
		t.Errorf("a non-JSON body is not truncated: %d characters", len(got.Message))
	}
}

// When a token expires and Keystone then refuses the credentials,
// gophercloud returns *ErrUnableToReauthenticate, which does not unwrap.
// That is an authentication failure (fix the Secret), not an outage.
func TestClassifyFailedReauthentication(t *testing.T) {
	keystone401 := gophercloud.ErrUnexpectedResponseCode{Method: "POST", URL: "https://keystone.example/v3/auth/tokens",
		Actual: 401, Body: []byte(`{"error": {"code": 401, "message": "The request you have made requires authentication."}}`)}
	err := &gophercloud.ErrUnableToReauthenticate{ErrOriginal: httpErr(401, ""), ErrReauth: keystone401}
	got := clients.Classify(err, "reading server a")
	if got.Class != clients.Transient || got.Reason != clients.ReasonAuthFailed {
		t.Errorf("class %v reason %q, want Transient %q (%s)", got.Class, got.Reason, clients.ReasonAuthFailed, got.Message)
	}
}
