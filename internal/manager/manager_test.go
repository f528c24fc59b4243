package manager

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestManagerOptions(t *testing.T) {
	tests := []struct {
		name           string
		args           []string
		wantNamespaces []string // nil: all namespaces
		wantFilter     bool
	}{
		{name: "defaults", wantFilter: true},
		{name: "one namespace", args: []string{"--namespace=foo"}, wantNamespaces: []string{"foo"}, wantFilter: true},
		{name: "plain http metrics", args: []string{"--metrics-secure=false"}, wantFilter: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, _, err := parseFlags(testSpec(), tt.args, nil)
			if err != nil {
				t.Fatal(err)
			}
			opts := managerOptions(testSpec(), cfg, runtime.NewScheme())

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
	if opts := managerOptions(testSpec(), cfg, runtime.NewScheme()); opts.Client.Cache != nil && opts.Client.Cache.Unstructured {
		t.Error("unstructured reads cached without CacheUnstructured")
	}
	spec := testSpec()
	spec.CacheUnstructured = true
	if opts := managerOptions(spec, cfg, runtime.NewScheme()); opts.Client.Cache == nil || !opts.Client.Cache.Unstructured {
		t.Error("CacheUnstructured: unstructured reads not cached")
	}
}
