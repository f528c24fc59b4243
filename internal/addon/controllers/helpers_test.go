package controllers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ocp-capi/ocp-capi/internal/addon/internal/mapi2capi"
	mapiv1alpha1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1alpha1"
	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
	"github.com/ocp-capi/ocp-capi/test/envtest"
)

// netID is the network of openStackSpec.
const netID = "11111111-1111-4111-8111-111111111111"

var (
	mapiAPI = mapiv1beta1.MachineAuthorityMachineAPI
	capiAPI = mapiv1beta1.MachineAuthorityClusterAPI
)

// testName makes a unique, valid name from the test's name, short enough
// for the suffixes the tests add.
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
	if len(n) > 30 {
		n = n[:30]
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(t.Name()))
	return fmt.Sprintf("%s-%08x", strings.Trim(n, "-"), h.Sum32())
}

// openStackSpec is a providerSpec like the installer's.
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

// rawSpec is ps as a providerSpec value.
func rawSpec(t testing.TB, ps any) *runtime.RawExtension {
	t.Helper()
	raw, err := json.Marshal(ps)
	if err != nil {
		t.Fatal(err)
	}
	return &runtime.RawExtension{Raw: raw}
}

// newMachineSet is a MAPI MachineSet called name with providerSpec ps and
// two replicas (no controller makes Machines here).
func newMachineSet(t testing.TB, name string, ps any) *mapiv1beta1.MachineSet {
	sel := map[string]string{"machine.openshift.io/cluster-api-cluster": clusterName, "machine.openshift.io/cluster-api-machineset": name}
	tl := map[string]string{
		"machine.openshift.io/cluster-api-cluster": clusterName, "machine.openshift.io/cluster-api-machineset": name,
		"machine.openshift.io/cluster-api-machine-role": "worker", "machine.openshift.io/cluster-api-machine-type": "worker",
	}
	return &mapiv1beta1.MachineSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: mapiNS, Labels: map[string]string{"machine.openshift.io/cluster-api-cluster": clusterName}},
		Spec: mapiv1beta1.MachineSetSpec{
			Replicas:     ptr.To[int32](2),
			DeletePolicy: "Random",
			Selector:     metav1.LabelSelector{MatchLabels: sel},
			Template: mapiv1beta1.MachineTemplateSpec{
				ObjectMeta: mapiv1beta1.ObjectMeta{Labels: tl},
				Spec:       mapiv1beta1.MachineSpec{ProviderSpec: mapiv1beta1.ProviderSpec{Value: rawSpec(t, ps)}},
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

// update changes the object named like obj with mutate, retrying on
// conflicts.
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

// get reads ns/name into obj.
func get[T client.Object](g Gomega, ns, name string, obj T) T {
	g.Expect(env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, obj)).To(Succeed())
	return obj
}

func getMS(g Gomega, name string) *mapiv1beta1.MachineSet {
	return get(g, mapiNS, name, &mapiv1beta1.MachineSet{})
}

func getCAPIMS(g Gomega, name string) *clusterv1.MachineSet {
	return get(g, capiNS, name, &clusterv1.MachineSet{})
}

func getMachine(g Gomega, name string) *mapiv1beta1.Machine {
	return get(g, mapiNS, name, &mapiv1beta1.Machine{})
}

func gone(g Gomega, obj client.Object) {
	err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%s still exists (err %v, finalizers %v)", obj.GetName(), err, obj.GetFinalizers())
}

// events are the events the controllers recorded about ns/name, as the
// API server holds them (the recorder writes them in the background).
func events(g Gomega, ns, name string) []eventsv1.Event {
	list := &eventsv1.EventList{}
	g.Expect(env.Client.List(context.Background(), list, client.InNamespace(ns))).To(Succeed())
	var out []eventsv1.Event
	for _, e := range list.Items {
		if e.Regarding.Namespace == ns && e.Regarding.Name == name {
			out = append(out, e)
		}
	}
	return out
}

// reconcileErrorsOf are the reconcile errors that controller logged for
// the object name of the MAPI namespace (a manager that a test stops
// aside). An error is retried with backoff, again and again while nothing
// changes.
func reconcileErrorsOf(controller, name string) []string {
	var out []string
	for _, e := range reconcileErrors.In(mapiNS) {
		if strings.HasPrefix(e, controller+" "+name+": ") && !envtest.IsStopError(e) {
			out = append(out, e)
		}
	}
	return out
}

// waitEvents waits until the events about ns/name satisfy match.
func waitEvents(t testing.TB, ns, name string, match OmegaMatcher) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		g.Expect(events(g, ns, name)).To(match)
	}).WithTimeout(timeout).Should(Succeed())
}

// quietSpell is how long objects must stay unwritten to count as settled.
const quietSpell = time.Second

// expectSteady checks that the objects, once settled, are not written
// again for a few seconds. Settled means no write for a quiet spell: the
// writes that converge an object may land after the condition a test
// waits for (the stand-in MAO's Paused condition after Synchronized, say),
// so a snapshot taken at that moment would be stale. Objects that never
// stop changing fail the wait; a write after the quiet spell fails the
// check.
func expectSteady(t *testing.T, objs ...client.Object) {
	t.Helper()
	g := NewWithT(t)
	read := func(g Gomega) []string {
		rvs := make([]string, len(objs))
		for i, o := range objs {
			rvs[i] = get(g, o.GetNamespace(), o.GetName(), o).GetResourceVersion()
		}
		return rvs
	}
	var last []string
	var since time.Time
	g.Eventually(func(g Gomega) {
		cur := read(g)
		if !slices.Equal(cur, last) {
			last, since = cur, time.Now()
		}
		g.Expect(time.Since(since)).To(BeNumerically(">=", quietSpell), "resourceVersions %v still changing", cur)
	}).WithTimeout(timeout).WithPolling(100 * time.Millisecond).Should(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(read(g)).To(Equal(last), "written after settling")
	}).WithTimeout(3 * time.Second).Should(Succeed())
}
