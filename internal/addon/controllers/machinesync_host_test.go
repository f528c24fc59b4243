package controllers_test

// The Machine sync of bare-metal machines and their hosts.

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/annotations"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ocp-capi/ocp-capi/internal/addon/controllers/machinesync"
	"github.com/ocp-capi/ocp-capi/internal/addon/internal/authority"
	"github.com/ocp-capi/ocp-capi/internal/addon/internal/mapi2capi"
	bmv1alpha1 "github.com/ocp-capi/ocp-capi/internal/consumed/baremetal/v1alpha1"
	bmhv1alpha1 "github.com/ocp-capi/ocp-capi/internal/consumed/baremetalhost/v1alpha1"
	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
	metal3v1 "github.com/ocp-capi/ocp-capi/internal/consumed/metal3/v1beta1"
)

// bareMetalMachine creates a MAPI MachineSet of a bare-metal machine and
// its Machine, which runs on the BareMetalHost host (in the CAPI
// namespace: a host elsewhere is not mirrored, see mapi2capi), as the
// Machine API's bare-metal actuator leaves them (played: host consumed by
// the Machine, provisioned; the Machine annotated with it).
func bareMetalMachine(t *testing.T) (name string, host *bmhv1alpha1.BareMetalHost) {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	msName := testName(t)
	ps, err := json.Marshal(&bmv1alpha1.BareMetalMachineProviderSpec{
		TypeMeta:     metav1.TypeMeta{APIVersion: "baremetal.cluster.k8s.io/v1alpha1", Kind: "BareMetalMachineProviderSpec"},
		Image:        bmv1alpha1.Image{URL: "http://images.example.com/rhcos.qcow2", Checksum: "http://images.example.com/rhcos.qcow2.md5sum"},
		UserData:     &corev1.SecretReference{Name: "worker-user-data-managed"},
		HostSelector: bmv1alpha1.HostSelector{MatchLabels: map[string]string{"pool": msName}},
	})
	g.Expect(err).NotTo(HaveOccurred())
	sel := map[string]string{"machine.openshift.io/cluster-api-cluster": clusterName, "machine.openshift.io/cluster-api-machineset": msName}
	ms := &mapiv1beta1.MachineSet{
		ObjectMeta: metav1.ObjectMeta{Name: msName, Namespace: mapiNS},
		Spec: mapiv1beta1.MachineSetSpec{
			Replicas: ptr.To[int32](1), Selector: metav1.LabelSelector{MatchLabels: sel},
			Template: mapiv1beta1.MachineTemplateSpec{
				ObjectMeta: mapiv1beta1.ObjectMeta{Labels: sel},
				Spec:       mapiv1beta1.MachineSpec{ProviderSpec: mapiv1beta1.ProviderSpec{Value: &runtime.RawExtension{Raw: ps}}},
			},
		},
	}
	g.Expect(env.Client.Create(ctx, ms)).To(Succeed())
	name = msName + "-0"
	host = &bmhv1alpha1.BareMetalHost{
		ObjectMeta: metav1.ObjectMeta{Namespace: capiNS, Name: msName + "-host", Labels: map[string]string{"pool": msName}},
		Spec: bmhv1alpha1.BareMetalHostSpec{
			BMC:    bmhv1alpha1.BMCDetails{Address: "redfish://192.0.2.1/redfish/v1/Systems/1", CredentialsName: "bmc"},
			Online: true,
			Image:  &bmhv1alpha1.Image{URL: "http://images.example.com/rhcos.qcow2"},
			ConsumerRef: &corev1.ObjectReference{APIVersion: mapiv1beta1.GroupVersion.String(), Kind: "Machine",
				Namespace: mapiNS, Name: name},
		},
	}
	g.Expect(env.Client.Create(ctx, host)).To(Succeed())
	m := &mapiv1beta1.Machine{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: mapiNS, Labels: sel,
			Annotations:     map[string]string{mapi2capi.HostAnnotation: capiNS + "/" + host.Name},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: mapiv1beta1.GroupVersion.String(), Kind: "MachineSet", Name: msName, UID: ms.UID, Controller: ptr.To(true)}},
		},
		Spec: mapiv1beta1.MachineSpec{ProviderSpec: mapiv1beta1.ProviderSpec{Value: &runtime.RawExtension{Raw: ps}},
			ProviderID: ptr.To("baremetalhost:///" + capiNS + "/" + host.Name + "/" + string(host.UID))},
	}
	g.Expect(env.Client.Create(ctx, m)).To(Succeed())
	return name, host
}

// TestRollbackReturnsHost: a bare-metal machine that Cluster API ran and
// that rolls back to the Machine API gets its host back: the host's
// consumer is the MAPI Machine again (the Machine API's actuator would not
// set it, and would not deprovision a host another object consumes), and
// the Metal3Machine's ownerReference, which CAPM3 put there, goes (else
// deleting the paused Metal3Machine would have the garbage collector
// delete the host). While Cluster API is authoritative the host is not
// touched, and once given back it is not written again.
func TestRollbackReturnsHost(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	name, host := bareMetalMachine(t)
	m := waitMachineSynced(t, name, mapiv1beta1.SynchronizedAPIMachineAPI)
	m3m := get(g, capiNS, name, &metal3v1.Metal3Machine{})
	g.Expect(annotations.HasPaused(m3m)).To(BeTrue())
	g.Expect(m3m.Annotations).To(HaveKeyWithValue(mapi2capi.HostAnnotation, capiNS+"/"+host.Name))
	g.Expect(get(g, capiNS, host.Name, &bmhv1alpha1.BareMetalHost{}).ResourceVersion).To(Equal(host.ResourceVersion), "the host is not written while the Machine API runs the machine")

	// The switch to Cluster API, and CAPM3 taking the host (played).
	capi := get(g, capiNS, name, &clusterv1.Machine{})
	setAuthority(t, m, mapiv1beta1.MachineAuthorityClusterAPI)
	unpause(t, capi, m3m)
	waitMachineSynced(t, name, mapiv1beta1.SynchronizedAPIClusterAPI)
	m3m = get(g, capiNS, name, &metal3v1.Metal3Machine{})
	g.Eventually(func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(host), host); err != nil {
			return err
		}
		host.Spec.ConsumerRef = &corev1.ObjectReference{APIVersion: "infrastructure.cluster.x-k8s.io/v1beta2", Kind: "Metal3Machine", Namespace: capiNS, Name: name}
		host.OwnerReferences = []metav1.OwnerReference{{APIVersion: "infrastructure.cluster.x-k8s.io/v1beta2", Kind: "Metal3Machine",
			Name: name, UID: m3m.UID, Controller: ptr.To(true)}}
		return env.Client.Update(ctx, host)
	}).WithTimeout(timeout).Should(Succeed())
	g.Consistently(func(g Gomega) {
		h := get(g, capiNS, host.Name, &bmhv1alpha1.BareMetalHost{})
		g.Expect(h.ResourceVersion).To(Equal(host.ResourceVersion), "Cluster API's host is not touched")
	}).WithTimeout(2 * time.Second).Should(Succeed())

	// Rollback.
	setAuthority(t, m, mapiv1beta1.MachineAuthorityMachineAPI)
	waitMachineSynced(t, name, mapiv1beta1.SynchronizedAPIMachineAPI)
	var back *bmhv1alpha1.BareMetalHost
	g.Eventually(func(g Gomega) {
		back = get(g, capiNS, host.Name, &bmhv1alpha1.BareMetalHost{})
		g.Expect(back.Spec.ConsumerRef).To(Equal(&corev1.ObjectReference{APIVersion: mapiv1beta1.GroupVersion.String(), Kind: "Machine", Namespace: mapiNS, Name: name}))
		g.Expect(back.OwnerReferences).To(BeEmpty())
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(back.Spec.Image).To(Equal(host.Spec.Image), "the host keeps its image")
	g.Expect(annotations.HasPaused(get(g, capiNS, name, &metal3v1.Metal3Machine{}))).To(BeTrue())
	g.Consistently(func(g Gomega) {
		g.Expect(get(g, capiNS, host.Name, &bmhv1alpha1.BareMetalHost{}).ResourceVersion).To(Equal(back.ResourceVersion))
	}).WithTimeout(2 * time.Second).Should(Succeed())
}

// TestHostElsewhereNotMirrored: a bare-metal machine whose host is outside
// the CAPI namespace gets no mirror, and says why, in its condition and a
// Warning event; the refusal is no reconcile error (which would be retried
// with backoff while nothing changed), and the user's fix is synced.
func TestHostElsewhereNotMirrored(t *testing.T) {
	g := NewWithT(t)
	name, host := bareMetalMachine(t)
	m := waitMachineSynced(t, name, mapiv1beta1.SynchronizedAPIMachineAPI)
	update(t, m, func(m *mapiv1beta1.Machine) { m.Annotations[mapi2capi.HostAnnotation] = mapiNS + "/some-host" })
	g.Eventually(func(g Gomega) {
		m := get(g, mapiNS, name, &mapiv1beta1.Machine{})
		c := authority.FindCondition(m.Status.Conditions, authority.SynchronizedCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(corev1.ConditionFalse))
		g.Expect(c.Reason).To(Equal(machinesync.ReasonConversionFailed))
		g.Expect(c.Message).To(ContainSubstring("--capi-namespace " + mapiNS))
	}).WithTimeout(timeout).Should(Succeed())
	waitEvents(t, mapiNS, name, ContainElement(And(HaveField("Type", corev1.EventTypeWarning), HaveField("Reason", machinesync.ReasonConversionFailed))))

	update(t, m, func(m *mapiv1beta1.Machine) { m.Annotations[mapi2capi.HostAnnotation] = capiNS + "/" + host.Name })
	g.Eventually(func(g Gomega) {
		m := get(g, mapiNS, name, &mapiv1beta1.Machine{})
		c := authority.FindCondition(m.Status.Conditions, authority.SynchronizedCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(corev1.ConditionTrue), "Synchronized %+v", c)
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(reconcileErrorsOf("machinesync", name)).To(BeEmpty())
}
