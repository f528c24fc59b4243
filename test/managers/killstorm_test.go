package managers

import (
	"context"
	"fmt"
	"math/rand"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	capiconditions "sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/ocp-capi/ocp-capi/api/bootstrap/v1alpha2"
	controlplanev1 "github.com/ocp-capi/ocp-capi/api/controlplane/v1alpha3"
	"github.com/ocp-capi/ocp-capi/bootstrap"
	"github.com/ocp-capi/ocp-capi/controlplane"
	aiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/agentinstall/v1beta1"
	hivev1 "github.com/ocp-capi/ocp-capi/internal/consumed/hive/v1"
	hiveextv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/hiveext/v1beta1"
	simulator "github.com/ocp-capi/ocp-capi/test/assisted"
	"github.com/ocp-capi/ocp-capi/test/chaos"
	"github.com/ocp-capi/ocp-capi/test/envtest"
	"github.com/ocp-capi/ocp-capi/test/fakecapi"
)

// Kill storm bounds (issue 21): at least killTarget SIGKILLs in all,
// rounds of one cluster each until then, and never more than
// killStormRounds rounds or killStormBudget of starting new ones.
const (
	killTarget      = 100
	killStormRounds = 40
	killStormBudget = 40 * time.Minute
	// Kills per phase of a round, at most: the rest of the phase runs
	// with both managers up, to see it converge.
	createKills = 16
	deleteKills = 8
	// The i-th kill of a phase comes at a random moment in the first
	// base+i*widen after the previous manager was started again: the
	// window widens with each kill so that the late steps (the
	// installation, the kubeconfig, the Nodes; the hive objects' release)
	// are reached too.
	createKillBase = time.Second
	deleteKillBase = 300 * time.Millisecond
	killWiden      = 250 * time.Millisecond
	// installStep is the least time between two steps of the simulated
	// installation (the simulator's MinStepInterval; assisted-service's
	// own subsystem tests run its cluster monitor every 1 s), so that
	// kills land inside its states.
	installStep = time.Second
	// convergeWait bounds every wait for convergence; reached only on
	// failure.
	convergeWait = 3 * time.Minute
)

// killStormKillsEnv lowers the kill target, for a short try of the
// scenario; `make chaos` does not set it.
const killStormKillsEnv = "OCP_CAPI_KILL_STORM_KILLS"

// The cluster each round makes, in a namespace of its own.
const (
	clusterName  = "c1"
	controlPlane = "cp"
	cpTemplate   = "cp-template"
	wTemplate    = "worker-template"
	mdName       = "md"
	cpReplicas   = 3
	workers      = 2
)

// rhcos is the disk image of the Metal3MachineTemplates.
var rhcos = map[string]any{"url": "https://mirror.example.com/rhcos.qcow2", "diskFormat": "qcow2",
	"checksum": "https://mirror.example.com/rhcos.qcow2.sha256", "checksumType": "sha256"}

var infraGV = fakecapi.InfraGroupVersion

// killStats is what the storm tells about itself.
type killStats struct {
	kills, rounds         int
	createKills, delKills int
	byManager             map[string]int
	// together counts the kills of both managers at once.
	together int
	// onChange counts the kills that waited for a change of stage
	// (killPhase.stage) and saw it.
	onChange int
	// standInRestarts counts the restarts of the stand-ins (pickVictims),
	// createRestarts and delRestarts those of each phase.
	standInRestarts, createRestarts, delRestarts int
	steps                                        chaos.Steps
	createConverge, delGone                      []time.Duration
	duplicates, leftovers                        int
}

// chaosEnv opts in to the chaos scenarios; `make chaos` sets it.
const chaosEnv = "OCP_CAPI_CHAOS"

// TestKillStormBootstrapControlPlane creates and deletes clusters of 3
// control-plane and 2 worker Machines (a MachineDeployment) through the
// assisted-service simulator, and SIGKILLs the bootstrap-manager and
// controlplane-manager processes, one, the other or both at random, at
// random moments during both, starting the killed ones again after each
// kill; one kill in six restarts the stand-ins (the simulator and the fake
// CAPI core) instead.
// Afterwards, through the API server: no duplicate (a second Machine,
// config, Metal3Machine, InfraEnv, ClusterDeployment,
// AgentClusterInstall, ClusterImageSet or kubeconfig Secret for one
// object; an Agent approved for two Machines, or two for one), every
// object Available or Ready, and, once deleted, nothing left and no
// finalizer kept. It records the kills, the steps they hit and the times
// to converge (test/chaos; `make chaos` prints them).
func TestKillStormBootstrapControlPlane(t *testing.T) {
	if os.Getenv(chaosEnv) == "" {
		t.Skipf("a chaos scenario (minutes): `make chaos` runs it (%s=1)", chaosEnv)
	}
	RegisterTestingT(t)
	target := killTarget
	if s := os.Getenv(killStormKillsEnv); s != "" {
		n, err := strconv.Atoi(s)
		Expect(err).NotTo(HaveOccurred())
		target = n
	}
	seed := time.Now().UnixNano()
	if s := os.Getenv("OCP_CAPI_TEST_SEED"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		Expect(err).NotTo(HaveOccurred())
		seed = n
	}
	rng := rand.New(rand.NewSource(seed))
	t.Logf("kill storm: seed %d (OCP_CAPI_TEST_SEED replays the kill times), load %s", seed, chaos.LoadAverage())
	s := newStormStage(t)

	st := &killStats{steps: chaos.Steps{}, byManager: map[string]int{}}
	start := time.Now()
	t.Cleanup(func() { recordKillStorm(t, st, target, seed, time.Since(start)) })
	procs := map[string]*stormProcess{}
	for name := range stormManagers {
		procs[name] = s.start(t, name)
	}
	for st.kills < target && st.rounds < killStormRounds && time.Since(start) < killStormBudget {
		killRound(t, s, rng, st, procs)
		if t.Failed() {
			return
		}
	}
	t.Logf("kill storm: %d kills (%d in create, %d in delete; %v) and %d restarts of the stand-ins over %d rounds in %s; steps hit: %s",
		st.kills, st.createKills, st.delKills, st.byManager, st.standInRestarts, st.rounds, time.Since(start).Round(time.Second), st.steps)
	Expect(st.kills).To(BeNumerically(">=", target), "the storm ran out of rounds or time before %d kills", target)
}

// killPhase is the create or the delete of a round, under kills.
type killPhase struct {
	name string
	// kills is the most kills; window the first kill's, which widens by
	// killWiden with each kill.
	kills  int
	window time.Duration
	count  *int
	// restarts counts the phase's restarts of the stand-ins.
	restarts *int
	// done tells that the phase is over; steps what the objects are
	// doing (logged with each kill).
	done  func() bool
	steps func() []string
	// stage names where the phase is, in short: half the kills wait for
	// it to change and land right after, so that a step that lasts one
	// pace of the simulator (installed, for one) is hit too, and not only
	// the long ones that random moments favour.
	stage func() string
}

// killDuring kills one of the managers or both (pickVictims) at a random
// moment of each window until the phase is done or has had its kills, and
// starts them again after each. It returns when the last kill was (now,
// without one).
func killDuring(t *testing.T, s *stormStage, rng *rand.Rand, st *killStats, procs map[string]*stormProcess, p killPhase) time.Time {
	t.Helper()
	var last time.Time
	for i := 0; i < p.kills && !p.done(); i++ {
		bound := p.window + time.Duration(i)*killWiden
		wait := time.Duration(rng.Int63n(int64(bound))) // drawn either way, so that a seed replays the same kills
		how := "at a random moment"
		if p.stage != nil && rng.Intn(2) == 0 {
			how = "on a change of " + p.stage()
			if waitForChange(p.stage, bound) {
				st.onChange++
			}
		} else {
			time.Sleep(wait)
		}
		victims := pickVictims(rng)
		if p.done() {
			break
		}
		if slices.Contains(victims, standIns) {
			// Not a SIGKILL, and not counted as one: the stand-ins run in
			// this process.
			s.restartStandIns(t)
			st.standInRestarts++
			*p.restarts++
			steps := p.steps()
			st.steps.Add(steps...)
			t.Logf("round %d %s restart of the stand-ins (%s): %s", st.rounds, p.name, how, strings.Join(steps, "; "))
			continue
		}
		for _, name := range victims {
			procs[name].kill(t)
			st.kills++
			*p.count++
			st.byManager[name]++
		}
		if len(victims) > 1 {
			st.together++
		}
		last = time.Now()
		steps := p.steps()
		st.steps.Add(steps...)
		t.Logf("round %d %s kill %d (%s, %s): %s", st.rounds, p.name, i, strings.Join(victims, " and "), how, strings.Join(steps, "; "))
		for _, name := range victims {
			procs[name] = s.start(t, name)
		}
	}
	if last.IsZero() {
		last = time.Now()
	}
	return last
}

// waitForChange waits until stage reports something else than it does
// now, or for at most bound; it tells whether it changed.
func waitForChange(stage func() string, bound time.Duration) bool {
	from := stage()
	for deadline := time.Now().Add(bound); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if stage() != from {
			return true
		}
	}
	return false
}

// standIns names the victim that is the stand-ins' manager (the
// assisted-service simulator and the fake CAPI core), restarted, not
// SIGKILLed.
const standIns = "stand-ins"

// pickVictims chooses whom a kill hits: the bootstrap manager or the
// control-plane manager (2 in 6 each), both at once (1 in 6, as when the
// node that runs both pods dies), or the stand-ins, restarted (1 in 6).
func pickVictims(rng *rand.Rand) []string {
	switch n := rng.Intn(6); {
	case n < 2:
		return []string{"bootstrap-manager"}
	case n < 4:
		return []string{"controlplane-manager"}
	case n < 5:
		return []string{"bootstrap-manager", "controlplane-manager"}
	default:
		return []string{standIns}
	}
}

func killRound(t *testing.T, s *stormStage, rng *rand.Rand, st *killStats, procs map[string]*stormProcess) {
	t.Helper()
	st.rounds++
	ns, err := env.NewNamespace(context.Background(), "ks")
	Expect(err).NotTo(HaveOccurred())
	r := &round{ns: ns.Name}
	r.create(t)

	last := killDuring(t, s, rng, st, procs, killPhase{
		name: "create", kills: createKills, window: createKillBase, count: &st.createKills, restarts: &st.createRestarts,
		done: r.allReady, steps: r.createSteps, stage: r.createStage,
	})
	Eventually(func(g Gomega) {
		g.Expect(r.allReady()).To(BeTrue(), "not Available: %s", strings.Join(r.createSteps(), "; "))
	}, convergeWait, 200*time.Millisecond).Should(Succeed())
	st.createConverge = append(st.createConverge, time.Since(last))
	dups := r.duplicates(t)
	st.duplicates += len(dups)
	Expect(dups).To(BeEmpty(), "round %d: duplicates", st.rounds)

	r.delete(t)
	last = killDuring(t, s, rng, st, procs, killPhase{
		name: "delete", kills: deleteKills, window: deleteKillBase, count: &st.delKills, restarts: &st.delRestarts,
		done: func() bool { return len(r.left()) == 0 }, steps: r.deleteSteps,
		stage: func() string { return strings.Join(r.deleteSteps(), "; ") },
	})
	Eventually(func(g Gomega) {
		g.Expect(r.left()).To(BeEmpty(), "not gone: %s", strings.Join(r.deleteSteps(), "; "))
	}, convergeWait, 200*time.Millisecond).Should(Succeed())
	st.delGone = append(st.delGone, time.Since(last))
	left := r.leftovers(t)
	st.leftovers += len(left)
	Expect(left).To(BeEmpty(), "round %d: leftovers", st.rounds)
	t.Logf("round %d: %d kills so far; create converged %s after the last kill, delete %s", st.rounds, st.kills,
		st.createConverge[len(st.createConverge)-1].Round(time.Millisecond), st.delGone[len(st.delGone)-1].Round(time.Millisecond))
}

// round is one cluster of the storm.
type round struct{ ns string }

func (r *round) c() client.Client { return env.Client }

func (r *round) key(name string) types.NamespacedName {
	return types.NamespacedName{Namespace: r.ns, Name: name}
}

func (r *round) createObj(t *testing.T, obj client.Object) {
	t.Helper()
	obj.SetNamespace(r.ns)
	Expect(r.c().Create(context.Background(), obj)).To(Succeed(), "creating %T %s", obj, obj.GetName())
}

// create makes what a user and CAPI core make: the Cluster (its
// infrastructure provisioned), the control plane (owned by the Cluster),
// the Metal3MachineTemplates, the MachineDeployment and the worker
// Machines its MachineSet would make, each with its config and
// Metal3Machine.
func (r *round) create(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	r.createObj(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "pull-secret"},
		Data: map[string][]byte{".dockerconfigjson": []byte(`{"auths":{}}`)}, Type: corev1.SecretTypeDockerConfigJson})
	for _, name := range []string{cpTemplate, wTemplate} {
		u := &unstructured.Unstructured{Object: map[string]any{
			"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"image": rhcos}}},
		}}
		u.SetGroupVersionKind(infraGV.WithKind("Metal3MachineTemplate"))
		u.SetName(name)
		r.createObj(t, u)
	}
	cluster := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: clusterName},
		Spec: clusterv1.ClusterSpec{
			Paused: ptr.To(false),
			ControlPlaneRef: clusterv1.ContractVersionedObjectReference{APIGroup: controlplanev1.GroupVersion.Group,
				Kind: "OpenshiftAssistedControlPlane", Name: controlPlane},
			ClusterNetwork: clusterv1.ClusterNetwork{
				Pods:     clusterv1.NetworkRanges{CIDRBlocks: []string{"10.128.0.0/14"}},
				Services: clusterv1.NetworkRanges{CIDRBlocks: []string{"172.30.0.0/16"}},
			},
		},
	}
	r.createObj(t, cluster)
	Expect(fakecapi.ProvisionCluster(ctx, r.c(), cluster, "fd-a", "fd-b", "fd-c")).To(Succeed())
	oacp := &controlplanev1.OpenshiftAssistedControlPlane{
		ObjectMeta: metav1.ObjectMeta{Name: controlPlane, Labels: map[string]string{clusterv1.ClusterNameLabel: clusterName},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster",
				Name: cluster.Name, UID: cluster.UID}}},
		Spec: controlplanev1.OpenshiftAssistedControlPlaneSpec{
			DistributionVersion: "4.19.0",
			Replicas:            ptr.To[int32](cpReplicas),
			MachineTemplate: controlplanev1.OpenshiftAssistedControlPlaneMachineTemplate{
				InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infraGV.Group, Kind: "Metal3MachineTemplate", Name: cpTemplate},
			},
			Config: controlplanev1.OpenshiftAssistedControlPlaneConfigSpec{
				BaseDomain:    "example.com",
				PullSecretRef: &corev1.LocalObjectReference{Name: "pull-secret"},
			},
			OpenshiftAssistedConfigSpec: bootstrapv1.OpenshiftAssistedConfigSpec{BootMode: bootstrapv1.BootModeDiscoveryIgnition},
		},
	}
	r.createObj(t, oacp)
	pool := map[string]string{"pool": mdName}
	r.createObj(t, &clusterv1.MachineDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: mdName, Labels: map[string]string{clusterv1.ClusterNameLabel: clusterName}},
		Spec: clusterv1.MachineDeploymentSpec{
			ClusterName: clusterName, Replicas: ptr.To[int32](workers),
			Selector: metav1.LabelSelector{MatchLabels: pool},
			Template: clusterv1.MachineTemplateSpec{
				ObjectMeta: clusterv1.ObjectMeta{Labels: pool},
				Spec: clusterv1.MachineSpec{
					ClusterName: clusterName,
					Bootstrap: clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{
						APIGroup: bootstrapv1.GroupVersion.Group, Kind: "OpenshiftAssistedConfigTemplate", Name: "workers"}},
					InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infraGV.Group, Kind: "Metal3MachineTemplate", Name: wTemplate},
				},
			},
		},
	})
	for i := range workers {
		r.worker(t, fmt.Sprintf("w-%d", i), pool)
	}
}

// worker creates a worker Machine with its config and Metal3Machine, as
// the MachineDeployment's MachineSet (CAPI core) makes them.
func (r *round) worker(t *testing.T, name string, pool map[string]string) {
	t.Helper()
	labels := map[string]string{clusterv1.ClusterNameLabel: clusterName}
	for k, v := range pool {
		labels[k] = v
	}
	m := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: clusterv1.MachineSpec{
			ClusterName: clusterName,
			Bootstrap: clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: bootstrapv1.GroupVersion.Group, Kind: "OpenshiftAssistedConfig", Name: name}},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infraGV.Group, Kind: "Metal3Machine", Name: name},
		},
	}
	r.createObj(t, m)
	owner := fakecapi.MachineOwner(m)
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"image": rhcos}}}
	u.SetGroupVersionKind(infraGV.WithKind("Metal3Machine"))
	u.SetName(name)
	u.SetLabels(labels)
	u.SetAnnotations(map[string]string{clusterv1.TemplateClonedFromNameAnnotation: wTemplate,
		clusterv1.TemplateClonedFromGroupKindAnnotation: "Metal3MachineTemplate.infrastructure.cluster.x-k8s.io"})
	u.SetOwnerReferences([]metav1.OwnerReference{owner})
	r.createObj(t, u)
	r.createObj(t, &bootstrapv1.OpenshiftAssistedConfig{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, OwnerReferences: []metav1.OwnerReference{owner}},
		Spec:       bootstrapv1.OpenshiftAssistedConfigSpec{BootMode: bootstrapv1.BootModeDiscoveryIgnition},
	})
}

// delete deletes what CAPI core deletes when the Cluster goes: the
// control plane, the MachineDeployment and its Machines; then the Cluster
// (whose finalizer CAPI core would hold until those are gone; it runs no
// controller here).
func (r *round) delete(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	for _, obj := range []client.Object{
		&controlplanev1.OpenshiftAssistedControlPlane{ObjectMeta: metav1.ObjectMeta{Name: controlPlane}},
		&clusterv1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Name: mdName}},
		&clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "w-0"}},
		&clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "w-1"}},
	} {
		obj.SetNamespace(r.ns)
		Expect(r.c().Delete(ctx, obj)).To(Succeed(), "deleting %T %s", obj, obj.GetName())
	}
}

// ---- reading ----

func (r *round) oacp() *controlplanev1.OpenshiftAssistedControlPlane {
	o := &controlplanev1.OpenshiftAssistedControlPlane{}
	if err := r.c().Get(context.Background(), r.key(controlPlane), o); err != nil {
		if !apierrors.IsNotFound(err) {
			Expect(err).NotTo(HaveOccurred())
		}
		return nil
	}
	return o
}

func (r *round) aci() *hiveextv1beta1.AgentClusterInstall {
	aci := &hiveextv1beta1.AgentClusterInstall{}
	if err := r.c().Get(context.Background(), r.key(controlPlane), aci); err != nil {
		if !apierrors.IsNotFound(err) {
			Expect(err).NotTo(HaveOccurred())
		}
		return nil
	}
	return aci
}

func (r *round) list(l client.ObjectList, opts ...client.ListOption) []client.Object {
	Expect(r.c().List(context.Background(), l, append(opts, client.InNamespace(r.ns))...)).To(Succeed())
	objs, err := apimeta.ExtractList(l)
	Expect(err).NotTo(HaveOccurred())
	out := make([]client.Object, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.(client.Object))
	}
	return out
}

func (r *round) machines() []clusterv1.Machine {
	l := &clusterv1.MachineList{}
	r.list(l)
	return l.Items
}

func (r *round) configs() []bootstrapv1.OpenshiftAssistedConfig {
	l := &bootstrapv1.OpenshiftAssistedConfigList{}
	r.list(l)
	return l.Items
}

func (r *round) metal3Machines() []client.Object {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(infraGV.WithKind("Metal3MachineList"))
	return r.list(l)
}

// imageSets are the ClusterImageSets of this round's control plane.
func (r *round) imageSets() []hivev1.ClusterImageSet {
	l := &hivev1.ClusterImageSetList{}
	Expect(r.c().List(context.Background(), l)).To(Succeed())
	var out []hivev1.ClusterImageSet
	for _, is := range l.Items {
		if is.Annotations[controlplanev1.OwnerAnnotation] == r.ns+"/"+controlPlane {
			out = append(out, is)
		}
	}
	return out
}

// allReady: the control plane Available and Ready, the installation in
// adding-hosts, every Machine Ready with its Node, every config Ready,
// every approved Agent installed.
func (r *round) allReady() bool {
	o := r.oacp()
	if o == nil || !capiconditions.IsTrue(o, controlplanev1.AvailableCondition) || !capiconditions.IsTrue(o, controlplanev1.ReadyCondition) {
		return false
	}
	// The installation is over only when assisted-service has made the
	// installed cluster a day-2 one (adding-hosts); the control plane is
	// Available a step before that.
	if aci := r.aci(); aci == nil || aci.Status.DebugInfo.State != hiveextv1beta1.StateAddingHosts {
		return false
	}
	ms := r.machines()
	if len(ms) != cpReplicas+workers {
		return false
	}
	for i := range ms {
		if !capiconditions.IsTrue(&ms[i], clusterv1.ReadyCondition) || ms[i].Status.NodeRef.Name == "" {
			return false
		}
	}
	cs := r.configs()
	for i := range cs {
		if !capiconditions.IsTrue(&cs[i], bootstrapv1.ReadyCondition) {
			return false
		}
	}
	approved := 0
	for _, a := range r.agents() {
		if a.Spec.Approved {
			approved++
			if s := a.Status.DebugInfo.State; s != "installed" && s != "added-to-existing-cluster" {
				return false
			}
		}
	}
	return len(cs) == cpReplicas+workers && approved == cpReplicas+workers
}

func (r *round) agents() []aiv1beta1.Agent {
	l := &aiv1beta1.AgentList{}
	r.list(l)
	return l.Items
}

// The step conditions, in the order the controllers work through them.
var (
	cpSteps     = []string{controlplanev1.MachinesCreatedCondition, controlplanev1.AvailableCondition, controlplanev1.KubeconfigAvailableCondition, controlplanev1.MachinesReadyCondition}
	configSteps = []string{bootstrapv1.DataSecretAvailableCondition, bootstrapv1.AgentApprovedCondition}
)

// createSteps are the steps the round is at: the control plane's and the
// configs' (their first condition, in order, that is not True, with its
// reason), the installation's state, and how many Machines have a Node.
func (r *round) createSteps() []string {
	var out []string
	if o := r.oacp(); o != nil {
		out = append(out, chaos.CreateStep("control plane", o.Status.Conditions, cpSteps))
	}
	for _, c := range r.configs() {
		kind := "worker config"
		if c.Labels[clusterv1.MachineControlPlaneLabel] != "" || strings.HasPrefix(c.Name, controlPlane) {
			kind = "control-plane config"
		}
		out = append(out, chaos.CreateStep(kind, c.Status.Conditions, configSteps))
	}
	if aci := r.aci(); aci != nil {
		out = append(out, "installation: "+orNone(aci.Status.DebugInfo.State))
	} else {
		out = append(out, "installation: no AgentClusterInstall")
	}
	nodes := 0
	ms := r.machines()
	for _, m := range ms {
		if m.Status.NodeRef.Name != "" {
			nodes++
		}
	}
	out = append(out, fmt.Sprintf("Machines: %d of %d, %d with a Node", len(ms), cpReplicas+workers, nodes))
	return out
}

// createStage is the installation's state, or the Machines and Nodes
// once it is installed.
func (r *round) createStage() string {
	aci := r.aci()
	if aci == nil {
		return "the installation (none yet)"
	}
	stage := "the installation (" + orNone(aci.Status.DebugInfo.State) + ")"
	if aci.Status.DebugInfo.State == hiveextv1beta1.StateAddingHosts {
		nodes := 0
		for _, m := range r.machines() {
			if m.Status.NodeRef.Name != "" {
				nodes++
			}
		}
		stage += fmt.Sprintf(" or the Nodes (%d)", nodes)
	}
	return stage
}

func orNone(s string) string {
	if s == "" {
		return "no state"
	}
	return s
}

var digits = regexp.MustCompile(`[0-9]+`)

// deleteSteps are what is left, kind by kind, the control plane's
// Available message (it says what its deletion waits for), numbers
// replaced by N, and the installation's state while it is there.
func (r *round) deleteSteps() []string {
	var out []string
	if o := r.oacp(); o != nil {
		c := capiconditions.Get(o, controlplanev1.AvailableCondition)
		msg := "deletion not started"
		if c != nil && c.Reason == controlplanev1.DeletingReason {
			msg = digits.ReplaceAllString(c.Message, "N")
		}
		out = append(out, "control plane: "+msg)
	}
	if aci := r.aci(); aci != nil {
		out = append(out, "installation: "+orNone(aci.Status.DebugInfo.State))
	}
	kinds := map[string]bool{}
	for _, l := range r.left() {
		kind, _, _ := strings.Cut(l, " ")
		kinds[kind] = true
	}
	names := make([]string, 0, len(kinds))
	for k := range kinds {
		names = append(names, k)
	}
	sort.Strings(names)
	if len(names) == 0 {
		// The deletion ended between the last look and the kill.
		return append(out, "left: nothing")
	}
	return append(out, "left: "+strings.Join(names, ", "))
}

// left lists what the deletion has to remove: every object of the round
// that a controller (ours, the simulator's assisted-service, the fake CAPI
// core) holds with a finalizer, and the ClusterImageSet.
func (r *round) left() []string {
	var out []string
	add := func(kind string, objs []client.Object) {
		for _, o := range objs {
			out = append(out, kind+" "+o.GetName())
		}
	}
	add("OpenshiftAssistedControlPlane", r.list(&controlplanev1.OpenshiftAssistedControlPlaneList{}))
	add("Machine", r.list(&clusterv1.MachineList{}))
	add("OpenshiftAssistedConfig", r.list(&bootstrapv1.OpenshiftAssistedConfigList{}))
	add("Metal3Machine", r.metal3Machines())
	add("InfraEnv", r.list(&aiv1beta1.InfraEnvList{}))
	add("Agent", r.list(&aiv1beta1.AgentList{}))
	add("AgentClusterInstall", r.list(&hiveextv1beta1.AgentClusterInstallList{}))
	add("ClusterDeployment", r.list(&hivev1.ClusterDeploymentList{}))
	for _, is := range r.imageSets() {
		out = append(out, "ClusterImageSet "+is.Name)
	}
	return out
}

// leftovers is, once the deletion is over, what is left of the cluster:
// anything left() lists, any object of the namespace that still has a
// finalizer, and any Secret our providers made that no deleted owner
// takes with it (the garbage collector, which envtest does not run,
// collects what is owned).
func (r *round) leftovers(t *testing.T) []string {
	t.Helper()
	out := r.left()
	for _, s := range r.list(&corev1.SecretList{}) {
		if len(s.GetFinalizers()) > 0 {
			out = append(out, "Secret "+s.GetName()+" with finalizers "+strings.Join(s.GetFinalizers(), ","))
		}
		if s.GetName() == "pull-secret" {
			continue
		}
		if len(s.GetOwnerReferences()) == 0 {
			out = append(out, "Secret "+s.GetName()+" without an owner")
		}
	}
	return out
}

// duplicates lists what exists more than once for one object: Machines
// (3 of the control plane, 2 workers), configs, Metal3Machines and
// InfraEnvs (one per Machine, by controller), the hive objects and the
// ClusterImageSet (one per control plane), the kubeconfig Secret, and
// Agents (one approved per config, each bound to one Machine).
func (r *round) duplicates(t *testing.T) []string {
	t.Helper()
	var out []string
	ms := r.machines()
	cp := 0
	machineByUID := map[types.UID]string{}
	for _, m := range ms {
		machineByUID[m.UID] = m.Name
		if _, ok := m.Labels[clusterv1.MachineControlPlaneLabel]; ok {
			cp++
		}
	}
	if cp != cpReplicas || len(ms) != cpReplicas+workers {
		out = append(out, fmt.Sprintf("%d Machines, %d of the control plane (want %d and %d)", len(ms), cp, cpReplicas+workers, cpReplicas))
	}
	perController := func(kind string, objs []client.Object, want int) {
		by := map[types.UID][]string{}
		for _, o := range objs {
			ref := metav1.GetControllerOf(o)
			if ref == nil {
				out = append(out, kind+" "+o.GetName()+" has no controller")
				continue
			}
			by[ref.UID] = append(by[ref.UID], o.GetName())
		}
		for _, names := range by {
			if len(names) > 1 {
				sort.Strings(names)
				out = append(out, fmt.Sprintf("%d %ss for one owner: %v", len(names), kind, names))
			}
		}
		if len(objs) != want {
			out = append(out, fmt.Sprintf("%d %ss (want %d)", len(objs), kind, want))
		}
	}
	perController("OpenshiftAssistedConfig", r.list(&bootstrapv1.OpenshiftAssistedConfigList{}), cpReplicas+workers)
	perController("Metal3Machine", r.metal3Machines(), cpReplicas+workers)
	perController("InfraEnv", r.list(&aiv1beta1.InfraEnvList{}), cpReplicas+workers)
	perController("ClusterDeployment", r.list(&hivev1.ClusterDeploymentList{}), 1)
	perController("AgentClusterInstall", r.list(&hiveextv1beta1.AgentClusterInstallList{}), 1)
	if n := len(r.imageSets()); n != 1 {
		out = append(out, fmt.Sprintf("%d ClusterImageSets (want 1)", n))
	}
	o := r.oacp()
	var kubeconfigs []string
	for _, s := range r.list(&corev1.SecretList{}) {
		if o != nil && metav1.IsControlledBy(s, o) {
			kubeconfigs = append(kubeconfigs, s.GetName())
		}
	}
	if len(kubeconfigs) != 1 {
		out = append(out, fmt.Sprintf("the control plane's Secrets: %v (want one kubeconfig)", kubeconfigs))
	}
	// Agents: one approved per config; each Machine's config bound once.
	approved := map[string][]string{}
	for _, a := range r.agents() {
		if a.Spec.Approved {
			c := a.Labels[bootstrapv1.ConfigLabel]
			approved[c] = append(approved[c], a.Name)
		}
	}
	for c, as := range approved {
		if len(as) > 1 {
			out = append(out, fmt.Sprintf("%d Agents approved for config %q: %v", len(as), c, as))
		}
	}
	bound := map[string]string{}
	for _, c := range r.configs() {
		if len(approved[c.Name]) == 0 {
			out = append(out, "config "+c.Name+" has no approved Agent")
		}
		if ref := c.Status.AgentRef; ref != nil {
			if other, ok := bound[ref.Name]; ok {
				out = append(out, fmt.Sprintf("Agent %s bound to configs %s and %s", ref.Name, other, c.Name))
			}
			bound[ref.Name] = c.Name
		}
	}
	if len(approved) != cpReplicas+workers {
		out = append(out, fmt.Sprintf("approved Agents for %d configs (want %d)", len(approved), cpReplicas+workers))
	}
	return out
}

// recordKillStorm writes the storm's row of the summary table.
func recordKillStorm(t *testing.T, st *killStats, target int, seed int64, took time.Duration) {
	result := "pass"
	if t.Failed() {
		result = "FAIL"
	}
	row := chaos.Row{
		Scenario: "kill storm (bootstrap and control plane)",
		Faults: fmt.Sprintf("%d SIGKILLs of the bootstrap-manager (%d) and controlplane-manager (%d) processes, %d times both at once (%d during create, %d during delete, %d right after a change of step; target %d); %d restarts of the stand-ins (assisted-service simulator and CAPI core; %d during create, %d during delete)",
			st.kills, st.byManager["bootstrap-manager"], st.byManager["controlplane-manager"], st.together, st.createKills, st.delKills, st.onChange, target,
			st.standInRestarts, st.createRestarts, st.delRestarts),
		Objects: fmt.Sprintf("%d rounds, each: 1 cluster through the assisted-service simulator, 3 control-plane Machines + a MachineDeployment of 2 workers", st.rounds),
		Converge: fmt.Sprintf("after the last kill: all Available in %s, all gone in %s",
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

// ---- the managers under test, and their stand-ins ----

// stormStage is what the storm runs against beside TestMain's API server
// and binaries: the stand-ins of the control-plane suite in this process
// (the assisted-service simulator, the fake CAPI core), and the file of
// the simulator's CA that the bootstrap manager trusts.
type stormStage struct {
	sim      *simulator.Simulator
	capi     *fakecapi.FakeCAPI
	caBundle string
	ctx      context.Context
	// stop stops the stand-ins' manager that runs now.
	stop func() error
}

// restartStandIns stops the stand-ins' manager and starts a new one, as a
// restart of assisted-service and of CAPI core: what they know is in the
// API server (and, for assisted-service, its signing key and certificate,
// which the simulator keeps as its database would).
func (s *stormStage) restartStandIns(t *testing.T) {
	t.Helper()
	Expect(s.stop()).To(Succeed(), "stopping the stand-ins")
	stop, err := env.RunStandIns(s.ctx, s.sim.SetupWithManager, s.capi.SetupWithManager)
	Expect(err).NotTo(HaveOccurred(), "starting the stand-ins again")
	s.stop = stop
}

// stormManagers are the managers under test, with the number of
// controllers whose "Starting workers" says the manager is ready.
var stormManagers = map[string]int{"bootstrap-manager": 2, "controlplane-manager": 1}

// newStormStage starts the stand-ins (the simulator's installations take a
// step at most every installStep); they stop with t.
func newStormStage(t *testing.T) *stormStage {
	t.Helper()
	// The stand-ins' logs are not what the scenario looks at.
	ctrl.SetLogger(logr.Discard())
	for _, add := range append(controlplane.AddToScheme, bootstrap.AddToScheme...) {
		Expect(add(env.Scheme)).To(Succeed())
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	Expect(env.LabelMetal3CRDs(ctx)).To(Succeed())
	sim, err := simulator.New(simulator.Options{MinStepInterval: installStep})
	Expect(err).NotTo(HaveOccurred())
	capi := fakecapi.New(fakecapi.Options{MachineDeletion: true, Nodes: true})
	stop, err := env.RunStandIns(ctx, sim.SetupWithManager, capi.SetupWithManager)
	Expect(err).NotTo(HaveOccurred())
	s := &stormStage{sim: sim, capi: capi, caBundle: filepath.Join(t.TempDir(), "assisted-ca.pem"), ctx: ctx, stop: stop}
	t.Cleanup(func() {
		if err := s.stop(); err != nil {
			t.Errorf("stand-ins: %v", err)
		}
	})
	Expect(os.WriteFile(s.caBundle, sim.CABundle(), 0o600)).To(Succeed())
	return s
}

// stormProcess is one manager binary of the storm.
type stormProcess struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan error
}

// start runs the named manager, webhooks off as in the control-plane
// suite, and waits until its controllers started their workers (so its
// caches are synced). Its log is a file of t's.
func (s *stormStage) start(t *testing.T, name string) *stormProcess {
	t.Helper()
	ports, err := envtest.FreePorts(1)
	Expect(err).NotTo(HaveOccurred())
	health := fmt.Sprintf("127.0.0.1:%d", ports[0])
	logFile, err := os.CreateTemp(t.TempDir(), name+"-*.log")
	Expect(err).NotTo(HaveOccurred())
	args := []string{"--kubeconfig=" + kubeconfig, "--webhook-port=0", "--metrics-bind-address=0",
		"--health-probe-bind-address=" + health}
	if name == "bootstrap-manager" {
		args = append(args, "--assisted-ca-bundle="+s.caBundle)
	}
	cmd := exec.Command(filepath.Join(binDir, name), args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	Expect(cmd.Start()).To(Succeed())
	p := &stormProcess{name: name, cmd: cmd, log: logFile.Name(), done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait(); _ = logFile.Close() }()
	t.Cleanup(func() { p.stop(t) })
	Eventually(func(g Gomega) {
		select {
		case err := <-p.done:
			p.done <- err
			StopTrying(fmt.Sprintf("%s exited (%v):\n%s", name, err, p.tail())).Now()
		default:
		}
		resp, err := http.Get("http://" + health + "/readyz")
		g.Expect(err).NotTo(HaveOccurred())
		_ = resp.Body.Close()
		g.Expect(resp.StatusCode).To(Equal(http.StatusOK))
		data, err := os.ReadFile(p.log)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(strings.Count(string(data), "Starting workers")).To(BeNumerically(">=", stormManagers[name]),
			"controllers not started yet:\n%s", p.tail())
	}, readyTimeout, 100*time.Millisecond).Should(Succeed())
	return p
}

// kill ends the manager with SIGKILL: no graceful shutdown, requests in
// flight are cut.
func (p *stormProcess) kill(t *testing.T) {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case err := <-p.done:
		p.done <- err
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not die in 30s after SIGKILL", p.name)
	}
}

// stop ends a manager still running with SIGTERM (its log's tail is shown
// if the test failed), and kills it if it does not stop in 30 s.
func (p *stormProcess) stop(t *testing.T) {
	t.Helper()
	select {
	case err := <-p.done:
		p.done <- err
		return
	default:
	}
	if t.Failed() {
		t.Logf("%s's last lines:\n%s", p.name, p.tail())
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		p.done <- err
		if err != nil {
			t.Errorf("%s did not exit cleanly: %v\n%s", p.name, err, p.tail())
		}
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		t.Errorf("%s did not stop in 30s after SIGTERM", p.name)
	}
}

func (p *stormProcess) tail() string {
	return chaos.Tail(p.log, 30)
}
