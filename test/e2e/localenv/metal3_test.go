package localenv

import (
	"context"
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	bmhv1alpha1 "github.com/ocp-capi/ocp-capi/internal/consumed/baremetalhost/v1alpha1"
	"github.com/ocp-capi/ocp-capi/test/envtest"
)

// TestMetal3AnnotatedHost holds the Metal3 stand-in to what it documents of
// CAPM3 for a machine that moves from the Machine API, against a real API
// server: a paused Metal3Machine is not acted on, its deletion included;
// unpaused, it takes the host that metal3.io/BareMetalHost names (consumer
// and controller owner) without provisioning it again, and keeps its
// providerID; deleted, it releases the host and drops the ownership.
func TestMetal3AnnotatedHost(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env, err := envtest.Start(envtest.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	g.Expect(env.LabelMetal3CRDs(ctx)).To(Succeed())
	c := env.Client
	ns, err := env.NewNamespace(ctx, "metal3")
	g.Expect(err).NotTo(HaveOccurred())
	m3 := NewMetal3(NewKubelets()) // no workload cluster: the Node step is not reached
	m3.c = c

	// The host as the Machine API's actuator leaves it: consumed by the
	// MAPI Machine, provisioned with its image.
	mapiConsumer := &corev1.ObjectReference{APIVersion: "machine.openshift.io/v1beta1", Kind: "Machine", Namespace: "openshift-machine-api", Name: "w-0"}
	host := &bmhv1alpha1.BareMetalHost{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "host-0"},
		Spec: bmhv1alpha1.BareMetalHostSpec{
			Online: true, Image: &bmhv1alpha1.Image{URL: "http://images/mapi.qcow2"}, ConsumerRef: mapiConsumer,
			BMC: bmhv1alpha1.BMCDetails{Address: "redfish://192.0.2.1/redfish/v1/Systems/1", CredentialsName: "bmc"},
		},
	}
	g.Expect(c.Create(ctx, host)).To(Succeed())
	host.Status.Provisioning.State = "provisioned"
	host.Status.PoweredOn = true
	g.Expect(c.Status().Update(ctx, host)).To(Succeed())

	machine := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "w-0"},
		Spec: clusterv1.MachineSpec{ClusterName: "c", Bootstrap: clusterv1.Bootstrap{DataSecretName: ptr.To("w-0-user-data")},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: metal3MachineGVK.Group, Kind: "Metal3Machine", Name: "w-0"}},
	}
	g.Expect(c.Create(ctx, machine)).To(Succeed())
	const providerID = "baremetalhost:///" + "openshift-machine-api/host-0/uid"
	m3m := &unstructured.Unstructured{}
	m3m.SetGroupVersionKind(metal3MachineGVK)
	m3m.SetNamespace(ns.Name)
	m3m.SetName("w-0")
	m3m.SetAnnotations(map[string]string{"metal3.io/BareMetalHost": ns.Name + "/host-0", clusterv1.PausedAnnotation: ""})
	m3m.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: "w-0", UID: machine.UID}})
	g.Expect(unstructured.SetNestedField(m3m.Object, "http://images/capi.qcow2", "spec", "image", "url")).To(Succeed())
	g.Expect(unstructured.SetNestedField(m3m.Object, "http://images/capi.qcow2.sha256", "spec", "image", "checksum")).To(Succeed())
	g.Expect(unstructured.SetNestedField(m3m.Object, providerID, "spec", "providerID")).To(Succeed())
	g.Expect(c.Create(ctx, m3m)).To(Succeed())
	key := types.NamespacedName{Namespace: ns.Name, Name: "w-0"}
	reconcile := func() {
		t.Helper()
		for range 3 { // finalizer, then the host, then the status
			_, err := m3.reconcileMachine(ctx, ctrl.Request{NamespacedName: key})
			g.Expect(err).NotTo(HaveOccurred())
		}
	}
	getHost := func() *bmhv1alpha1.BareMetalHost {
		h := &bmhv1alpha1.BareMetalHost{}
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(host), h)).To(Succeed())
		return h
	}
	getM3M := func() *unstructured.Unstructured {
		o := &unstructured.Unstructured{}
		o.SetGroupVersionKind(metal3MachineGVK)
		g.Expect(c.Get(ctx, key, o)).To(Succeed())
		return o
	}

	// Paused: nothing is touched.
	rv := getHost().ResourceVersion
	reconcile()
	g.Expect(getHost().ResourceVersion).To(Equal(rv), "a paused Metal3Machine does not touch the host")
	g.Expect(controllerutil.ContainsFinalizer(getM3M(), metal3Finalizer)).To(BeFalse())

	// Unpaused: the host is taken, not provisioned again.
	obj := getM3M()
	ann := obj.GetAnnotations()
	delete(ann, clusterv1.PausedAnnotation)
	obj.SetAnnotations(ann)
	g.Expect(c.Update(ctx, obj)).To(Succeed())
	reconcile()
	obj = getM3M()
	h := getHost()
	g.Expect(h.Spec.ConsumerRef).To(Equal(&corev1.ObjectReference{APIVersion: metal3MachineGVK.GroupVersion().String(), Kind: "Metal3Machine", Namespace: ns.Name, Name: "w-0"}))
	g.Expect(h.OwnerReferences).To(ConsistOf(metav1.OwnerReference{APIVersion: metal3MachineGVK.GroupVersion().String(), Kind: "Metal3Machine",
		Name: "w-0", UID: obj.GetUID(), Controller: ptr.To(true)}))
	g.Expect(h.Spec.Image.URL).To(Equal("http://images/mapi.qcow2"), "the host keeps the image it runs")
	g.Expect(string(h.Status.Provisioning.State)).To(Equal("provisioned"))
	got, _, _ := unstructured.NestedString(obj.Object, "spec", "providerID")
	g.Expect(got).To(Equal(providerID), "an existing providerID is kept")
	provisioned, _, _ := unstructured.NestedBool(obj.Object, "status", "initialization", "provisioned")
	g.Expect(provisioned).To(BeTrue())

	// Paused again, then deleted: the host is left as it is.
	ann = obj.GetAnnotations()
	ann[clusterv1.PausedAnnotation] = ""
	obj.SetAnnotations(ann)
	g.Expect(c.Update(ctx, obj)).To(Succeed())
	g.Expect(c.Delete(ctx, obj)).To(Succeed())
	rv = getHost().ResourceVersion
	reconcile()
	g.Expect(getHost().ResourceVersion).To(Equal(rv), "a paused Metal3Machine's deletion does not release the host")

	// Unpaused while deleted: the host is released and no longer owned.
	obj = getM3M()
	ann = obj.GetAnnotations()
	delete(ann, clusterv1.PausedAnnotation)
	obj.SetAnnotations(ann)
	g.Expect(c.Update(ctx, obj)).To(Succeed())
	reconcile()
	h = getHost()
	g.Expect(h.Spec.ConsumerRef).To(BeNil())
	g.Expect(h.OwnerReferences).To(BeEmpty())
	g.Expect(h.Spec.Image).To(BeNil())
}

// TestMetal3ChoosesFreeHost holds the Metal3 stand-in to CAPM3's chooseHost
// for a new Metal3Machine (a scale-up): among the hosts of its namespace
// that match its hostSelector, it takes one without a consumer, in state
// available (or ready) and without an error; it becomes the host's
// consumer and controller owner, and the host is provisioned with the
// Metal3Machine's image.
func TestMetal3ChoosesFreeHost(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env, err := envtest.Start(envtest.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	g.Expect(env.LabelMetal3CRDs(ctx)).To(Succeed())
	c := env.Client
	ns, err := env.NewNamespace(ctx, "metal3")
	g.Expect(err).NotTo(HaveOccurred())
	m3 := NewMetal3(NewKubelets())
	m3.c = c

	pool := map[string]string{"pool": "workers"}
	hosts := []struct {
		name, state, errorMessage string
		labels                    map[string]string
		consumed                  bool
	}{
		{name: "registering", state: "registering", labels: pool},
		{name: "in-error", state: "available", errorMessage: "BMC unreachable", labels: pool},
		{name: "consumed", state: "available", labels: pool, consumed: true},
		{name: "other-pool", state: "available", labels: map[string]string{"pool": "other"}},
		{name: "z-free", state: "available", labels: pool}, // listed last: the others are looked at first
	}
	for i, hs := range hosts {
		h := &bmhv1alpha1.BareMetalHost{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: hs.name, Labels: hs.labels},
			Spec: bmhv1alpha1.BareMetalHostSpec{
				BMC: bmhv1alpha1.BMCDetails{Address: fmt.Sprintf("redfish://192.0.2.1/redfish/v1/Systems/%d", i), CredentialsName: "bmc"},
			},
		}
		if hs.consumed {
			h.Spec.ConsumerRef = &corev1.ObjectReference{APIVersion: "machine.openshift.io/v1beta1", Kind: "Machine", Namespace: ns.Name, Name: "someone"}
		}
		g.Expect(c.Create(ctx, h)).To(Succeed())
		h.Status.Provisioning.State = bmhv1alpha1.ProvisioningState(hs.state)
		h.Status.ErrorMessage = hs.errorMessage
		h.Status.OperationalStatus = bmhv1alpha1.OperationalStatusOK
		g.Expect(c.Status().Update(ctx, h)).To(Succeed())
	}

	machine := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "w-new"},
		Spec: clusterv1.MachineSpec{ClusterName: "c", Bootstrap: clusterv1.Bootstrap{DataSecretName: ptr.To("w-user-data")},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: metal3MachineGVK.Group, Kind: "Metal3Machine", Name: "w-new"}},
	}
	g.Expect(c.Create(ctx, machine)).To(Succeed())
	m3m := &unstructured.Unstructured{}
	m3m.SetGroupVersionKind(metal3MachineGVK)
	m3m.SetNamespace(ns.Name)
	m3m.SetName("w-new")
	m3m.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: "w-new", UID: machine.UID}})
	g.Expect(unstructured.SetNestedField(m3m.Object, "http://images/capi.qcow2", "spec", "image", "url")).To(Succeed())
	g.Expect(unstructured.SetNestedField(m3m.Object, "http://images/capi.qcow2.sha256", "spec", "image", "checksum")).To(Succeed())
	g.Expect(unstructured.SetNestedStringMap(m3m.Object, pool, "spec", "hostSelector", "matchLabels")).To(Succeed())
	g.Expect(c.Create(ctx, m3m)).To(Succeed())
	key := types.NamespacedName{Namespace: ns.Name, Name: "w-new"}
	for range 3 { // finalizer, then the host, then the status
		_, err := m3.reconcileMachine(ctx, ctrl.Request{NamespacedName: key})
		g.Expect(err).NotTo(HaveOccurred())
	}

	g.Expect(c.Get(ctx, key, m3m)).To(Succeed())
	for _, hs := range hosts {
		h := &bmhv1alpha1.BareMetalHost{}
		g.Expect(c.Get(ctx, types.NamespacedName{Namespace: ns.Name, Name: hs.name}, h)).To(Succeed())
		if hs.name != "z-free" {
			g.Expect(h.Spec.Image).To(BeNil(), "host %s is not taken", hs.name)
			g.Expect(h.OwnerReferences).To(BeEmpty(), "host %s is not taken", hs.name)
			continue
		}
		g.Expect(h.Spec.ConsumerRef).To(Equal(&corev1.ObjectReference{APIVersion: metal3MachineGVK.GroupVersion().String(), Kind: "Metal3Machine", Namespace: ns.Name, Name: "w-new"}))
		g.Expect(h.OwnerReferences).To(ConsistOf(metav1.OwnerReference{APIVersion: metal3MachineGVK.GroupVersion().String(), Kind: "Metal3Machine",
			Name: "w-new", UID: m3m.GetUID(), Controller: ptr.To(true)}))
		g.Expect(h.Spec.Image).NotTo(BeNil())
		g.Expect(h.Spec.Image.URL).To(Equal("http://images/capi.qcow2"))
		g.Expect(string(h.Status.Provisioning.State)).To(Equal("provisioned"))
	}
	got, _, _ := unstructured.NestedString(m3m.Object, "metadata", "annotations", "metal3.io/BareMetalHost")
	g.Expect(got).To(Equal(ns.Name + "/z-free"))
	provisioned, _, _ := unstructured.NestedBool(m3m.Object, "status", "initialization", "provisioned")
	g.Expect(provisioned).To(BeTrue())
}
