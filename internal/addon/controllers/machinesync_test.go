package controllers_test

// The Machine sync (internal/addon/controllers/machinesync), with the
// MachineSet sync, which makes the CAPI MachineSets that own the CAPI
// Machines, and the migration controllers, which switch the authority.

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/annotations"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/addon/controllers/machinesync"
	"github.com/ocp-capi/ocp-capi/internal/addon/internal/authority"
	"github.com/ocp-capi/ocp-capi/internal/addon/internal/mapi2capi"
	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
)

// serverID is the OpenStack server of the Machines.
const serverID = "9f1c0c4e-0000-4000-8000-000000000001"

// machineSetAndMachine creates a MAPI MachineSet of no replicas and a
// Machine it owns, running (as MAPO leaves it), and returns their name
// (the Machine's is the MachineSet's plus "-0").
func machineSetAndMachine(t *testing.T) (msName, mName string) {
	t.Helper()
	g := NewWithT(t)
	msName = testName(t)
	sel := map[string]string{"machine.openshift.io/cluster-api-cluster": clusterName, "machine.openshift.io/cluster-api-machineset": msName}
	ms := &mapiv1beta1.MachineSet{
		ObjectMeta: metav1.ObjectMeta{Name: msName, Namespace: mapiNS},
		Spec: mapiv1beta1.MachineSetSpec{
			Replicas: ptr.To[int32](1), DeletePolicy: "Random", Selector: metav1.LabelSelector{MatchLabels: sel},
			Template: mapiv1beta1.MachineTemplateSpec{
				ObjectMeta: mapiv1beta1.ObjectMeta{Labels: sel},
				Spec:       mapiv1beta1.MachineSpec{ProviderSpec: mapiv1beta1.ProviderSpec{Value: rawSpec(t, openStackSpec())}},
			},
		},
	}
	g.Expect(env.Client.Create(context.Background(), ms)).To(Succeed())
	mName = msName + "-0"
	labels := map[string]string{mapi2capi.MAPIInstanceTypeLabel: "m1.xlarge"}
	for k, v := range sel {
		labels[k] = v
	}
	m := &mapiv1beta1.Machine{
		ObjectMeta: metav1.ObjectMeta{Name: mName, Namespace: mapiNS, Labels: labels,
			Annotations:     map[string]string{mapi2capi.MAPIInstanceStateAnnotation: "ACTIVE", mapi2capi.MAPOResourceIDAnnotation: serverID},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: mapiv1beta1.GroupVersion.String(), Kind: "MachineSet", Name: msName, UID: ms.UID, Controller: ptr.To(true)}},
			Finalizers:      []string{mapiv1beta1.MachineFinalizer},
		},
		Spec: mapiv1beta1.MachineSpec{ProviderSpec: mapiv1beta1.ProviderSpec{Value: rawSpec(t, openStackSpec())}, ProviderID: ptr.To("openstack:///" + serverID)},
	}
	g.Expect(env.Client.Create(context.Background(), m)).To(Succeed())
	// MAPO's status of a running machine (played).
	g.Eventually(func() error {
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(m), m); err != nil {
			return err
		}
		m.Status.NodeRef = &corev1.ObjectReference{Kind: "Node", Name: mName}
		m.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.1.5"}}
		m.Status.Phase = ptr.To("Running")
		return env.Client.Status().Update(context.Background(), m)
	}).WithTimeout(timeout).Should(Succeed())
	return msName, mName
}

// waitMachineSynced waits until the MAPI Machine is synchronized from side.
func waitMachineSynced(t *testing.T, name string, side mapiv1beta1.SynchronizedAPI) *mapiv1beta1.Machine {
	t.Helper()
	var m *mapiv1beta1.Machine
	NewWithT(t).Eventually(func(g Gomega) {
		m = get(g, mapiNS, name, &mapiv1beta1.Machine{})
		c := authority.FindCondition(m.Status.Conditions, authority.SynchronizedCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(corev1.ConditionTrue), "Synchronized %+v", c)
		g.Expect(m.Status.SynchronizedAPI).To(Equal(side))
	}).WithTimeout(timeout).Should(Succeed())
	return m
}

// setAuthority asks for authority a in the MAPI object's spec and waits
// until the migration controllers have reached it.
func setAuthority(t *testing.T, obj client.Object, a mapiv1beta1.MachineAuthority) {
	t.Helper()
	g := NewWithT(t)
	switch o := obj.(type) {
	case *mapiv1beta1.Machine:
		update(t, o, func(m *mapiv1beta1.Machine) { m.Spec.AuthoritativeAPI = a })
		g.Eventually(func(g Gomega) { g.Expect(getMachine(g, o.Name).Status.AuthoritativeAPI).To(Equal(a)) }).WithTimeout(timeout).Should(Succeed())
	case *mapiv1beta1.MachineSet:
		update(t, o, func(ms *mapiv1beta1.MachineSet) { ms.Spec.AuthoritativeAPI = a })
		g.Eventually(func(g Gomega) { g.Expect(getMS(g, o.Name).Status.AuthoritativeAPI).To(Equal(a)) }).WithTimeout(timeout).Should(Succeed())
	}
}

func unpause(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		NewWithT(t).Eventually(func() error {
			if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(o), o); err != nil {
				return err
			}
			a := o.GetAnnotations()
			delete(a, clusterv1.PausedAnnotation)
			o.SetAnnotations(a)
			return env.Client.Update(context.Background(), o)
		}).WithTimeout(timeout).Should(Succeed())
	}
}

// TestForwardMirror: a MAPI-authoritative Machine of a MachineSet gets a
// paused CAPI Machine, owned by the CAPI MachineSet, and a paused
// OpenStackMachine owned by it, both of its name, that describe its server
// and mirror its status; once in sync, nothing is written.
func TestForwardMirror(t *testing.T) {
	g := NewWithT(t)
	msName, name := machineSetAndMachine(t)
	m := waitMachineSynced(t, name, mapiv1beta1.SynchronizedAPIMachineAPI)
	g.Expect(m.Status.SynchronizedGeneration).To(Equal(m.Generation))
	var capi *clusterv1.Machine
	var osm *infrav1.OpenStackMachine
	g.Eventually(func(g Gomega) {
		capi = get(g, capiNS, name, &clusterv1.Machine{})
		osm = get(g, capiNS, name, &infrav1.OpenStackMachine{})
		g.Expect(capi.Status.NodeRef.Name).To(Equal(name))
		g.Expect(osm.Status.InstanceID).NotTo(BeNil())
	}).WithTimeout(timeout).Should(Succeed())
	capiMS := get(g, capiNS, msName, &clusterv1.MachineSet{})
	g.Expect(annotations.HasPaused(capi)).To(BeTrue())
	g.Expect(annotations.HasPaused(osm)).To(BeTrue())
	g.Expect(capi.OwnerReferences).To(ConsistOf(HaveField("UID", capiMS.UID)))
	g.Expect(capi.Labels).To(HaveKeyWithValue(clusterv1.MachineSetNameLabel, msName))
	g.Expect(capi.Labels).NotTo(HaveKey(mapi2capi.MAPIInstanceTypeLabel), "provider status is not copied")
	g.Expect(osm.OwnerReferences).To(ConsistOf(HaveField("UID", capi.UID)))
	g.Expect(capi.Spec.ProviderID).To(Equal("openstack:///" + serverID))
	g.Expect(capi.Spec.InfrastructureRef.Kind).To(Equal("OpenStackMachine"))
	g.Expect(capi.Status.Phase).To(Equal("Running"))
	g.Expect(*osm.Status.InstanceID).To(Equal(serverID))
	g.Expect(string(*osm.Status.InstanceState)).To(Equal("ACTIVE"))
	g.Expect(*osm.Spec.Flavor.Filter.Name).To(Equal("m1.xlarge"))

	// Steady state.
	expectSteady(t, capi, osm, m)
}

// TestReverseMirror: with Cluster API authoritative, the MAPI Machine
// mirrors the CAPI one: status, and the labels and annotations MAPO would
// set from the server.
func TestReverseMirror(t *testing.T) {
	g := NewWithT(t)
	_, name := machineSetAndMachine(t)
	m := waitMachineSynced(t, name, mapiv1beta1.SynchronizedAPIMachineAPI)
	capi := get(g, capiNS, name, &clusterv1.Machine{})
	osm := get(g, capiNS, name, &infrav1.OpenStackMachine{})
	setAuthority(t, m, mapiv1beta1.MachineAuthorityClusterAPI)
	unpause(t, capi, osm)
	waitMachineSynced(t, name, mapiv1beta1.SynchronizedAPIClusterAPI)

	// Cluster API reports (played here: no CAPI controller runs).
	g.Eventually(func() error {
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(osm), osm); err != nil {
			return err
		}
		osm.Status.InstanceState = ptr.To(infrav1.InstanceState("SHUTOFF"))
		return env.Client.Status().Update(context.Background(), osm)
	}).WithTimeout(timeout).Should(Succeed())
	g.Eventually(func() error {
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(capi), capi); err != nil {
			return err
		}
		capi.Status.Phase = "Failed"
		capi.Status.Addresses = clusterv1.MachineAddresses{{Type: clusterv1.MachineInternalIP, Address: "10.0.1.9"}}
		return env.Client.Status().Update(context.Background(), capi)
	}).WithTimeout(timeout).Should(Succeed())
	g.Eventually(func(g Gomega) {
		m := get(g, mapiNS, name, &mapiv1beta1.Machine{})
		g.Expect(ptr.Deref(m.Status.Phase, "")).To(Equal("Failed"))
		g.Expect(m.Status.Addresses).To(ConsistOf(corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: "10.0.1.9"}))
		g.Expect(m.Annotations).To(HaveKeyWithValue(mapi2capi.MAPIInstanceStateAnnotation, "SHUTOFF"))
		g.Expect(m.Labels).To(HaveKeyWithValue(mapi2capi.MAPIInstanceTypeLabel, "m1.xlarge"))
		g.Expect(*m.Spec.ProviderID).To(Equal("openstack:///" + serverID))
	}).WithTimeout(timeout).Should(Succeed())
}

// TestScaleUpMirror: a CAPI Machine that a CAPI MachineSet made while
// Cluster API is authoritative gets a MAPI mirror, owned by the MAPI
// MachineSet, with authority ClusterAPI from the start.
func TestScaleUpMirror(t *testing.T) {
	g := NewWithT(t)
	msName, name := machineSetAndMachine(t)
	waitMachineSynced(t, name, mapiv1beta1.SynchronizedAPIMachineAPI)
	ms := get(g, mapiNS, msName, &mapiv1beta1.MachineSet{})
	setAuthority(t, ms, mapiv1beta1.MachineAuthorityClusterAPI)
	newName := newCAPIReplica(t, msName, name, nil)

	g.Eventually(func(g Gomega) {
		m := get(g, mapiNS, newName, &mapiv1beta1.Machine{})
		g.Expect(m.Spec.AuthoritativeAPI).To(Equal(mapiv1beta1.MachineAuthorityClusterAPI))
		g.Expect(m.OwnerReferences).To(ConsistOf(HaveField("UID", ms.UID)))
		g.Expect(m.Spec.ProviderSpec.Value).NotTo(BeNil())
	}).WithTimeout(timeout).Should(Succeed())
	waitMachineSynced(t, newName, mapiv1beta1.SynchronizedAPIClusterAPI)
}

// TestScaleUpMirrorRefused: a new CAPI replica that the Machine API cannot
// express gets no MAPI mirror; with no MAPI Machine to hold the condition,
// the refusal is a Warning event on the CAPI Machine, and no reconcile
// error (which would be retried with backoff while nothing changed). Once
// fixed, the mirror is made.
func TestScaleUpMirrorRefused(t *testing.T) {
	g := NewWithT(t)
	msName, name := machineSetAndMachine(t)
	waitMachineSynced(t, name, mapiv1beta1.SynchronizedAPIMachineAPI)
	setAuthority(t, get(g, mapiNS, msName, &mapiv1beta1.MachineSet{}), mapiv1beta1.MachineAuthorityClusterAPI)
	newName := newCAPIReplica(t, msName, name, func(c *clusterv1.Machine) { c.Spec.Version = "v1.36.0" })

	waitEvents(t, capiNS, newName, ContainElement(And(HaveField("Type", corev1.EventTypeWarning),
		HaveField("Reason", machinesync.ReasonReverseConversionFailed), HaveField("Note", ContainSubstring("spec.version")))))
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: mapiNS, Name: newName}, &mapiv1beta1.Machine{})).
		To(Satisfy(apierrors.IsNotFound), "no MAPI mirror of a refused Machine")

	update(t, &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: capiNS, Name: newName}}, func(c *clusterv1.Machine) { c.Spec.Version = "" })
	waitMachineSynced(t, newName, mapiv1beta1.SynchronizedAPIClusterAPI)
	g.Expect(reconcileErrorsOf("machinesync", newName)).To(BeEmpty())
}

// newCAPIReplica plays CAPI's MachineSet controller making a new replica
// of the CAPI MachineSet msName, like its Machine name, changed by mutate
// if set; it returns the new Machine's name.
func newCAPIReplica(t *testing.T, msName, name string, mutate func(*clusterv1.Machine)) string {
	t.Helper()
	g := NewWithT(t)
	capiMS := get(g, capiNS, msName, &clusterv1.MachineSet{})
	newName := msName + "-new"
	osm := get(g, capiNS, name, &infrav1.OpenStackMachine{}).DeepCopy()
	osm.ObjectMeta = metav1.ObjectMeta{Name: newName, Namespace: capiNS, Labels: map[string]string{clusterv1.ClusterNameLabel: clusterName}}
	osm.Spec.ProviderID = ""
	osm.Status = infrav1.OpenStackMachineStatus{}
	g.Expect(env.Client.Create(context.Background(), osm)).To(Succeed())
	capi := get(g, capiNS, name, &clusterv1.Machine{}).DeepCopy()
	capi.ObjectMeta = metav1.ObjectMeta{Name: newName, Namespace: capiNS, Labels: capi.Labels,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "MachineSet", Name: msName, UID: capiMS.UID, Controller: ptr.To(true)}}}
	capi.Spec.ProviderID = ""
	capi.Spec.InfrastructureRef.Name = newName
	capi.Status = clusterv1.MachineStatus{}
	if mutate != nil {
		mutate(capi)
	}
	g.Expect(env.Client.Create(context.Background(), capi)).To(Succeed())
	return newName
}

// TestDeleteMAPIAuthoritative: deleting a MAPI-authoritative Machine leaves
// its CAPI mirror until the Machine API's actuator has deleted the server
// (its finalizer gone); then the mirror goes, without deleting anything.
func TestDeleteMAPIAuthoritative(t *testing.T) {
	g := NewWithT(t)
	_, name := machineSetAndMachine(t)
	m := waitMachineSynced(t, name, mapiv1beta1.SynchronizedAPIMachineAPI)
	g.Expect(env.Client.Delete(context.Background(), m)).To(Succeed())
	g.Consistently(func(g Gomega) {
		get(g, capiNS, name, &clusterv1.Machine{})
		get(g, capiNS, name, &infrav1.OpenStackMachine{})
	}).WithTimeout(2 * time.Second).Should(Succeed())
	// The actuator is done (played).
	NewWithT(t).Eventually(func() error {
		cur := &mapiv1beta1.Machine{}
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(m), cur); err != nil {
			return err
		}
		var fs []string
		for _, f := range cur.Finalizers {
			if f != mapiv1beta1.MachineFinalizer {
				fs = append(fs, f)
			}
		}
		cur.Finalizers = fs
		return env.Client.Update(context.Background(), cur)
	}).WithTimeout(timeout).Should(Succeed())
	g.Eventually(func(g Gomega) {
		gone(g, &mapiv1beta1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: mapiNS, Name: name}})
		gone(g, &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: capiNS, Name: name}})
		gone(g, &infrav1.OpenStackMachine{ObjectMeta: metav1.ObjectMeta{Namespace: capiNS, Name: name}})
	}).WithTimeout(timeout).Should(Succeed())
}

// TestDeleteCAPIAuthoritative: deleting the MAPI mirror of a Cluster
// API-authoritative Machine deletes the CAPI Machine; once Cluster API has
// deleted it, the MAPI Machine goes, with the Machine API operator's
// finalizer (that operator is paused for it).
func TestDeleteCAPIAuthoritative(t *testing.T) {
	g := NewWithT(t)
	_, name := machineSetAndMachine(t)
	m := waitMachineSynced(t, name, mapiv1beta1.SynchronizedAPIMachineAPI)
	capi := get(g, capiNS, name, &clusterv1.Machine{})
	setAuthority(t, m, mapiv1beta1.MachineAuthorityClusterAPI)
	unpause(t, capi)
	waitMachineSynced(t, name, mapiv1beta1.SynchronizedAPIClusterAPI)
	// CAPI's finalizer, as its Machine controller sets it (played).
	NewWithT(t).Eventually(func() error {
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(capi), capi); err != nil {
			return err
		}
		capi.Finalizers = append(capi.Finalizers, clusterv1.MachineFinalizer)
		return env.Client.Update(context.Background(), capi)
	}).WithTimeout(timeout).Should(Succeed())

	g.Expect(env.Client.Delete(context.Background(), m)).To(Succeed())
	g.Eventually(func(g Gomega) {
		c := get(g, capiNS, name, &clusterv1.Machine{})
		g.Expect(c.DeletionTimestamp).NotTo(BeNil())
		g.Expect(c.Finalizers).To(ConsistOf(clusterv1.MachineFinalizer), "only CAPI's finalizer holds it")
		get(g, mapiNS, name, &mapiv1beta1.Machine{})
	}).WithTimeout(timeout).Should(Succeed())
	// CAPI deletes the server and lets the Machine go (played).
	NewWithT(t).Eventually(func() error {
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(capi), capi); err != nil {
			return client.IgnoreNotFound(err)
		}
		capi.Finalizers = nil
		return env.Client.Update(context.Background(), capi)
	}).WithTimeout(timeout).Should(Succeed())
	g.Eventually(func(g Gomega) {
		gone(g, &mapiv1beta1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: mapiNS, Name: name}})
	}).WithTimeout(timeout).Should(Succeed())
}

// TestCAPIMirrorDeleted: a paused CAPI mirror deleted by someone is let go
// (nothing deleted in the cloud) and made again.
func TestCAPIMirrorDeleted(t *testing.T) {
	g := NewWithT(t)
	_, name := machineSetAndMachine(t)
	waitMachineSynced(t, name, mapiv1beta1.SynchronizedAPIMachineAPI)
	old := get(g, capiNS, name, &clusterv1.Machine{})
	g.Expect(env.Client.Delete(context.Background(), old)).To(Succeed())
	g.Eventually(func(g Gomega) {
		c := get(g, capiNS, name, &clusterv1.Machine{})
		g.Expect(c.UID).NotTo(Equal(old.UID))
		g.Expect(annotations.HasPaused(c)).To(BeTrue())
		osm := get(g, capiNS, name, &infrav1.OpenStackMachine{})
		g.Expect(osm.OwnerReferences).To(ConsistOf(HaveField("UID", c.UID)))
	}).WithTimeout(timeout).Should(Succeed())
}
