package controllers_test

// The authority switch of Machines (internal/addon/controllers/migration).

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/annotations"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/addon/internal/authority"
	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
)

// newMachine creates a running MAPI Machine of the MachineSet msName.
func newMachine(t *testing.T, msName string) string {
	t.Helper()
	g := NewWithT(t)
	ms := getMS(g, msName)
	name := msName + "-m0"
	m := &mapiv1beta1.Machine{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: mapiNS, Labels: ms.Spec.Template.Labels,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: mapiv1beta1.GroupVersion.String(), Kind: "MachineSet", Name: msName, UID: ms.UID, Controller: ptr.To(true)}}},
		Spec: mapiv1beta1.MachineSpec{ProviderSpec: ms.Spec.Template.Spec.ProviderSpec, ProviderID: ptr.To("openstack:///9f1c0c4e-0000-4000-8000-00000000000a")},
	}
	create(t, m)
	return name
}

func setMachineSpecAuthority(t *testing.T, name string, a mapiv1beta1.MachineAuthority) {
	t.Helper()
	update(t, &mapiv1beta1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: mapiNS, Name: name}},
		func(m *mapiv1beta1.Machine) { m.Spec.AuthoritativeAPI = a })
}

func waitMachineAuthority(t *testing.T, name string, a mapiv1beta1.MachineAuthority) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		m := getMachine(g, name)
		g.Expect(m.Status.AuthoritativeAPI).To(Equal(a))
		c := authority.FindCondition(m.Status.Conditions, authority.MigratedCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(corev1.ConditionTrue), "Migrated %+v", c)
	}).WithTimeout(timeout).Should(Succeed())
}

// TestMachineSwitchAndRollback: a Machine (with its MachineSet) switched to
// Cluster API: its CAPI Machine and OpenStackMachine are unpaused only
// after the MAPI Machine said Paused; the MAPI Machine then mirrors them.
// Rolled back: the CAPI Machine, the OpenStackMachine and the
// OpenStackServer the OpenStackMachine made in the meantime are all paused
// and say so before the Machine API takes over again. No version of the
// two Machines has both unpaused.
func TestMachineSwitchAndRollback(t *testing.T) {
	g := NewWithT(t)
	msName := startMAPI(t)
	name := newMachine(t, msName)
	g.Eventually(func(g Gomega) {
		m := getMachine(g, name)
		c := authority.FindCondition(m.Status.Conditions, authority.SynchronizedCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(corev1.ConditionTrue))
		g.Expect(annotations.HasPaused(get(g, capiNS, name, &infrav1.OpenStackMachine{}))).To(BeTrue())
	}).WithTimeout(timeout).Should(Succeed())
	h := watchMachineHistory(t, name)

	switchToCAPI(t, msName)
	setMachineSpecAuthority(t, name, capiAPI)
	waitMachineAuthority(t, name, capiAPI)
	g.Eventually(func(g Gomega) {
		g.Expect(annotations.HasPaused(get(g, capiNS, name, &clusterv1.Machine{}))).To(BeFalse())
		g.Expect(annotations.HasPaused(get(g, capiNS, name, &infrav1.OpenStackMachine{}))).To(BeFalse())
		m := getMachine(g, name)
		g.Expect(m.Status.SynchronizedAPI).To(Equal(mapiv1beta1.SynchronizedAPIClusterAPI))
	}).WithTimeout(timeout).Should(Succeed())

	// The OpenStackMachine, unpaused, made its OpenStackServer (played).
	oss := &infrav1alpha1.OpenStackServer{ObjectMeta: metav1.ObjectMeta{Namespace: capiNS, Name: name}}
	oss.Spec.Flavor = ptr.To("m1.xlarge")
	oss.Spec.Image = get(g, capiNS, name, &infrav1.OpenStackMachine{}).Spec.Image
	oss.Spec.IdentityRef = infrav1.OpenStackIdentityReference{Type: infrav1.IdentityRefTypeSecret, Name: "c", CloudName: "openstack"}
	oss.Spec.Ports = []infrav1.PortOpts{{Network: &infrav1.NetworkParam{ID: ptr.To(netID)}}}
	create(t, oss)

	setMachineSpecAuthority(t, name, mapiAPI)
	waitMachineAuthority(t, name, mapiAPI)
	for _, o := range []client.Object{&clusterv1.Machine{}, &infrav1.OpenStackMachine{}, &infrav1alpha1.OpenStackServer{}} {
		obj := get(g, capiNS, name, o)
		g.Expect(annotations.HasPaused(obj)).To(BeTrue(), "%T is paused", obj)
		g.Expect(capiPausedConditionTrue(obj)).To(BeTrue(), "%T said Paused before the handover", obj)
	}
	h.checkNeverBothActive(t)
}

func capiPausedConditionTrue(o client.Object) bool {
	type getter interface{ GetConditions() []metav1.Condition }
	g, ok := o.(getter)
	if !ok {
		return false
	}
	for _, c := range g.GetConditions() {
		if c.Type == clusterv1.PausedCondition {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}
