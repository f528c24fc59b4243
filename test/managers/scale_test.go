package managers

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ocp-capi/ocp-capi/test/envtest"
)

// scaleEnv turns TestScaleMemory on (make bench-scale); its value, when a
// number, is the count of objects of each kind.
const scaleEnv = "OCP_CAPI_SCALE"

// scaleProfileEnv, when set to a directory, makes TestScaleMemory save each
// settled manager's heap profile there as <manager>.heap.pprof, read from
// its --profiler-address (go tool pprof -sample_index=inuse_space).
const scaleProfileEnv = "OCP_CAPI_SCALE_PROFILE"

// scaleMachinesEnv, set to "control-plane", makes every CAPI Machine of
// TestScaleMemory a control-plane Machine (labelled with a control plane's
// name), which the control-plane manager caches whole: its worst case. By
// default they are worker Machines, as most of a management cluster's are,
// of which it caches only metadata.
const scaleMachinesEnv = "OCP_CAPI_SCALE_MACHINES"

// TestScaleMemory measures each manager's resident memory with many objects
// of the kinds it watches: in one namespace, N (default 10,000) of each of
// CAPI Machine, OpenStackMachine, OpenshiftAssistedConfig,
// OpenshiftAssistedControlPlane and MAPI Machine, and N Secrets and N
// ConfigMaps of 1 KiB that belong to none of them (every management
// cluster has many; a manager that cached all of them would show it). The
// managers run side by side, each until its controllers are idle (caches
// synced, every work queue empty and no reconcile for settleQuiet), then its VmRSS and
// VmHWM are read from /proc. It reports figures and fails only when a
// manager does not start or settle: memory is a figure for
// docs/reliability.md, not an assertion.
func TestScaleMemory(t *testing.T) {
	v := os.Getenv(scaleEnv)
	if v == "" {
		t.Skipf("a benchmark of several minutes: set %s=1 (make bench-scale) to run it", scaleEnv)
	}
	n := 10000
	if c, err := strconv.Atoi(v); err == nil && c > 1 {
		n = c
	}
	ctx := context.Background()
	ns, err := env.NewNamespace(ctx, "scale")
	if err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	created := createScaleObjects(ctx, t, ns.Name, n)
	t.Logf("created %d objects in %s (%d of each of %d kinds)", created, time.Since(begin).Round(time.Second), n, created/n)

	// The managers run side by side: each one's memory is its own, and
	// one after the other would take the slowest's time four times.
	for _, name := range managers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			// The default client rate (20/s) would take minutes to write
			// the first status of 10,000 objects; the figure is the memory
			// once that is done.
			args := []string{"--kube-api-qps=500", "--kube-api-burst=1000"}
			profileDir := os.Getenv(scaleProfileEnv)
			var profilerAddr string
			if profileDir != "" {
				ports, err := envtest.FreePorts(1)
				if err != nil {
					t.Fatal(err)
				}
				profilerAddr = fmt.Sprintf("127.0.0.1:%d", ports[0])
				args = append(args, "--profiler-address="+profilerAddr)
			}
			p := start(t, name, args...)
			begin := time.Now()
			p.waitReady(t)
			ready := time.Since(begin)
			reconciles := p.waitSettled(t, 30*time.Minute)
			rss, hwm, breakdown := p.memory(t)
			t.Logf("SCALE %s: ready after %s, settled after %s (%d reconciles): VmRSS %d MiB, VmHWM %d MiB, %s",
				name, ready.Round(time.Second), time.Since(begin).Round(time.Second), reconciles, rss>>20, hwm>>20, breakdown)
			if profileDir != "" {
				saveHeapProfile(t, profilerAddr, filepath.Join(profileDir, name+".heap.pprof"))
			}
			p.stop(t)
		})
	}
}

// scaleKinds are the watched kinds created, as minimal valid objects.
var scaleKinds = []struct {
	gvk  schema.GroupVersionKind
	body func(i int) map[string]any
}{
	{schema.GroupVersionKind{Group: "cluster.x-k8s.io", Version: "v1beta2", Kind: "Machine"}, func(i int) map[string]any {
		return map[string]any{"spec": map[string]any{
			"clusterName": "scale",
			"bootstrap": map[string]any{"configRef": map[string]any{
				"apiGroup": "bootstrap.cluster.x-k8s.io", "kind": "OpenshiftAssistedConfig", "name": fmt.Sprintf("m-%05d", i)}},
			"infrastructureRef": map[string]any{
				"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "OpenStackMachine", "name": fmt.Sprintf("m-%05d", i)},
		}}
	}},
	{schema.GroupVersionKind{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta2", Kind: "OpenStackMachine"}, func(int) map[string]any {
		return map[string]any{"spec": map[string]any{
			"flavor": map[string]any{"filter": map[string]any{"name": "m1.small"}},
			"image":  map[string]any{"filter": map[string]any{"name": "rhcos"}},
		}}
	}},
	{schema.GroupVersionKind{Group: "bootstrap.cluster.x-k8s.io", Version: "v1alpha2", Kind: "OpenshiftAssistedConfig"}, func(int) map[string]any {
		return map[string]any{"spec": map[string]any{}}
	}},
	{schema.GroupVersionKind{Group: "controlplane.cluster.x-k8s.io", Version: "v1alpha3", Kind: "OpenshiftAssistedControlPlane"}, func(int) map[string]any {
		return map[string]any{"spec": map[string]any{
			"distributionVersion": "4.19.0",
			"machineTemplate": map[string]any{"infrastructureRef": map[string]any{
				"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "OpenStackMachineTemplate", "name": "scale"}},
			"config": map[string]any{"baseDomain": "example.com"},
		}}
	}},
	{schema.GroupVersionKind{Group: "machine.openshift.io", Version: "v1beta1", Kind: "Machine"}, func(int) map[string]any {
		return map[string]any{"spec": map[string]any{}}
	}},
}

// createScaleObjects creates n objects of each scale kind, and n Secrets
// and ConfigMaps, in ns with 16 writers; it returns how many.
func createScaleObjects(ctx context.Context, t *testing.T, ns string, n int) int {
	t.Helper()
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = -1, 0 // no client-side limit
	c, err := client.New(cfg, client.Options{Scheme: env.Client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	filler := strings.Repeat("x", 1024)
	var objs []func(i int) client.Object
	controlPlaneMachines := false
	switch v := os.Getenv(scaleMachinesEnv); v {
	case "", "worker":
	case "control-plane":
		controlPlaneMachines = true
	default:
		t.Fatalf("%s=%q: want worker or control-plane", scaleMachinesEnv, v)
	}
	for _, k := range scaleKinds {
		objs = append(objs, func(i int) client.Object {
			u := &unstructured.Unstructured{Object: k.body(i)}
			u.SetGroupVersionKind(k.gvk)
			u.SetNamespace(ns)
			u.SetName(fmt.Sprintf("m-%05d", i))
			l := map[string]string{"cluster.x-k8s.io/cluster-name": "scale"}
			if controlPlaneMachines && k.gvk.Group == "cluster.x-k8s.io" && k.gvk.Kind == "Machine" {
				l["cluster.x-k8s.io/control-plane"] = ""
				l["cluster.x-k8s.io/control-plane-name"] = u.GetName()
			}
			u.SetLabels(l)
			return u
		})
	}
	objs = append(objs,
		func(i int) client.Object {
			return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("s-%05d", i)},
				StringData: map[string]string{"data": filler}}
		},
		func(i int) client.Object {
			return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("c-%05d", i)},
				Data: map[string]string{"data": filler}}
		})

	work := make(chan client.Object)
	var wg sync.WaitGroup
	var done atomic.Int64
	var firstErr atomic.Value
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for o := range work {
				if err := c.Create(ctx, o); err != nil {
					firstErr.CompareAndSwap(nil, fmt.Errorf("creating %T %s: %w", o, o.GetName(), err))
					continue
				}
				done.Add(1)
			}
		}()
	}
	for _, mk := range objs {
		for i := range n {
			if firstErr.Load() != nil {
				break
			}
			work <- mk(i)
		}
	}
	close(work)
	wg.Wait()
	if err, _ := firstErr.Load().(error); err != nil {
		t.Fatal(err)
	}
	return int(done.Load())
}

// settleQuiet is how long a manager's controllers must stay idle to count
// as settled.
const settleQuiet = 20 * time.Second

// waitSettled waits until every work queue of the manager is empty and no
// reconcile has run for settleQuiet, and returns the reconciles so far.
func (p *process) waitSettled(t *testing.T, timeout time.Duration) int64 {
	t.Helper()
	deadline := time.Now().Add(timeout)
	// The metrics server may start a moment after the probes.
	for {
		if code, _, _, err := get("https://"+p.metricsAddr+"/metrics", readerToken); err == nil && code == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s serves no metrics", p.name)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// Every controller's workers start once its caches have synced (the
	// initial list of every object): before that, an idle queue means
	// nothing.
	for {
		out := p.out.String()
		if started, synced := strings.Count(out, "Starting Controller"), strings.Count(out, "Starting workers"); started > 0 && synced >= started {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the controllers' caches did not sync in %s", p.name, timeout)
		}
		time.Sleep(time.Second)
	}
	last, since := int64(-1), time.Now()
	for {
		m, err := p.metricsErr("controller_runtime_reconcile_total", "workqueue_depth", "controller_runtime_active_workers")
		total, depth, active := m["controller_runtime_reconcile_total"], m["workqueue_depth"], m["controller_runtime_active_workers"]
		switch {
		case err != nil:
			// A busy manager may answer late; ask again.
			since = time.Now()
		case int64(total) != last || depth > 0 || active > 0:
			last, since = int64(total), time.Now()
		case time.Since(since) >= settleQuiet:
			return last
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not settled after %s: %d reconciles, queue depth %v", p.name, timeout, last, depth)
		}
		select {
		case <-p.done:
			t.Fatalf("%s exited: %v", p.name, p.err)
		case <-time.After(2 * time.Second):
		}
	}
}

// metrics is the sum of each named metric's samples on the manager's
// /metrics, from one scrape.
func (p *process) metrics(t *testing.T, names ...string) map[string]float64 {
	t.Helper()
	var m map[string]float64
	var err error
	for range 5 {
		if m, err = p.metricsErr(names...); err == nil {
			return m
		}
		time.Sleep(2 * time.Second)
	}
	t.Fatal(err)
	return nil
}

func (p *process) metricsErr(names ...string) (map[string]float64, error) {
	code, _, body, err := get("https://"+p.metricsAddr+"/metrics", readerToken)
	if err != nil {
		return nil, fmt.Errorf("GET /metrics: %w", err)
	}
	if code != 200 {
		return nil, fmt.Errorf("GET /metrics: %d", code)
	}
	sums := make(map[string]float64, len(names))
	for _, line := range strings.Split(body, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		if name, _, _ := strings.Cut(f[0], "{"); slices.Contains(names, name) {
			v, err := strconv.ParseFloat(f[len(f)-1], 64)
			if err != nil {
				return nil, fmt.Errorf("metric line %q: %w", line, err)
			}
			sums[name] += v
		}
	}
	return sums, nil
}

// saveHeapProfile writes the heap profile served at addr to path.
func saveHeapProfile(t *testing.T, addr, path string) {
	t.Helper()
	code, _, body, err := get("http://"+addr+"/debug/pprof/heap", "")
	if err != nil || code != http.StatusOK {
		t.Fatalf("GET /debug/pprof/heap: %d %v", code, err)
	}
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Logf("heap profile: %s", path)
}

// procStatus is the sizes (fields in kB) of /proc/<pid>/status, in bytes.
func procStatus(t *testing.T, pid int) map[string]int64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]int64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || !strings.HasSuffix(v, " kB") {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			t.Fatalf("%s: %q: %v", k, v, err)
		}
		out[k] = kb << 10
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// memory is the settled manager's VmRSS and VmHWM in bytes, and where its
// resident memory is: the binary and other files mapped (RssFile) against
// its own memory (RssAnon), and of the Go runtime's, the heap in use, the
// heap freed but not yet given back to the system, and the goroutine
// stacks (one read of /proc and one scrape of /metrics).
func (p *process) memory(t *testing.T) (rss, hwm int64, breakdown string) {
	t.Helper()
	st := procStatus(t, p.cmd.Process.Pid)
	rss, hwm = st["VmRSS"], st["VmHWM"]
	if rss == 0 || hwm == 0 {
		t.Fatalf("no VmRSS or VmHWM in /proc/%d/status", p.cmd.Process.Pid)
	}
	m := p.metrics(t, "go_memstats_heap_inuse_bytes", "go_memstats_heap_idle_bytes", "go_memstats_heap_released_bytes",
		"go_memstats_heap_alloc_bytes", "go_memstats_stack_inuse_bytes", "go_memstats_sys_bytes")
	mib := func(name string) int64 { return int64(m[name]) >> 20 }
	breakdown = fmt.Sprintf("Go heap in use %d MiB; RssAnon %d MiB, RssFile %d MiB; Go heap freed and not released %d MiB, alloc %d MiB; stacks %d MiB; Go sys %d MiB",
		mib("go_memstats_heap_inuse_bytes"), st["RssAnon"]>>20, st["RssFile"]>>20,
		int64(m["go_memstats_heap_idle_bytes"]-m["go_memstats_heap_released_bytes"])>>20,
		mib("go_memstats_heap_alloc_bytes"), mib("go_memstats_stack_inuse_bytes"), mib("go_memstats_sys_bytes"))
	return rss, hwm, breakdown
}
