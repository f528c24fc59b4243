package openstack

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	"github.com/ocp-capi/ocp-capi/test/chaos"
)

// API-server fault parameters (issue 21): a share of the manager's status
// writes answered 409, every watch cut after a few seconds, and an outage
// of the API server during create and during delete.
const (
	apiConflictRate = 0.2
	apiWatchMin     = 2 * time.Second
	apiWatchMax     = 8 * time.Second
	apiOutage       = 10 * time.Second
	// The outages start this long after the create and the delete.
	apiOutageAfterCreate = 20 * time.Second
	apiOutageAfterDelete = 5 * time.Second
	// After each outage the kube-apiserver process itself is killed and
	// started again this long after (envtest.RestartAPIServer).
	apiRestartDown = 5 * time.Second
)

// TestAPIServerFaults creates and deletes the kill storm's objects with
// the infrastructure-manager process talking to the API server through
// chaos.APIProxy: 20% of its status writes are answered 409 Conflict, its
// watches are cut after 2 to 8 s, and the API server is unreachable for
// 10 s (every connection cut, new ones refused) during create and again
// during delete; after each outage the kube-apiserver process is killed
// (SIGKILL) and started again 5 s later. Nothing may be lost or duplicated: every object Ready
// with a status that names the one server OpenStack has for it, exactly
// one OpenStack resource of each, the manager never restarted, and
// nothing left once deleted.
func TestAPIServerFaults(t *testing.T) {
	if os.Getenv(chaosEnv) == "" {
		t.Skipf("a chaos scenario (minutes): `make chaos` runs it (%s=1)", chaosEnv)
	}
	RegisterTestingT(t)
	needCloud(t)
	seed := testSeed(t)
	t.Logf("API-server faults: seed %d (OCP_CAPI_TEST_SEED replays the proxy's choices), load %s", seed, chaos.LoadAverage())
	bin := buildManager(t)

	ap, err := chaos.NewAPIProxy(env.Config, seed)
	Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() {
		if err := ap.Close(); err != nil {
			t.Error(err)
		}
	})
	restarts := 0
	var o *stormObjects
	restart := func(during string) {
		steps := o.createSteps(t)
		if during == "delete" {
			steps = o.deleteSteps(t)
		}
		Expect(env.RestartAPIServer(context.Background(), apiRestartDown)).To(Succeed())
		restarts++
		t.Logf("kube-apiserver restarted during %s, at: %s", during, strings.Join(steps, "; "))
	}
	row := chaos.Row{Scenario: "API-server faults", Result: "FAIL",
		Objects: "1 cluster (managed network, load balancer, bastion), 3 control-plane + 2 worker machines, 1 server with 2 volumes"}
	t.Cleanup(func() {
		if t.Failed() {
			row.Result = "FAIL"
		}
		s := ap.Stats()
		row.Faults = fmt.Sprintf("%d of %d status writes answered 409 (%.0f%%); %d of %d watches cut after %s-%s; %d outages of %s (create, delete); %d kube-apiserver restarts (SIGKILL, %s down)",
			s.Conflicts, s.StatusWrites, apiConflictRate*100, s.WatchesCut, s.Watches, apiWatchMin, apiWatchMax, s.Outages, apiOutage, restarts, apiRestartDown)
		if err := chaos.Record(row); err != nil {
			t.Error(err)
		}
		t.Logf("API-SERVER FAULTS ROW: %+v", row)
	})

	m := startSubprocessManagerWith(t, bin, proxyKubeconfig(ap.URL()), true)
	ap.SetFaults(apiConflictRate, apiWatchMin, apiWatchMax)
	o = &stormObjects{ns: newNamespace(t), name: fx.prefix + "-apif"}
	t.Cleanup(func() { expectNoClusterLeftovers(t, o.ns, o.name) })
	o.create(t)

	time.Sleep(apiOutageAfterCreate)
	createSteps := o.createSteps(t)
	Expect(ap.Outage(apiOutage)).To(Succeed())
	t.Logf("outage during create, at: %s", strings.Join(createSteps, "; "))
	restart("create")
	back := time.Now()
	o.waitReady(t)
	createConverge := time.Since(back)
	row.Duplicates = o.duplicates(t)
	o.expectStatusNamesTheServers(t)

	o.delete(t)
	time.Sleep(apiOutageAfterDelete)
	deleteSteps := o.deleteSteps(t)
	Expect(ap.Outage(apiOutage)).To(Succeed())
	t.Logf("outage during delete, at: %s", strings.Join(deleteSteps, "; "))
	restart("delete")
	back = time.Now()
	o.waitGone(t)
	deleteConverge := time.Since(back)
	left := o.leftInOpenStack(t)
	row.Leftovers = len(left)
	Expect(left).To(BeEmpty())

	select {
	case err := <-m.done:
		m.done <- err
		t.Fatalf("the manager exited during the faults (%v):\n%s", err, m.tail())
	default:
	}
	row.Converge = fmt.Sprintf("after the outage and restart: all Ready in %s, all gone in %s", createConverge.Round(time.Second), deleteConverge.Round(time.Second))
	// The first object's step (the cluster's, while it exists) and OpenStack's.
	row.Notes = fmt.Sprintf("seed %d; the manager process was not restarted; %d API requests through the proxy; outages at %s / %s (create) and %s / %s (delete)",
		seed, ap.Stats().Requests, createSteps[0], createSteps[len(createSteps)-1], deleteSteps[0], deleteSteps[len(deleteSteps)-1])
	row.Result = "pass"
}

// expectStatusNamesTheServers checks that no status write was lost for
// good: every OpenStackServer's status names the one server OpenStack has
// by its name.
func (o *stormObjects) expectStatusNamesTheServers(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	list := &infrav1alpha1.OpenStackServerList{}
	Expect(env.Client.List(ctx, list, client.InNamespace(o.ns))).To(Succeed())
	for _, s := range list.Items {
		pages, err := servers.List(direct.compute, servers.ListOpts{Name: "^" + s.Name + "$"}).AllPages(ctx)
		Expect(err).NotTo(HaveOccurred())
		all, _ := servers.ExtractServers(pages)
		Expect(all).To(HaveLen(1), "servers named %s", s.Name)
		Expect(ptr.Deref(s.Status.InstanceID, "")).To(Equal(all[0].ID), "%s: status.instanceID", s.Name)
		Expect(s.Status.Resources).NotTo(BeNil(), "%s: status.resources", s.Name)
		Expect(s.Status.Resources.Ports).NotTo(BeEmpty(), "%s: status.resources.ports", s.Name)
	}
}

// proxyKubeconfig is a kubeconfig for the API proxy (plain HTTP on the
// loopback; the proxy holds the credentials).
func proxyKubeconfig(url string) []byte {
	return []byte(`apiVersion: v1
kind: Config
clusters:
- name: proxy
  cluster:
    server: ` + url + `
contexts:
- name: proxy
  context:
    cluster: proxy
    user: proxy
current-context: proxy
users:
- name: proxy
  user: {}
`)
}
