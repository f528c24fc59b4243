package openstack

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	capiconditions "sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/test/chaos"
)

// Kill storm bounds (issue 21): at least killTarget SIGKILLs in all,
// rounds of one cluster each until then, and never more than
// killStormRounds rounds or killStormBudget of starting new ones.
const (
	killTarget      = 100
	killStormRounds = 8
	killStormBudget = 40 * time.Minute
	// Kills per phase of a round, at most: the rest of the phase runs
	// with one manager, to see it converge.
	createKills = 24
	deleteKills = 12
	// The i-th kill of a phase comes at a random moment in the first
	// base+i*widen after the new manager's controllers started: the
	// window widens with each kill, so that the kills reach the late steps
	// too (a manager that always died within 3 s never got past the
	// cluster's network: its first pass had not ended).
	createKillBase = 2 * time.Second
	deleteKillBase = 1 * time.Second
	killWiden      = time.Second
)

// killStormKillsEnv lowers the kill target, for a short try of the
// scenario; `make chaos` does not set it.
const killStormKillsEnv = "OCP_CAPI_KILL_STORM_KILLS"

// killStats is what the storm tells about itself.
type killStats struct {
	kills, rounds           int
	createKills, delKills   int
	steps                   chaos.Steps
	createConverge, delGone []time.Duration
	duplicates, leftovers   int
}

// TestKillStorm creates and deletes clusters (managed network, load
// balancer endpoint, bastion; 3 control-plane and 2 worker machines; one
// extra OpenStackServer with a root and a data volume) against the local
// OpenStack, and SIGKILLs the infrastructure-manager process at random
// moments during both, starting a new one after each kill. Afterwards,
// through the OpenStack API: no duplicate (a second server, port, volume,
// load balancer or other cluster resource for one object) while the
// objects exist, every object Ready, and nothing left once they are
// deleted. It records the kills, the steps they hit and the times to
// converge (test/chaos; `make chaos` prints them).
func TestKillStorm(t *testing.T) {
	if os.Getenv(chaosEnv) == "" {
		t.Skipf("a chaos scenario (minutes): `make chaos` runs it (%s=1)", chaosEnv)
	}
	RegisterTestingT(t)
	needCloud(t)
	target := killTarget
	if s := os.Getenv(killStormKillsEnv); s != "" {
		n, err := strconv.Atoi(s)
		Expect(err).NotTo(HaveOccurred())
		target = n
	}
	seed := testSeed(t)
	rng := rand.New(rand.NewSource(seed))
	t.Logf("kill storm: seed %d (OCP_CAPI_TEST_SEED replays the kill times), load %s", seed, chaos.LoadAverage())
	bin := buildManager(t)

	st := &killStats{steps: chaos.Steps{}}
	start := time.Now()
	t.Cleanup(func() { recordKillStorm(t, st, target, seed, time.Since(start)) })
	for st.kills < target && st.rounds < killStormRounds && time.Since(start) < killStormBudget {
		killRound(t, bin, rng, st)
		if t.Failed() {
			return
		}
	}
	t.Logf("kill storm: %d kills (%d in create, %d in delete) over %d rounds in %s; steps hit: %s",
		st.kills, st.createKills, st.delKills, st.rounds, time.Since(start).Round(time.Second), st.steps)
	Expect(st.kills).To(BeNumerically(">=", target), "the storm ran out of rounds or time before %d kills", target)
}

// kill ends the manager with SIGKILL: no graceful shutdown, requests in
// flight are cut.
func (m *subprocessManager) kill(t *testing.T) {
	t.Helper()
	_ = m.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case err := <-m.done:
		m.done <- err
	case <-time.After(30 * time.Second):
		t.Fatal("the manager did not die in 30s after SIGKILL")
	}
}

// stormObjects are one round's objects.
type stormObjects struct {
	ns, name string
	cluster  *clusterv1.Cluster
	osc      *infrav1.OpenStackCluster
	machines []*infrav1.OpenStackMachine
	server   *infrav1alpha1.OpenStackServer
	// provisioned: the Cluster was marked as CAPI core would.
	provisioned bool
}

// create makes the objects: the cluster (managed network, load balancer
// endpoint, bastion), 3 control-plane and 2 worker machines, and a
// server of its own with a root and a data volume (when the cloud has
// Cinder).
func (o *stormObjects) create(t *testing.T) {
	t.Helper()
	spec := managedClusterSpec()
	spec.Bastion = bastionSpec("m1.tiny")
	o.cluster, o.osc = clusterObjects(t, o.ns, o.name, spec)
	for _, n := range []string{"cp-0", "cp-1", "cp-2"} {
		o.machines = append(o.machines, cpMachine(t, o.ns, o.name, o.name+"-"+n))
	}
	for _, n := range []string{"w-0", "w-1"} {
		o.machines = append(o.machines, workerMachine(t, o.ns, o.name, o.name+"-"+n))
	}
	o.server = basicServer(o.ns, o.name+"-x")
	if direct.volume != nil {
		o.server.Spec.RootVolume = &infrav1.RootVolume{SizeGiB: 1}
		o.server.Spec.AdditionalBlockDevices = []infrav1.AdditionalBlockDevice{
			{Name: "data", SizeGiB: 1, Storage: infrav1.BlockDeviceStorage{Type: infrav1.VolumeBlockDevice}},
		}
	}
	create(t, o.server)
}

// markProvisioned plays CAPI core's part once the cluster's
// infrastructure is provisioned: the machines wait for it.
func (o *stormObjects) markProvisioned(t *testing.T) {
	t.Helper()
	if o.provisioned {
		return
	}
	get(t, o.osc)(NewWithT(t))
	if o.osc.Status.Initialization != nil && ptr.Deref(o.osc.Status.Initialization.Provisioned, false) {
		markInfrastructureProvisioned(t, o.cluster)
		o.provisioned = true
	}
}

// waitReady waits until every object is Ready, and checks that there is
// one OpenStackServer for each server the objects make.
func (o *stormObjects) waitReady(t *testing.T) {
	t.Helper()
	Eventually(func(g Gomega) {
		o.markProvisioned(t)
		g.Expect(o.allReady(t)).To(BeTrue(), "not Ready: %s", strings.Join(o.createSteps(t), "; "))
	}, 5*wait, time.Second).Should(Succeed())
	list := &infrav1alpha1.OpenStackServerList{}
	Expect(env.Client.List(context.Background(), list, client.InNamespace(o.ns))).To(Succeed())
	Expect(list.Items).To(HaveLen(o.servers()), "OpenStackServers (one per machine, the bastion's, the extra one)")
}

func (o *stormObjects) delete(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	Expect(env.Client.Delete(ctx, o.osc)).To(Succeed())
	for _, m := range o.machines {
		Expect(env.Client.Delete(ctx, m)).To(Succeed())
	}
	Expect(env.Client.Delete(ctx, o.server)).To(Succeed())
}

func (o *stormObjects) waitGone(t *testing.T) {
	t.Helper()
	Eventually(func(g Gomega) {
		g.Expect(o.allGone(t)).To(BeTrue(), "not gone: %s", strings.Join(o.deleteSteps(t), "; "))
	}, 5*wait, time.Second).Should(Succeed())
}

// leftInOpenStack waits (Nova and Cinder delete asynchronously) until
// OpenStack holds nothing of the objects, for up to 2 minutes, and
// returns what is left.
func (o *stormObjects) leftInOpenStack(t *testing.T) []string {
	t.Helper()
	left := clusterLeftovers(t, o.ns, o.name)
	deadline := time.Now().Add(2 * time.Minute)
	for len(left) > 0 && time.Now().Before(deadline) {
		time.Sleep(time.Second)
		left = clusterLeftovers(t, o.ns, o.name)
	}
	return left
}

// servers is the number of OpenStack servers the objects make: one per
// machine, the bastion and the extra server.
func (o *stormObjects) servers() int { return len(o.machines) + 2 }

// killPhase is the create or the delete of a round, under kills.
type killPhase struct {
	name string
	// kills is the most kills; window the first kill's, which widens by
	// killWiden with each kill.
	kills  int
	window time.Duration
	// count is the phase's counter in killStats.
	count *int
	// done tells that the phase is over; steps what the objects have done
	// (logged with each kill); after, if set, runs after each kill.
	done  func() bool
	steps func() []string
	after func()
}

// killDuring kills cur, the running manager, at a random moment of each
// window until the phase is done or has had its kills, and starts it again
// after each. It returns the running manager and when the last kill was
// (now, without one).
func killDuring(t *testing.T, bin string, rng *rand.Rand, st *killStats, cur *subprocessManager, p killPhase) (*subprocessManager, time.Time) {
	t.Helper()
	var last time.Time
	for i := 0; i < p.kills && !p.done(); i++ {
		time.Sleep(time.Duration(rng.Int63n(int64(p.window + time.Duration(i)*killWiden))))
		cur.kill(t)
		last = time.Now()
		steps := p.steps()
		st.kills++
		*p.count++
		st.steps.Add(steps...)
		t.Logf("round %d %s kill %d: %s", st.rounds, p.name, i, strings.Join(steps, "; "))
		if p.after != nil {
			p.after()
		}
		cur = startSubprocessManager(t, bin)
	}
	if last.IsZero() {
		last = time.Now()
	}
	return cur, last
}

func killRound(t *testing.T, bin string, rng *rand.Rand, st *killStats) {
	t.Helper()
	st.rounds++
	o := &stormObjects{ns: newNamespace(t), name: fmt.Sprintf("%s-ks%d", fx.prefix, st.rounds)}
	t.Cleanup(func() { expectNoClusterLeftovers(t, o.ns, o.name) })
	// Cleanups run last registered first. The storm's managers stop
	// before the objects' deletion cleanups (registered by create) run; on
	// a failure a rescue manager, started after them and stopped after the
	// deletions, deletes the objects rather than leave them in OpenStack.
	var rescue *subprocessManager
	t.Cleanup(func() {
		if rescue != nil {
			rescue.stop(t)
		}
	})
	cur := startSubprocessManager(t, bin)
	o.create(t)
	t.Cleanup(func() {
		if t.Failed() {
			rescue = startSubprocessManagerWith(t, bin, kubeconfigOf(t), false)
		}
	})

	// Create, with kills.
	cur, last := killDuring(t, bin, rng, st, cur, killPhase{
		name: "create", kills: createKills, window: createKillBase, count: &st.createKills,
		done:  func() bool { return o.allReady(t) },
		steps: func() []string { return o.createSteps(t) },
		after: func() { o.markProvisioned(t) },
	})
	o.waitReady(t)
	st.createConverge = append(st.createConverge, time.Since(last))
	st.duplicates += o.duplicates(t)

	// Delete, with kills.
	o.delete(t)
	cur, last = killDuring(t, bin, rng, st, cur, killPhase{
		name: "delete", kills: deleteKills, window: deleteKillBase, count: &st.delKills,
		done:  func() bool { return o.allGone(t) },
		steps: func() []string { return o.deleteSteps(t) },
	})
	o.waitGone(t)
	st.delGone = append(st.delGone, time.Since(last))
	cur.stop(t)
	left := o.leftInOpenStack(t)
	st.leftovers += len(left)
	Expect(left).To(BeEmpty(), "round %d: left in OpenStack", st.rounds)
	t.Logf("round %d: %d kills so far; create converged %s after the last kill, delete %s",
		st.rounds, st.kills, st.createConverge[len(st.createConverge)-1].Round(time.Second), st.delGone[len(st.delGone)-1].Round(time.Second))
}

// workerMachine is cpMachine without the control-plane label.
func workerMachine(t *testing.T, ns, cluster, name string) *infrav1.OpenStackMachine {
	t.Helper()
	osm := cpMachine(t, ns, cluster, name)
	m := &clusterv1.Machine{}
	Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, m)).To(Succeed())
	delete(m.Labels, clusterv1.MachineControlPlaneLabel)
	Expect(env.Client.Update(context.Background(), m)).To(Succeed())
	return osm
}

// objects reads the round's objects that still exist.
func (o *stormObjects) objects(t *testing.T) []client.Object {
	t.Helper()
	all := []client.Object{o.osc, o.server}
	for _, m := range o.machines {
		all = append(all, m)
	}
	var out []client.Object
	for _, obj := range all {
		err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)
		if apierrors.IsNotFound(err) {
			continue
		}
		Expect(err).NotTo(HaveOccurred())
		out = append(out, obj)
	}
	return out
}

func (o *stormObjects) allReady(t *testing.T) bool {
	objs := o.objects(t)
	for _, obj := range objs {
		if !capiconditions.IsTrue(obj.(capiconditions.Getter), infrav1.ReadyCondition) {
			return false
		}
	}
	return len(objs) == len(o.machines)+2
}

func (o *stormObjects) allGone(t *testing.T) bool { return len(o.objects(t)) == 0 }

// The step conditions, in the order the controllers work through them.
var (
	clusterSteps = []string{infrav1.NetworkReadyCondition, infrav1.RouterReadyCondition, infrav1.SecurityGroupsReadyCondition,
		infrav1.APIEndpointReadyCondition, infrav1.BastionReadyCondition}
	machineSteps = []string{infrav1.InstanceReadyCondition, infrav1.APIServerIngressReadyCondition}
	serverSteps  = []string{infrav1.ReferencesResolvedCondition, infrav1.PortsReadyCondition, infrav1.VolumesReadyCondition,
		infrav1.InstanceReadyCondition}
)

func kindOf(obj client.Object) (string, []string) {
	switch obj.(type) {
	case *infrav1.OpenStackCluster:
		return "cluster", clusterSteps
	case *infrav1.OpenStackMachine:
		// The label is on the Machine, not here; cpMachine names them so.
		if strings.Contains(obj.GetName(), "-cp-") {
			return "control-plane machine", machineSteps
		}
		return "worker machine", machineSteps
	default:
		return "server", serverSteps
	}
}

// createSteps are the steps the round's objects are at, and those of
// the OpenStackServers the machines and the bastion made.
func (o *stormObjects) createSteps(t *testing.T) []string {
	var out []string
	for _, obj := range o.objects(t) {
		kind, order := kindOf(obj)
		out = append(out, chaos.CreateStep(kind, obj.(capiconditions.Getter).GetConditions(), order))
	}
	out = append(out, o.ownedServerSteps(t, false)...)
	return append(out, o.openStackStep(t, false))
}

// openStackOrder is the order the cluster's resources are created in.
var openStackOrder = []string{"network", "subnet", "router", "router interface", "security group controlplane",
	"security group worker", "load balancer", "listener", "pool", "health monitor", "API floating IP"}

// openStackStep is the step as OpenStack shows it (chaos.OpenStackStep).
func (o *stormObjects) openStackStep(t *testing.T, deleting bool) string {
	servers := 0
	for _, l := range leftovers(t, o.name) {
		if strings.HasPrefix(l, "server ") {
			servers++
		}
	}
	return chaos.OpenStackStep(deleting, clusterResourceCounts(t, o.ns, o.name), openStackOrder, servers, o.servers())
}

func (o *stormObjects) deleteSteps(t *testing.T) []string {
	var out []string
	for _, obj := range o.objects(t) {
		kind, _ := kindOf(obj)
		conds := obj.(capiconditions.Getter).GetConditions()
		if _, ok := obj.(*infrav1.OpenStackMachine); ok {
			// No Deleting condition of its own: it waits for its server.
			out = append(out, kind+": deleting, Ready "+reasonOf(conds, infrav1.ReadyCondition))
			continue
		}
		out = append(out, chaos.DeleteStep(kind, conds))
	}
	out = append(out, o.ownedServerSteps(t, true)...)
	return append(out, o.openStackStep(t, true))
}

// ownedServerSteps are the steps of the OpenStackServers of the machines
// and the bastion ("machine's server", "bastion's server").
func (o *stormObjects) ownedServerSteps(t *testing.T, deleting bool) []string {
	list := &infrav1alpha1.OpenStackServerList{}
	Expect(env.Client.List(context.Background(), list, client.InNamespace(o.ns))).To(Succeed())
	var out []string
	for i := range list.Items {
		s := &list.Items[i]
		if s.Name == o.server.Name {
			continue
		}
		kind := "machine's server"
		if strings.Contains(s.Name, "bastion") {
			kind = "bastion's server"
		}
		if deleting {
			out = append(out, chaos.DeleteStep(kind, s.GetConditions()))
		} else {
			out = append(out, chaos.CreateStep(kind, s.GetConditions(), serverSteps))
		}
	}
	return out
}

func reasonOf(conds []metav1.Condition, typ string) string {
	for _, c := range conds {
		if c.Type == typ {
			return string(c.Status) + " " + c.Reason
		}
	}
	return "not set"
}

// duplicates counts, through the OpenStack API, the resources that exist
// more than once: the cluster's (network, router, load balancer, ...),
// and servers, ports, trunks and volumes by name. It also checks that
// every server exists.
func (o *stormObjects) duplicates(t *testing.T) int {
	t.Helper()
	n := 0
	for kind, c := range clusterResourceCounts(t, o.ns, o.name) {
		if c > 1 {
			t.Errorf("%d %s", c, kind)
			n += c - 1
		}
	}
	names := map[string]int{}
	servers := 0
	for _, l := range leftovers(t, o.name) {
		kind, rest, _ := strings.Cut(l, " ")
		key, _, _ := strings.Cut(rest, " (")
		names[kind+" "+key]++
		if kind == "server" {
			servers++
		}
	}
	keys := make([]string, 0, len(names))
	for k := range names {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if names[k] > 1 {
			t.Errorf("%d of %s", names[k], k)
			n += names[k] - 1
		}
	}
	Expect(servers).To(Equal(o.servers()), "servers: %v", keys)
	return n
}

// recordKillStorm writes the storm's row of the summary table.
func recordKillStorm(t *testing.T, st *killStats, target int, seed int64, took time.Duration) {
	result := "pass"
	if t.Failed() {
		result = "FAIL"
	}
	row := chaos.Row{
		Scenario: "kill storm",
		Faults: fmt.Sprintf("%d SIGKILLs of the infrastructure-manager process (%d during create, %d during delete; target %d)",
			st.kills, st.createKills, st.delKills, target),
		Objects: fmt.Sprintf("%d rounds, each: 1 cluster (managed network, load balancer, bastion), 3 control-plane + 2 worker machines, 1 server with 2 volumes", st.rounds),
		Converge: fmt.Sprintf("after the last kill: all Ready in %s, all gone in %s",
			chaos.Spread(st.createConverge), chaos.Spread(st.delGone)),
		Duplicates: st.duplicates,
		Leftovers:  st.leftovers,
		Result:     result,
		Notes:      fmt.Sprintf("seed %d; %s in all; steps hit: %s", seed, took.Round(time.Second), st.steps),
	}
	if err := chaos.Record(row); err != nil {
		t.Error(err)
	}
	t.Logf("KILL STORM ROW: %+v", row)
}

func kubeconfigOf(t *testing.T) []byte {
	kc, err := env.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	return kc
}
