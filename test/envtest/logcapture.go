package envtest

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/go-logr/logr"
	"go.uber.org/zap/zapcore"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// LogLevel is the zap level of the controllers' logs in tests: errors only,
// since the objects' conditions tell the story, unless OCP_CAPI_TEST_VERBOSE
// is set, which shows everything down to V(4).
func LogLevel() zapcore.Level {
	if os.Getenv("OCP_CAPI_TEST_VERBOSE") != "" {
		return -4
	}
	return 1
}

// NewLogger is the development logger at LogLevel, for ctrl.SetLogger.
func NewLogger() logr.Logger {
	return zap.New(zap.UseDevMode(true), zap.Level(LogLevel()))
}

// ReconcileErrors records the "Reconciler error" entries that
// controller-runtime logs, by the namespace of the object, so that a test
// can fail when its own objects made a controller return an error: such an
// error is only logged and retried, and the test would otherwise pass once
// a retry succeeds. The zero value is ready; install it with
// ctrl.SetLogger(r.Logger()).
type ReconcileErrors struct {
	mu   sync.Mutex
	byNS map[string][]string
}

// Logger is NewLogger with its reconcile errors recorded in r.
func (r *ReconcileErrors) Logger() logr.Logger {
	return logr.New(r.Sink(NewLogger().GetSink()))
}

// Sink wraps s: every entry still goes to s, and the reconcile errors are
// recorded in r as well.
func (r *ReconcileErrors) Sink(s logr.LogSink) logr.LogSink {
	return captureSink{LogSink: s, rec: r}
}

// In returns the reconcile errors recorded for objects in namespace ns, in
// the order they were logged, each as "<controller> <name>: <error>".
func (r *ReconcileErrors) In(ns string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.byNS[ns])
}

func (r *ReconcileErrors) add(ns, entry string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byNS == nil {
		r.byNS = map[string][]string{}
	}
	r.byNS[ns] = append(r.byNS[ns], entry)
}

// IsStopError reports whether a recorded reconcile error is only what a
// manager that a test stops logs while it shuts down (its context is
// canceled, or its caches never synced), not a fault of the controller.
func IsStopError(entry string) bool {
	return strings.Contains(entry, "context canceled") || strings.Contains(entry, "Informer to sync")
}

// captureSink keeps the key/value pairs given to WithValues, because
// controller-runtime attaches the controller, namespace and name of a
// reconcile to the logger rather than to the Error call.
type captureSink struct {
	logr.LogSink
	rec    *ReconcileErrors
	values []any
}

func (s captureSink) WithValues(kv ...any) logr.LogSink {
	return captureSink{LogSink: s.LogSink.WithValues(kv...), rec: s.rec, values: append(slices.Clone(s.values), kv...)}
}

func (s captureSink) WithName(name string) logr.LogSink {
	return captureSink{LogSink: s.LogSink.WithName(name), rec: s.rec, values: s.values}
}

func (s captureSink) Error(err error, msg string, kv ...any) {
	if msg == "Reconciler error" {
		var controller, ns, name string
		all := append(slices.Clone(s.values), kv...)
		for i := 0; i+1 < len(all); i += 2 {
			switch all[i] {
			case "controller":
				controller = fmt.Sprint(all[i+1])
			case "namespace":
				ns = fmt.Sprint(all[i+1])
			case "name":
				name = fmt.Sprint(all[i+1])
			}
		}
		s.rec.add(ns, fmt.Sprintf("%s %s: %v", controller, name, err))
	}
	s.LogSink.Error(err, msg, kv...)
}
