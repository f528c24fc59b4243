package controllers_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ocp-capi/ocp-capi/internal/addon"
	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
	"github.com/ocp-capi/ocp-capi/test/envtest"
)

// benchMachineSets is how many MAPI MachineSets the benchmark creates.
const benchMachineSets = 1000

// BenchmarkSync1000 creates 1,000 MAPI MachineSets against the real API
// server and reports the time until all are Synchronized at their
// generation (s/converge), the add-on's writes until then
// (writes/converge), and the writes of one full resync afterwards
// (writes/resync, target 0: a fresh add-on manager reconciles every
// MachineSet once) and its time until the controllers are idle
// (s/resync). It runs an add-on manager of its own (all the add-on's
// controllers, as the addon-manager does, with 10 workers each), in
// namespaces of its own, once without a client-side rate limit (QPS -1,
// relying on API priority and fairness) and once with client-go's default
// of 5 QPS, burst 10 per resource type (what a rest.Config from a
// kubeconfig file has unless set). Events are not counted.
//
//	KUBEBUILDER_ASSETS=$PWD/bin go test ./internal/addon/controllers -run '^$' -bench BenchmarkSync1000 -benchtime 1x -timeout 30m
func BenchmarkSync1000(b *testing.B) {
	for _, qps := range []struct {
		name  string
		qps   float32
		burst int
	}{
		{"qps=unlimited", -1, 0},
		{"qps=5", 5, 10},
	} {
		b.Run(qps.name, func(b *testing.B) {
			for i := range b.N {
				benchOnce(b, fmt.Sprintf("bench-%d-%d", i, time.Now().UnixNano()%100000), qps.qps, qps.burst)
			}
		})
	}
}

func benchOnce(b *testing.B, prefix string, qps float32, burst int) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts := addon.NewOptions()
	opts.MAPINamespace, opts.CAPINamespace = prefix+"-mapi", prefix+"-capi"
	for _, ns := range []string{opts.MAPINamespace, opts.CAPINamespace} {
		if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			b.Fatal(err)
		}
	}
	counted := func() (*rest.Config, *envtest.WriteCounter) {
		w := &envtest.WriteCounter{}
		cfg := rest.CopyConfig(env.Config)
		cfg.QPS, cfg.Burst = qps, burst
		cfg.Wrap(w.Wrap)
		return cfg, w
	}
	cfg, writes := counted()
	stop, err := startAddon(ctx, cfg, opts, 10)
	if err != nil {
		b.Fatal(err)
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
			ms.Namespace = opts.MAPINamespace
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
		if err := env.Client.List(ctx, list, client.InNamespace(opts.MAPINamespace)); err != nil {
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
	convergeWrites := controllerWrites(writes)

	// One full resync: the manager stopped, once the running controllers
	// have drained their queues, and a fresh one started, whose writes are
	// counted until it has reconciled every MachineSet and is idle.
	for envtest.Busy(addonControllers...) > 0 {
		time.Sleep(250 * time.Millisecond)
	}
	if err := stop(); err != nil {
		b.Fatal(err)
	}
	cfg, resyncWrites := counted()
	before, idle := envtest.ReconcileCounts(), envtest.Busy(addonControllers...)
	resyncStart := time.Now()
	stop, err = startAddon(ctx, cfg, opts, 10)
	if err != nil {
		b.Fatal(err)
	}
	for envtest.ReconcileCounts()["machinesetsync"]-before["machinesetsync"] < benchMachineSets || envtest.Busy(addonControllers...) != idle {
		if time.Since(resyncStart) > 10*time.Minute {
			b.Fatal("the resync did not finish")
		}
		time.Sleep(50 * time.Millisecond)
	}
	resync := time.Since(resyncStart)

	b.ReportMetric(converge.Seconds(), "s/converge")
	b.ReportMetric(float64(convergeWrites), "writes/converge")
	b.ReportMetric(float64(controllerWrites(resyncWrites)), "writes/resync")
	b.ReportMetric(resync.Seconds(), "s/resync")
	if err := stop(); err != nil {
		b.Fatal(err)
	}
}
