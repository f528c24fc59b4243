package migration

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/annotations"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ocp-capi/ocp-capi/internal/addon/internal/authority"
	"github.com/ocp-capi/ocp-capi/internal/addon/internal/mapi2capi"
	mapiv1alpha1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1alpha1"
	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
)

const timeout = 60 * time.Second

const netID = "11111111-1111-4111-8111-111111111111"

// testName makes a unique, valid name from the test's name.
func testName(t *testing.T) string {
	var b strings.Builder
	for _, c := range strings.ToLower(t.Name()) {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			b.WriteRune(c)
		} else {
			b.WriteByte('-')
		}
	}
	n := b.String()
	if len(n) > 40 {
		n = n[:40]
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(t.Name()))
	return fmt.Sprintf("%s-%08x", strings.Trim(n, "-"), h.Sum32())
}

func openStackSpec() *mapiv1alpha1.OpenstackProviderSpec {
	return &mapiv1alpha1.OpenstackProviderSpec{
		TypeMeta:       metav1.TypeMeta{APIVersion: "machine.openshift.io/v1alpha1", Kind: mapi2capi.OpenStackProviderSpecKind},
		CloudsSecret:   &corev1.SecretReference{Name: "openstack-cloud-credentials", Namespace: mapiNS},
		CloudName:      "openstack",
		Flavor:         "m1.xlarge",
		Image:          "rhcos",
		UserDataSecret: &corev1.SecretReference{Name: "worker-user-data"},
		Networks:       []mapiv1alpha1.NetworkParam{{UUID: netID}},
	}
}

// newMachineSet is a MAPI MachineSet called name with providerSpec ps.
func newMachineSet(t testing.TB, name string, ps any) *mapiv1beta1.MachineSet {
	raw, err := json.Marshal(ps)
	if err != nil {
		t.Fatal(err)
	}
	sel := map[string]string{"machine.openshift.io/cluster-api-cluster": clusterName, "machine.openshift.io/cluster-api-machineset": name}
	tl := map[string]string{
		"machine.openshift.io/cluster-api-cluster": clusterName, "machine.openshift.io/cluster-api-machineset": name,
		"machine.openshift.io/cluster-api-machine-role": "worker", "machine.openshift.io/cluster-api-machine-type": "worker",
	}
	return &mapiv1beta1.MachineSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: mapiNS, Labels: map[string]string{"machine.openshift.io/cluster-api-cluster": clusterName}},
		Spec: mapiv1beta1.MachineSetSpec{
			Replicas:     ptr.To[int32](0),
			DeletePolicy: "Random",
			Selector:     metav1.LabelSelector{MatchLabels: sel},
			Template: mapiv1beta1.MachineTemplateSpec{
				ObjectMeta: mapiv1beta1.ObjectMeta{Labels: tl},
				Spec:       mapiv1beta1.MachineSpec{ProviderSpec: mapiv1beta1.ProviderSpec{Value: &runtime.RawExtension{Raw: raw}}},
			},
		},
	}
}

func create(t testing.TB, obj client.Object) {
	t.Helper()
	if err := env.Client.Create(context.Background(), obj); err != nil {
		t.Fatalf("creating %s: %v", obj.GetName(), err)
	}
}

// update changes obj with mutate, retrying on conflicts.
func update[T client.Object](t testing.TB, obj T, mutate func(T)) {
	t.Helper()
	NewWithT(t).Eventually(func() error {
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		mutate(obj)
		return env.Client.Update(context.Background(), obj)
	}).WithTimeout(timeout).Should(Succeed())
}

// setSpecAuthority sets spec.authoritativeAPI of the MAPI MachineSet.
func setSpecAuthority(t testing.TB, name string, a mapiv1beta1.MachineAuthority) {
	t.Helper()
	update(t, &mapiv1beta1.MachineSet{ObjectMeta: metav1.ObjectMeta{Namespace: mapiNS, Name: name}},
		func(ms *mapiv1beta1.MachineSet) { ms.Spec.AuthoritativeAPI = a })
}

func getMS(g Gomega, name string) *mapiv1beta1.MachineSet {
	ms := &mapiv1beta1.MachineSet{}
	g.Expect(env.Client.Get(context.Background(), types.NamespacedName{Namespace: mapiNS, Name: name}, ms)).To(Succeed())
	return ms
}

func getCAPIMS(g Gomega, name string) *clusterv1.MachineSet {
	ms := &clusterv1.MachineSet{}
	g.Expect(env.Client.Get(context.Background(), types.NamespacedName{Namespace: capiNS, Name: name}, ms)).To(Succeed())
	return ms
}

func condition(cs []mapiv1beta1.Condition, t mapiv1beta1.ConditionType) *mapiv1beta1.Condition {
	for i := range cs {
		if cs[i].Type == t {
			return &cs[i]
		}
	}
	return nil
}

// waitSynced waits until the MachineSet is Synchronized from side at the
// current generation of that side.
func waitSynced(t testing.TB, name string, side mapiv1beta1.SynchronizedAPI) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		ms := getMS(g, name)
		c := condition(ms.Status.Conditions, authority.SynchronizedCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(corev1.ConditionTrue), "Synchronized %+v", c)
		g.Expect(ms.Status.SynchronizedAPI).To(Equal(side))
		gen := ms.Generation
		if side == mapiv1beta1.SynchronizedAPIClusterAPI {
			gen = getCAPIMS(g, name).Generation
		}
		g.Expect(ms.Status.SynchronizedGeneration).To(Equal(gen))
	}).WithTimeout(timeout).Should(Succeed())
}

// waitAuthority waits until status.authoritativeAPI is a, and Migrated has
// the reason.
func waitAuthority(t testing.TB, name string, a mapiv1beta1.MachineAuthority, reason string) *mapiv1beta1.MachineSet {
	t.Helper()
	var ms *mapiv1beta1.MachineSet
	NewWithT(t).Eventually(func(g Gomega) {
		ms = getMS(g, name)
		g.Expect(ms.Status.AuthoritativeAPI).To(Equal(a))
		c := condition(ms.Status.Conditions, authority.MigratedCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(reason), "Migrated %+v", c)
	}).WithTimeout(timeout).Should(Succeed())
	return ms
}

func capiPaused(g Gomega, name string) bool { return annotations.HasPaused(getCAPIMS(g, name)) }

func gone(g Gomega, obj client.Object) {
	err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%s still exists (err %v, finalizers %v)", obj.GetName(), err, obj.GetFinalizers())
}

// history records, through watches, every version of the MAPI and CAPI
// MachineSets called name, to check an invariant over all of them in the
// API server's order (resourceVersions of one etcd increase).
type history struct {
	mu      sync.Mutex
	entries []entry
	stop    []func()
}

type entry struct {
	rv   int64
	mapi bool
	// active: the side acts on the object (not paused).
	active bool
	exists bool
}

// watchHistory starts recording the two MachineSets called name.
func watchHistory(t *testing.T, name string) *history {
	return watchKinds(t, name, &mapiv1beta1.MachineSetList{}, &clusterv1.MachineSetList{})
}

// watchMachineHistory starts recording the two Machines called name.
func watchMachineHistory(t *testing.T, name string) *history {
	return watchKinds(t, name, &mapiv1beta1.MachineList{}, &clusterv1.MachineList{})
}

func watchKinds(t *testing.T, name string, lists ...client.ObjectList) *history {
	t.Helper()
	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	h := &history{}
	for _, l := range lists {
		ns := capiNS
		switch l.(type) {
		case *mapiv1beta1.MachineSetList, *mapiv1beta1.MachineList:
			ns = mapiNS
		}
		w, err := wc.Watch(suiteCtx, l, client.InNamespace(ns), client.MatchingFields{"metadata.name": name})
		if err != nil {
			t.Fatal(err)
		}
		h.stop = append(h.stop, w.Stop)
		go func() {
			for ev := range w.ResultChan() {
				h.record(ev)
			}
		}()
	}
	t.Cleanup(func() {
		for _, s := range h.stop {
			s()
		}
	})
	return h
}

func (h *history) record(ev watch.Event) {
	o, ok := ev.Object.(client.Object)
	if !ok {
		return
	}
	rv, err := strconv.ParseInt(o.GetResourceVersion(), 10, 64)
	if err != nil {
		return
	}
	e := entry{rv: rv, exists: ev.Type != watch.Deleted}
	switch t := o.(type) {
	case *mapiv1beta1.MachineSet:
		e.mapi = true
		e.active = mapiActive(t.Status.AuthoritativeAPI, t.Spec.AuthoritativeAPI, t.Status.Conditions)
	case *mapiv1beta1.Machine:
		e.mapi = true
		e.active = mapiActive(t.Status.AuthoritativeAPI, t.Spec.AuthoritativeAPI, t.Status.Conditions)
	case *clusterv1.MachineSet:
		e.active = !annotations.HasPaused(t) && t.DeletionTimestamp.IsZero()
	case *clusterv1.Machine:
		e.active = !annotations.HasPaused(t) && t.DeletionTimestamp.IsZero()
	default:
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.entries = append(h.entries, e)
}

// mapiActive: the Machine API operator acts while the authority is
// MachineAPI, until it has said Paused.
func mapiActive(status, spec mapiv1beta1.MachineAuthority, cs []mapiv1beta1.Condition) bool {
	a := status
	if a == "" {
		a = spec
	}
	paused := condition(cs, mapiv1beta1.PausedCondition)
	return (a == "" || a == mapiv1beta1.MachineAuthorityMachineAPI) && (paused == nil || paused.Status != corev1.ConditionTrue)
}

// checkNeverBothActive replays the history in the API server's order.
func (h *history) checkNeverBothActive(t *testing.T) {
	t.Helper()
	time.Sleep(500 * time.Millisecond) // the last watch events
	h.mu.Lock()
	defer h.mu.Unlock()
	es := slices.Clone(h.entries)
	slices.SortFunc(es, func(a, b entry) int { return int(a.rv - b.rv) })
	var mapiActive, capiActive bool
	for _, e := range es {
		if e.mapi {
			mapiActive = e.exists && e.active
		} else {
			capiActive = e.exists && e.active
		}
		if mapiActive && capiActive {
			t.Errorf("at resourceVersion %d both the MAPI and the CAPI MachineSet were unpaused (history of %d versions)", e.rv, len(es))
			return
		}
	}
	if len(es) == 0 {
		t.Errorf("no history recorded")
	}
}
