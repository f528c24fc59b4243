package controllers_test

// Helpers of the MachineSet sync's flows.

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/addon/controllers/machinesetsync"
	"github.com/ocp-capi/ocp-capi/internal/addon/internal/authority"
	"github.com/ocp-capi/ocp-capi/internal/addon/internal/mapi2capi"
	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
)

// setProviderSpec replaces the MachineSet's providerSpec.
func setProviderSpec(t testing.TB, ms *mapiv1beta1.MachineSet, ps any) {
	update(t, ms, func(ms *mapiv1beta1.MachineSet) {
		ms.Spec.Template.Spec.ProviderSpec.Value = rawSpec(t, ps)
	})
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
	return authority.FindCondition(ms.Status.Conditions, machinesetsync.SynchronizedCondition)
}

// waitSynced waits until the MachineSet is Synchronized (from MAPI) at its generation
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
		client.MatchingLabels{machinesetsync.MachineSetLabel: mapi2capi.LabelValue(name)})).To(Succeed())
	return list.Items
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
