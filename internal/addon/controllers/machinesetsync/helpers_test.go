package machinesetsync

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/addon/internal/authority"
	"github.com/ocp-capi/ocp-capi/internal/addon/internal/mapi2capi"
	mapiv1alpha1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1alpha1"
	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
)

// timeout bounds every wait; it is a safety net, not an assertion on speed.
const timeout = 60 * time.Second

const netID = "11111111-1111-1111-1111-111111111111"

// testName makes a unique, valid MachineSet name from the test's name.
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
			Replicas: ptr.To[int32](2),
			Selector: metav1.LabelSelector{MatchLabels: sel},
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

// update changes the object named like obj with mutate, retrying on
// conflicts.
func update[T client.Object](t testing.TB, obj T, mutate func(T)) {
	t.Helper()
	g := NewWithT(t)
	g.Eventually(func() error {
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		mutate(obj)
		return env.Client.Update(context.Background(), obj)
	}).WithTimeout(timeout).Should(Succeed())
}

// setProviderSpec replaces the MachineSet's providerSpec.
func setProviderSpec(t testing.TB, ms *mapiv1beta1.MachineSet, ps any) {
	raw, err := json.Marshal(ps)
	if err != nil {
		t.Fatal(err)
	}
	update(t, ms, func(ms *mapiv1beta1.MachineSet) {
		ms.Spec.Template.Spec.ProviderSpec.Value = &runtime.RawExtension{Raw: raw}
	})
}

func getMS(g Gomega, name string) *mapiv1beta1.MachineSet {
	ms := &mapiv1beta1.MachineSet{}
	g.Expect(env.Client.Get(context.Background(), types.NamespacedName{Namespace: mapiNS, Name: name}, ms)).To(Succeed())
	return ms
}

func getMirror(g Gomega, name string) *clusterv1.MachineSet {
	m := &clusterv1.MachineSet{}
	g.Expect(env.Client.Get(context.Background(), types.NamespacedName{Namespace: capiNS, Name: name}, m)).To(Succeed())
	return m
}

func getTemplate(g Gomega, name string) *infrav1.OpenStackMachineTemplate {
	tm := &infrav1.OpenStackMachineTemplate{}
	g.Expect(env.Client.Get(context.Background(), types.NamespacedName{Namespace: capiNS, Name: name}, tm)).To(Succeed())
	return tm
}

// synchronized returns the Synchronized condition of the MachineSet.
func synchronized(ms *mapiv1beta1.MachineSet) *mapiv1beta1.Condition {
	return authority.FindCondition(ms.Status.Conditions, SynchronizedCondition)
}

// waitSynced waits until the MachineSet is Synchronized at its generation
// and returns it and its mirror.
func waitSynced(t testing.TB, name string) (*mapiv1beta1.MachineSet, *clusterv1.MachineSet) {
	t.Helper()
	var ms *mapiv1beta1.MachineSet
	var mirror *clusterv1.MachineSet
	NewWithT(t).Eventually(func(g Gomega) {
		ms = getMS(g, name)
		c := synchronized(ms)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(corev1.ConditionTrue), "condition %+v", c)
		g.Expect(ms.Status.SynchronizedGeneration).To(Equal(ms.Generation))
		mirror = getMirror(g, name)
		// The mirror and its template are visible in the API.
		getTemplate(g, mirror.Spec.Template.Spec.InfrastructureRef.Name)
	}).WithTimeout(timeout).Should(Succeed())
	return ms, mirror
}

// waitCondition waits until the Synchronized condition has status and
// reason, and returns it.
func waitCondition(t testing.TB, name string, status corev1.ConditionStatus, reason string) *mapiv1beta1.Condition {
	t.Helper()
	var c *mapiv1beta1.Condition
	NewWithT(t).Eventually(func(g Gomega) {
		c = synchronized(getMS(g, name))
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(status), "condition %+v", c)
		g.Expect(c.Reason).To(Equal(reason), "condition %+v", c)
	}).WithTimeout(timeout).Should(Succeed())
	return c
}

// templatesOf lists the OpenStackMachineTemplates labelled for name.
func templatesOf(g Gomega, name string) []infrav1.OpenStackMachineTemplate {
	list := &infrav1.OpenStackMachineTemplateList{}
	g.Expect(env.Client.List(context.Background(), list, client.InNamespace(capiNS),
		client.MatchingLabels{MachineSetLabel: mapi2capi.LabelValue(name)})).To(Succeed())
	return list.Items
}

func gone(g Gomega, obj client.Object) {
	err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%s still exists (err %v, finalizers %v)", obj.GetName(), err, obj.GetFinalizers())
}

// expectedTemplateName is the name the conversion gives ms's template.
func expectedTemplateName(t testing.TB, ms *mapiv1beta1.MachineSet) string {
	t.Helper()
	_, tmpl, _, errs := mapi2capiMachineSet(ms)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return tmpl.GetName()
}

func hasMirrorRef(refs []metav1.OwnerReference, mirror *clusterv1.MachineSet) bool {
	for _, r := range refs {
		if r.UID == mirror.UID && r.Kind == "MachineSet" && r.Name == mirror.Name {
			return true
		}
	}
	return false
}

// capiMeta names an object in the CAPI namespace.
func capiMeta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: capiNS, Name: name}
}

func objectKey(namespace, name string) types.NamespacedName {
	return types.NamespacedName{Namespace: namespace, Name: name}
}

// ownerRefTo is a plain ownerReference to o (a ConfigMap).
func ownerRefTo(o *corev1.ConfigMap) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: o.Name, UID: o.UID}
}

// mapi2capiMachineSet converts ms with the test cluster's context.
func mapi2capiMachineSet(ms *mapiv1beta1.MachineSet) (*clusterv1.MachineSet, client.Object, []string, field.ErrorList) {
	return mapi2capi.MachineSet(ms, mapi2capi.Infra{ClusterName: clusterName, Namespace: capiNS, Platform: "OpenStack",
		APIVIPs: []string{"10.0.0.5"}, IngressVIPs: []string{"10.0.0.7"}})
}
