package controllers_test

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"

	osbuild "github.com/ocp-capi/ocp-capi/internal/addon/internal/osbuild"
)

type hangingTransport struct {
	match   func(*http.Request) bool
	on      atomic.Bool
	entered atomic.Int64
}

func (h *hangingTransport) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		if h.on.Load() && h.match(req) {
			h.entered.Add(1)
			<-req.Context().Done()
			return nil, req.Context().Err()
		}
		return rt.RoundTrip(req)
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// hangSecretReads makes the controller's Secret reads hang from now on.
func (h *harness) hangSecretReads() *hangingTransport {
	ht := &hangingTransport{match: func(r *http.Request) bool {
		return r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/secrets/")
	}}
	ht.on.Store(true)
	h.config = rest.CopyConfig(env.Config)
	h.config.Wrap(ht.wrap)
	return ht
}

// TestHungAPIServer: the controller's Secret reads (uncached, when a build
// starts) get no answer. Each reconcile returns at --build-api-timeout with
// an error that says so, instead of holding its worker; once the API server
// answers again the build starts. And a hung call ends at once when the
// manager stops: the deadline is derived from the reconcile's context.
func TestHungAPIServer(t *testing.T) {
	t.Run("timeout", func(t *testing.T) {
		h := newHarness(t, osbuild.BackendBuild)
		h.opts.APITimeout = 300 * time.Millisecond
		hang := h.hangSecretReads()
		pool, _ := h.workerPool()
		rc := h.start()

		h.g.Eventually(func() int { return len(rc.failures()) }).Should(BeNumerically(">=", 2),
			"each reconcile returns an error at the deadline (and is retried)")
		h.g.Expect(hang.entered.Load()).To(BeNumerically(">=", 2))
		h.g.Expect(rc.lastFailure()).To(And(
			ContainSubstring("reading Secret "+h.ns+"/"+pullSecret),
			ContainSubstring("no answer from the API server within 300ms (--build-api-timeout)")))
		h.g.Expect(h.buildNames(pool)).To(BeEmpty(), "nothing is built on inputs that were not read")

		hang.on.Store(false)
		h.waitCondition(pool, osbuild.ConditionBuildPending, osbuild.ReasonPending)
		h.g.Expect(h.buildNames(pool)).To(HaveLen(1))
	})
	t.Run("shutdown", func(t *testing.T) {
		h := newHarness(t, osbuild.BackendBuild)
		h.opts.APITimeout = time.Hour // only the shutdown can end the call
		hang := h.hangSecretReads()
		h.inputs()
		h.pool("worker", h.machineConfig("a"), true)
		rc := h.start()

		h.g.Eventually(func() int64 { return hang.entered.Load() }).Should(BeNumerically(">=", 1), "a reconcile waits for a Secret")
		// The manager waits for its reconciles, up to its 30 s grace
		// period, and stop fails the test if it ran out.
		rc.stop(t)
		h.g.Expect(rc.idle(t)).To(BeTrue(), "every reconcile returned")
		h.g.Expect(rc.failures()).To(BeEmpty(), "a shutdown is not a reconcile error")
	})
}
