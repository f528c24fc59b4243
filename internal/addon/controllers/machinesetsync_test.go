package controllers_test

import (
	"context"
	"encoding/json"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/addon/controllers/machinesetsync"
	"github.com/ocp-capi/ocp-capi/internal/addon/internal/mapi2capi"
	bmv1alpha1 "github.com/ocp-capi/ocp-capi/internal/consumed/baremetal/v1alpha1"
	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
	metal3v1 "github.com/ocp-capi/ocp-capi/internal/consumed/metal3/v1beta1"
)

// A MAPI-authoritative MachineSet without a mirror gets one
// (docs/addon/machineset-sync.md, "What it maintains").
func TestCreatesMirror(t *testing.T) {
	g := NewWithT(t)
	ms := newMachineSet(t, testName(t), openStackSpec())
	create(t, ms)
	_, mirror := waitSynced(t, ms.Name)

	g.Expect(mirror.Spec.ClusterName).To(Equal(clusterName))
	g.Expect(*mirror.Spec.Replicas).To(Equal(int32(2)))
	g.Expect(mirror.Spec.Selector.MatchLabels).To(Equal(ms.Spec.Selector.MatchLabels))
	g.Expect(mirror.Spec.Template.Labels).To(HaveKeyWithValue("node-role.kubernetes.io/worker", ""))
	g.Expect(mirror.Spec.Template.Spec.ClusterName).To(Equal(clusterName))
	g.Expect(mirror.Spec.Template.Spec.Bootstrap.DataSecretName).To(Equal(ptr.To("worker-user-data")))
	g.Expect(mirror.Spec.Template.Spec.InfrastructureRef).To(Equal(clusterv1.ContractVersionedObjectReference{
		APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "OpenStackMachineTemplate", Name: expectedTemplateName(t, ms),
	}))
	g.Expect(mirror.Finalizers).To(ContainElement(machinesetsync.SyncFinalizer))
	g.Expect(mirror.Annotations).To(HaveKeyWithValue(machinesetsync.CreatedForAnnotation, ms.Name))
	g.Expect(getMS(g, ms.Name).Finalizers).To(ContainElement(machinesetsync.SyncFinalizer))
	waitEvents(t, mapiNS, ms.Name, ContainElement(HaveField("Reason", machinesetsync.EventMirrorCreated)))
}

// The mirror is created paused, and stays paused while the Machine API is
// authoritative (docs/addon/machineset-sync.md, "What it maintains").
func TestMirrorPaused(t *testing.T) {
	g := NewWithT(t)
	ms := newMachineSet(t, testName(t), openStackSpec())
	create(t, ms)
	_, mirror := waitSynced(t, ms.Name)
	g.Expect(mirror.Annotations).To(HaveKeyWithValue(clusterv1.PausedAnnotation, ""))

	update(t, mirror, func(m *clusterv1.MachineSet) { delete(m.Annotations, clusterv1.PausedAnnotation) })
	g.Eventually(func(g Gomega) {
		g.Expect(getMirror(g, ms.Name).Annotations).To(HaveKey(clusterv1.PausedAnnotation))
	}).WithTimeout(timeout).Should(Succeed())
}

// Each mirror has the name of its MAPI MachineSet
// (docs/addon/machineset-sync.md, "What it maintains").
func TestMirrorSameName(t *testing.T) {
	g := NewWithT(t)
	names := []string{testName(t) + "-a", testName(t) + "-b"}
	for _, n := range names {
		create(t, newMachineSet(t, n, openStackSpec()))
	}
	for _, n := range names {
		_, mirror := waitSynced(t, n)
		g.Expect(mirror.Name).To(Equal(n))
		g.Expect(mirror.Namespace).To(Equal(capiNS))
	}
}

// A template is named <MachineSet>-<hash of its spec>, so identical specs
// share it: a change outside the template's spec reuses it
// (docs/addon/machineset-sync.md, "What it maintains").
func TestTemplateHashNameAndDedup(t *testing.T) {
	g := NewWithT(t)
	ms := newMachineSet(t, testName(t), openStackSpec())
	create(t, ms)
	_, mirror := waitSynced(t, ms.Name)
	name := mirror.Spec.Template.Spec.InfrastructureRef.Name
	g.Expect(name).To(Equal(expectedTemplateName(t, ms)))
	g.Expect(name).To(MatchRegexp("^" + ms.Name + "-[0-9a-f]{8}$"))
	tmpl := getTemplate(g, name)
	g.Expect(tmpl.Labels).To(HaveKeyWithValue(machinesetsync.MachineSetLabel, ms.Name))
	g.Expect(tmpl.Annotations).To(HaveKeyWithValue(machinesetsync.CreatedForAnnotation, ms.Name))

	update(t, ms, func(ms *mapiv1beta1.MachineSet) { ms.Spec.Replicas = ptr.To[int32](5) })
	ms, mirror = waitSynced(t, ms.Name)
	g.Expect(*mirror.Spec.Replicas).To(Equal(int32(5)))
	g.Expect(mirror.Spec.Template.Spec.InfrastructureRef.Name).To(Equal(name))
	g.Expect(templatesOf(g, ms.Name)).To(HaveLen(1))
	g.Expect(getTemplate(g, name).UID).To(Equal(tmpl.UID), "the template was not replaced")
}

// A template has an ownerReference to the mirror; when the spec changes,
// the old template loses it, and one with another owner keeps that owner
// and stays (docs/addon/machineset-sync.md, "When the spec changes").
func TestTemplateOwnerRefOnChange(t *testing.T) {
	g := NewWithT(t)
	ms := newMachineSet(t, testName(t), openStackSpec())
	create(t, ms)
	_, mirror := waitSynced(t, ms.Name)
	oldName := mirror.Spec.Template.Spec.InfrastructureRef.Name
	old := getTemplate(g, oldName)
	g.Expect(old.OwnerReferences).To(HaveLen(1))
	g.Expect(hasMirrorRef(old.OwnerReferences, mirror)).To(BeTrue())

	// Someone else owns the old template too.
	other := &corev1.ConfigMap{}
	other.Name, other.Namespace = ms.Name+"-owner", capiNS
	create(t, other)
	update(t, old, func(tm *infrav1.OpenStackMachineTemplate) {
		tm.OwnerReferences = append(tm.OwnerReferences, ownerRefTo(other))
	})

	ps := openStackSpec()
	ps.Flavor = "m1.2xlarge"
	setProviderSpec(t, ms, ps)
	g.Eventually(func(g Gomega) {
		m := getMirror(g, ms.Name)
		g.Expect(m.Spec.Template.Spec.InfrastructureRef.Name).NotTo(Equal(oldName))
		g.Expect(hasMirrorRef(getTemplate(g, m.Spec.Template.Spec.InfrastructureRef.Name).OwnerReferences, m)).To(BeTrue())
		old := getTemplate(g, oldName)
		g.Expect(old.OwnerReferences).To(ConsistOf(HaveField("UID", other.UID)))
	}).WithTimeout(timeout).Should(Succeed())
	waitSynced(t, ms.Name)
	g.Expect(getTemplate(g, oldName).DeletionTimestamp).To(BeNil())
}

// An old template left without ownerReferences is deleted; reverting the
// change reuses its name (docs/addon/machineset-sync.md, "When the spec
// changes").
func TestOrphanedTemplateDeleted(t *testing.T) {
	g := NewWithT(t)
	ms := newMachineSet(t, testName(t), openStackSpec())
	create(t, ms)
	_, mirror := waitSynced(t, ms.Name)
	first := getTemplate(g, mirror.Spec.Template.Spec.InfrastructureRef.Name)

	ps := openStackSpec()
	ps.Flavor = "m1.2xlarge"
	setProviderSpec(t, ms, ps)
	var second string
	g.Eventually(func(g Gomega) {
		m := getMirror(g, ms.Name)
		second = m.Spec.Template.Spec.InfrastructureRef.Name
		g.Expect(second).NotTo(Equal(first.Name))
		gone(g, first.DeepCopy())
		g.Expect(templatesOf(g, ms.Name)).To(HaveLen(1))
	}).WithTimeout(timeout).Should(Succeed())
	waitEvents(t, capiNS, ms.Name, ContainElement(HaveField("Reason", machinesetsync.EventTemplateDeleted)))

	setProviderSpec(t, ms, openStackSpec())
	g.Eventually(func(g Gomega) {
		g.Expect(getMirror(g, ms.Name).Spec.Template.Spec.InfrastructureRef.Name).To(Equal(first.Name))
		gone(g, &infrav1.OpenStackMachineTemplate{ObjectMeta: capiMeta(second)})
	}).WithTimeout(timeout).Should(Succeed())
	waitSynced(t, ms.Name)
}

// Labels and annotations are copied from MAPI to CAPI, with upstream's
// translations; a removed label goes from the mirror too
// (docs/addon/machineset-sync.md, "Conversion", MachineSet).
func TestLabelsAnnotationsCopied(t *testing.T) {
	g := NewWithT(t)
	ms := newMachineSet(t, testName(t), openStackSpec())
	ms.Labels["team"] = "blue"
	ms.Labels[mapi2capi.MAPIMachineRoleLabel] = "infra"
	ms.Annotations = map[string]string{"machine.openshift.io/memoryMb": "16384", mapi2capi.MAPIDeleteMachineAnnotation: "true"}
	create(t, ms)
	_, mirror := waitSynced(t, ms.Name)
	g.Expect(mirror.Labels).To(Equal(map[string]string{
		"machine.openshift.io/cluster-api-cluster": clusterName, "team": "blue",
		"node-role.kubernetes.io/infra": "", clusterv1.ClusterNameLabel: clusterName,
	}))
	g.Expect(mirror.Annotations).To(Equal(map[string]string{
		"machine.openshift.io/memoryMb": "16384", clusterv1.DeleteMachineAnnotation: "true",
		clusterv1.PausedAnnotation: "", machinesetsync.CreatedForAnnotation: ms.Name,
	}))

	update(t, ms, func(ms *mapiv1beta1.MachineSet) {
		delete(ms.Labels, "team")
		ms.Annotations["extra"] = "x"
	})
	g.Eventually(func(g Gomega) {
		m := getMirror(g, ms.Name)
		g.Expect(m.Labels).NotTo(HaveKey("team"))
		g.Expect(m.Annotations).To(HaveKeyWithValue("extra", "x"))
	}).WithTimeout(timeout).Should(Succeed())
}

// A MachineSet the conversion refuses gets Synchronized False, with the
// field's path, and a Warning event; the refusal is not a failure of the
// controller, so no reconcile returns an error (which would be retried
// with backoff while nothing changed). The user's fix is synced at once
// (docs/addon/machineset-sync.md, "The Synchronized condition").
func TestSynchronizedFalseThenTrue(t *testing.T) {
	g := NewWithT(t)
	ps := openStackSpec()
	raw := map[string]any{}
	b, _ := json.Marshal(ps)
	_ = json.Unmarshal(b, &raw)
	raw["ports"] = []any{
		map[string]any{"networkID": netID},
		map[string]any{"networkID": netID, "portSecurity": "no"},
	}
	ms := newMachineSet(t, testName(t), raw)
	create(t, ms)

	c := waitCondition(t, ms.Name, corev1.ConditionFalse, machinesetsync.ReasonConversionFailed)
	g.Expect(c.Severity).To(Equal(mapiv1beta1.ConditionSeverityError))
	g.Expect(c.Message).To(ContainSubstring("spec.template.spec.providerSpec.value.ports[1].portSecurity"))
	waitEvents(t, mapiNS, ms.Name, ContainElement(And(HaveField("Type", corev1.EventTypeWarning), HaveField("Reason", machinesetsync.ReasonConversionFailed))))
	g.Expect(getMS(g, ms.Name).Status.SynchronizedGeneration).To(BeZero())
	g.Consistently(func(g Gomega) { gone(g, &clusterv1.MachineSet{ObjectMeta: capiMeta(ms.Name)}) }).Should(Succeed())

	delete(raw["ports"].([]any)[1].(map[string]any), "portSecurity")
	setProviderSpec(t, ms, raw)
	c = waitCondition(t, ms.Name, corev1.ConditionTrue, machinesetsync.ReasonSynchronized)
	g.Expect(c.Severity).To(BeEmpty())
	waitSynced(t, ms.Name)
	// The reconciles of the refused version finished before the fix's.
	g.Expect(reconcileErrorsOf("machinesetsync", ms.Name)).To(BeEmpty())
}

// status.synchronizedGeneration follows the generation of the MAPI
// MachineSet, the authoritative one (docs/addon/machineset-sync.md, "The
// Synchronized condition").
func TestSynchronizedGeneration(t *testing.T) {
	g := NewWithT(t)
	ms := newMachineSet(t, testName(t), openStackSpec())
	create(t, ms)
	ms, _ = waitSynced(t, ms.Name)
	g.Expect(ms.Status.SynchronizedGeneration).To(Equal(ms.Generation))
	first := ms.Generation

	update(t, ms, func(ms *mapiv1beta1.MachineSet) { ms.Spec.Replicas = ptr.To[int32](0) })
	g.Eventually(func(g Gomega) {
		ms := getMS(g, ms.Name)
		g.Expect(ms.Generation).To(BeNumerically(">", first))
		g.Expect(ms.Status.SynchronizedGeneration).To(Equal(ms.Generation))
		g.Expect(*getMirror(g, ms.Name).Spec.Replicas).To(BeZero())
	}).WithTimeout(timeout).Should(Succeed())
}

// The mirror's status is overwritten with the conversion's: the fields
// MAPI knows, once MAPI's status is current (docs/addon/machineset-sync.md,
// "What it maintains").
func TestStatusMirrored(t *testing.T) {
	g := NewWithT(t)
	ms := newMachineSet(t, testName(t), openStackSpec())
	create(t, ms)
	ms, _ = waitSynced(t, ms.Name)
	g.Eventually(func() error {
		ms := getMS(g, ms.Name)
		ms.Status.Replicas, ms.Status.FullyLabeledReplicas, ms.Status.ReadyReplicas, ms.Status.AvailableReplicas = 2, 2, 2, 1
		ms.Status.ObservedGeneration = ms.Generation
		return env.Client.Status().Update(context.Background(), ms)
	}).WithTimeout(timeout).Should(Succeed())
	g.Eventually(func(g Gomega) {
		m := getMirror(g, ms.Name)
		g.Expect(m.Status.Replicas).To(Equal(ptr.To[int32](2)))
		g.Expect(m.Status.ReadyReplicas).To(Equal(ptr.To[int32](2)))
		g.Expect(m.Status.AvailableReplicas).To(Equal(ptr.To[int32](1)))
		g.Expect(m.Status.ObservedGeneration).To(Equal(m.Generation))
		g.Expect(m.Status.Selector).To(ContainSubstring("machine.openshift.io/cluster-api-machineset=" + ms.Name))
		g.Expect(m.Status.Deprecated.V1Beta1.FullyLabeledReplicas).To(Equal(int32(2))) //nolint:staticcheck // MAPI has it
	}).WithTimeout(timeout).Should(Succeed())
}

// Conversion warnings become events and appear in the condition's message.
func TestConversionWarnings(t *testing.T) {
	g := NewWithT(t)
	ps := openStackSpec()
	ps.SSHUserName = "core"
	ms := newMachineSet(t, testName(t), ps)
	create(t, ms)
	c := waitCondition(t, ms.Name, corev1.ConditionTrue, machinesetsync.ReasonSynchronized)
	g.Expect(c.Message).To(ContainSubstring("spec.template.spec.providerSpec.value.sshUserName"))
	waitEvents(t, mapiNS, ms.Name, ContainElement(And(
		HaveField("Type", corev1.EventTypeWarning), HaveField("Reason", machinesetsync.EventConversionWarning),
		HaveField("Note", ContainSubstring("sshUserName")))))
}

// A bare-metal MachineSet gets a Metal3MachineTemplate.
func TestBareMetal(t *testing.T) {
	g := NewWithT(t)
	ps := bmv1alpha1.BareMetalMachineProviderSpec{
		Image:    bmv1alpha1.Image{URL: "http://172.22.0.3:6181/images/rhcos.qcow2", Checksum: "http://172.22.0.3:6181/images/rhcos.qcow2.md5sum"},
		UserData: &corev1.SecretReference{Name: "worker-user-data-managed"},
	}
	ps.Kind = mapi2capi.BareMetalProviderSpecKind
	ms := newMachineSet(t, testName(t), ps)
	create(t, ms)
	var mirror *clusterv1.MachineSet
	g.Eventually(func(g Gomega) {
		c := synchronized(getMS(g, ms.Name))
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(corev1.ConditionTrue), "%+v", c)
		mirror = getMirror(g, ms.Name)
	}).WithTimeout(timeout).Should(Succeed())
	ref := mirror.Spec.Template.Spec.InfrastructureRef
	g.Expect(ref.Kind).To(Equal("Metal3MachineTemplate"))
	m3 := &metal3v1.Metal3MachineTemplate{}
	g.Expect(env.Client.Get(context.Background(), objectKey(capiNS, ref.Name), m3)).To(Succeed())
	g.Expect(m3.Spec.Template.Spec.Image.URL).To(Equal(ps.Image.URL))
	g.Expect(hasMirrorRef(m3.OwnerReferences, mirror)).To(BeTrue())
	g.Expect(m3.Labels).To(HaveKeyWithValue(machinesetsync.MachineSetLabel, ms.Name))

	// Deleting removes the Metal3MachineTemplate too.
	g.Expect(env.Client.Delete(context.Background(), ms)).To(Succeed())
	g.Eventually(func(g Gomega) {
		gone(g, m3.DeepCopy())
		gone(g, ms.DeepCopy())
	}).WithTimeout(timeout).Should(Succeed())
}
