package machinesetsync

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
)

// benchMachineSets is how many MAPI MachineSets the benchmark creates.
const benchMachineSets = 1000

// BenchmarkSync1000 creates 1,000 MAPI MachineSets against the real API
// server and reports the time until all are Synchronized at their
// generation (s/converge), the controller's writes until then
// (writes/converge), and the writes of one full resync afterwards
// (writes/resync, target 0). It runs a manager of its own, in namespaces of
// its own, once without a client-side rate limit (what ctrl.GetConfig gives
// the manager in a cluster: QPS -1, relying on API priority and fairness)
// and once with client-go's default of 5 QPS, burst 10 per resource type
// (what a rest.Config from a kubeconfig file has unless set).
//
//	KUBEBUILDER_ASSETS=$PWD/bin go test ./internal/addon/controllers/machinesetsync -run '^$' -bench BenchmarkSync1000 -benchtime 1x -timeout 30m
func BenchmarkSync1000(b *testing.B) {
	for _, qps := range []struct {
		name       string
		qps        float32
		burst      int
		concurrent int
	}{
		{"qps=unlimited", -1, 0, 10},
		{"qps=5", 5, 10, 10},
	} {
		b.Run(qps.name, func(b *testing.B) {
			for i := range b.N {
				benchOnce(b, fmt.Sprintf("bench-%d-%d", i, time.Now().UnixNano()%100000), qps.qps, qps.burst, qps.concurrent)
			}
		})
	}
}

func benchOnce(b *testing.B, prefix string, qps float32, burst, concurrency int) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mapiNs, capiNs := prefix+"-mapi", prefix+"-capi"
	for _, ns := range []string{mapiNs, capiNs} {
		if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			b.Fatal(err)
		}
	}
	cfg := *env.Config
	cfg.QPS, cfg.Burst = qps, burst
	mgr, err := ctrl.NewManager(&cfg, ctrl.Options{
		Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		b.Fatal(err)
	}
	counted := &countingClient{Client: mgr.GetClient()}
	r := &Reconciler{Client: counted, Recorder: &recorder{}, MAPINamespace: mapiNs, CAPINamespace: capiNs}
	if err := r.SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: concurrency}); err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		b.Fatal("cache did not sync")
	}

	// Create the MachineSets from a client of its own (not rate limited by
	// the manager's), 20 at a time.
	names := make([]string, benchMachineSets)
	for i := range names {
		names[i] = fmt.Sprintf("%s-worker-%04d", prefix, i)
	}
	b.ResetTimer()
	start := time.Now()
	creator, err := client.New(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		b.Fatal(err)
	}
	sem := make(chan struct{}, 20)
	var wg sync.WaitGroup
	for _, n := range names {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			ms := newMachineSet(b, n, openStackSpec())
			ms.Namespace = mapiNs
			if err := creator.Create(ctx, ms); err != nil {
				b.Error(err)
			}
		}()
	}
	wg.Wait()

	// Converged: every MachineSet Synchronized at its generation.
	deadline := time.Now().Add(25 * time.Minute)
	for {
		list := &mapiv1beta1.MachineSetList{}
		if err := env.Client.List(ctx, list, client.InNamespace(mapiNs)); err != nil {
			b.Fatal(err)
		}
		synced := 0
		for i := range list.Items {
			ms := &list.Items[i]
			if c := synchronized(ms); c != nil && c.Status == corev1.ConditionTrue && ms.Status.SynchronizedGeneration == ms.Generation {
				synced++
			}
		}
		if synced == benchMachineSets {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("only %d of %d MachineSets synchronized", synced, benchMachineSets)
		}
		time.Sleep(250 * time.Millisecond)
	}
	converge := time.Since(start)
	b.StopTimer()
	convergeWrites := counted.Writes()

	// One full resync with a fresh reconciler on the manager's (synced)
	// cache: every MachineSet reconciled once; its writes are counted.
	// Give the running controller a moment to drain its queue first.
	time.Sleep(2 * time.Second)
	resyncClient := &countingClient{Client: mgr.GetClient()}
	rr := &Reconciler{Client: resyncClient, Recorder: &recorder{}, MAPINamespace: mapiNs, CAPINamespace: capiNs, templateKinds: r.templateKinds}
	resyncStart := time.Now()
	for _, n := range names {
		if _, err := rr.Reconcile(ctx, ctrl.Request{NamespacedName: objectKey(mapiNs, n)}); err != nil {
			b.Fatal(err)
		}
	}
	resync := time.Since(resyncStart)

	b.ReportMetric(converge.Seconds(), "s/converge")
	b.ReportMetric(float64(convergeWrites), "writes/converge")
	b.ReportMetric(float64(resyncClient.Writes()), "writes/resync")
	b.ReportMetric(resync.Seconds(), "s/resync")
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
}
