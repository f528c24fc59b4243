package manager

import (
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestManagerOptions(t *testing.T) {
	tests := []struct {
		name           string
		args           []string
		wantNamespaces []string // nil: all namespaces
		wantFilter     bool
		wantPprof      string
	}{
		{name: "defaults", wantFilter: true},
		{name: "profiler", args: []string{"--profiler-address=localhost:6060"}, wantFilter: true, wantPprof: "localhost:6060"},
		{name: "one namespace", args: []string{"--namespace=foo"}, wantNamespaces: []string{"foo"}, wantFilter: true},
		{name: "plain http metrics", args: []string{"--metrics-secure=false"}, wantFilter: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, _, err := parseFlags(testSpec(), tt.args, nil)
			if err != nil {
				t.Fatal(err)
			}
			opts, err := managerOptions(testSpec(), cfg, runtime.NewScheme())
			if err != nil {
				t.Fatal(err)
			}

			var gotNS []string
			for ns := range opts.Cache.DefaultNamespaces {
				gotNS = append(gotNS, ns)
			}
			if len(gotNS) != len(tt.wantNamespaces) || (len(gotNS) == 1 && gotNS[0] != tt.wantNamespaces[0]) {
				t.Errorf("cache namespaces = %v, want %v", gotNS, tt.wantNamespaces)
			}
			if got := opts.Metrics.FilterProvider != nil; got != tt.wantFilter {
				t.Errorf("metrics authn/authz filter set = %v, want %v", got, tt.wantFilter)
			}
			if opts.Metrics.SecureServing != tt.wantFilter {
				t.Errorf("SecureServing = %v, want %v", opts.Metrics.SecureServing, tt.wantFilter)
			}
			if opts.PprofBindAddress != tt.wantPprof {
				t.Errorf("PprofBindAddress = %q, want %q (off unless asked for)", opts.PprofBindAddress, tt.wantPprof)
			}
			if opts.LeaderElectionID != "test-manager-leader-election" {
				t.Errorf("LeaderElectionID = %q", opts.LeaderElectionID)
			}
			if *opts.GracefulShutdownTimeout != GracefulShutdownTimeout || GracefulShutdownTimeout >= 10*time.Second {
				t.Errorf("GracefulShutdownTimeout = %s, want %s (< 10s)", *opts.GracefulShutdownTimeout, GracefulShutdownTimeout)
			}
			if *opts.Cache.SyncPeriod != cfg.SyncPeriod || *opts.LeaseDuration != cfg.LeaseDuration ||
				*opts.RenewDeadline != cfg.RenewDeadline || *opts.RetryPeriod != cfg.RetryPeriod {
				t.Error("durations were not passed through")
			}
			obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x",
				ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m", Operation: metav1.ManagedFieldsOperationUpdate}}}}
			if opts.Cache.DefaultTransform == nil {
				t.Error("no cache transform: cached objects keep their managedFields")
			} else if got, err := opts.Cache.DefaultTransform(obj); err != nil || got.(*corev1.ConfigMap).ManagedFields != nil {
				t.Errorf("the cache transform kept the managedFields: %v, %v", got, err)
			}
			if !opts.LeaderElectionReleaseOnCancel {
				t.Error("the lease is not released on shutdown")
			}
		})
	}
}

// TestCacheUnstructured: the managers that ask for it read unstructured
// objects from the cache; the others from the API server.
func TestCacheUnstructured(t *testing.T) {
	cfg, _, err := parseFlags(testSpec(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	opts, err := managerOptions(testSpec(), cfg, runtime.NewScheme())
	if err != nil {
		t.Fatal(err)
	}
	if opts.Client.Cache != nil && opts.Client.Cache.Unstructured {
		t.Error("unstructured reads cached without Cache.Unstructured")
	}
	spec := testSpec()
	spec.Cache.Unstructured = true
	opts, err = managerOptions(spec, cfg, runtime.NewScheme())
	if err != nil {
		t.Fatal(err)
	}
	if opts.Client.Cache == nil || !opts.Client.Cache.Unstructured {
		t.Error("Cache.Unstructured: unstructured reads not cached")
	}
}

// TestCacheTrimAndByObject: a manager's trim runs after managedFields are
// stripped, and its narrowing reaches the cache options; an error making it
// is the manager's.
func TestCacheTrimAndByObject(t *testing.T) {
	cfg, _, err := parseFlags(testSpec(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	spec := testSpec()
	spec.Cache.Trim = func(obj any) (any, error) {
		cm := obj.(*corev1.ConfigMap)
		if cm.ManagedFields != nil {
			t.Error("the trim ran before managedFields were stripped")
		}
		cm.Data = nil
		return cm, nil
	}
	spec.Cache.ByObject = func() (map[client.Object]cache.ByObject, error) {
		return map[client.Object]cache.ByObject{&corev1.ConfigMap{}: {Label: labels.Everything()}}, nil
	}
	opts, err := managerOptions(spec, cfg, runtime.NewScheme())
	if err != nil {
		t.Fatal(err)
	}
	obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x",
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}}, Data: map[string]string{"k": "v"}}
	got, err := opts.Cache.DefaultTransform(obj)
	if err != nil || got.(*corev1.ConfigMap).Data != nil || got.(*corev1.ConfigMap).ManagedFields != nil {
		t.Errorf("transform = %v, %v; want no data and no managedFields", got, err)
	}
	if len(opts.Cache.ByObject) != 1 {
		t.Errorf("ByObject = %v, want the spec's", opts.Cache.ByObject)
	}
	spec.Cache.ByObject = func() (map[client.Object]cache.ByObject, error) { return nil, errors.New("bad selector") }
	if _, err := managerOptions(spec, cfg, runtime.NewScheme()); err == nil || !strings.Contains(err.Error(), "bad selector") {
		t.Errorf("err = %v, want the narrowing's error", err)
	}
}
