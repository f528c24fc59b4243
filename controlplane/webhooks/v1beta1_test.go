package webhooks_test

// v1beta1 of the control-plane API in a real API server: the CRDs convert
// through the conversion webhook served with the validating ones, and the
// validating webhooks, registered for v1alpha3 only, see v1beta1 requests
// converted (matchPolicy Equivalent) and name v1beta1's fields.

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "github.com/ocp-capi/ocp-capi/api/controlplane/v1alpha3"
	controlplanev1beta1 "github.com/ocp-capi/ocp-capi/api/controlplane/v1beta1"
)

func newV1beta1ControlPlane(ns, name string) *controlplanev1beta1.OpenshiftAssistedControlPlane {
	return &controlplanev1beta1.OpenshiftAssistedControlPlane{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: controlplanev1beta1.OpenshiftAssistedControlPlaneSpec{
			DistributionVersion: "4.19.0",
			MachineTemplate: controlplanev1beta1.OpenshiftAssistedControlPlaneMachineTemplate{
				ObjectMeta: clusterv1.ObjectMeta{Labels: map[string]string{"role": "cp"}},
				Spec: controlplanev1beta1.OpenshiftAssistedControlPlaneMachineTemplateSpec{
					InfrastructureRef: clusterv1.ContractVersionedObjectReference{
						APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "OpenStackMachineTemplate", Name: name + "-cp"},
				},
			},
			Config: controlplanev1.OpenshiftAssistedControlPlaneConfigSpec{BaseDomain: "example.com"},
		},
	}
}

func testV1beta1(t *testing.T, c client.Client, ns string) {
	ctx := context.Background()

	t.Run("CRDs convert by webhook", func(t *testing.T) {
		g := NewWithT(t)
		for _, name := range []string{"openshiftassistedcontrolplanes", "openshiftassistedcontrolplanetemplates"} {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			g.Expect(c.Get(ctx, client.ObjectKey{Name: name + ".controlplane.cluster.x-k8s.io"}, crd)).To(Succeed())
			g.Expect(crd.Spec.Conversion).NotTo(BeNil())
			g.Expect(crd.Spec.Conversion.Strategy).To(Equal(apiextensionsv1.WebhookConverter), name)
			g.Expect(crd.Labels).To(HaveKeyWithValue(clusterv1.GroupVersion.String(), "v1alpha3_v1beta1"), name)
		}
	})

	t.Run("v1beta1 read as v1alpha3 and back", func(t *testing.T) {
		g := NewWithT(t)
		cp := newV1beta1ControlPlane(ns, "beta")
		g.Expect(c.Create(ctx, cp)).To(Succeed())
		// The schema's default reaches the field at v1beta1's path.
		g.Expect(cp.Spec.MachineTemplate.Spec.Deletion.NodeDeletionTimeoutSeconds).To(HaveValue(BeEquivalentTo(10)))
		g.Expect(cp.Spec.Replicas).To(HaveValue(BeEquivalentTo(3)))

		hub := &controlplanev1.OpenshiftAssistedControlPlane{}
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(cp), hub)).To(Succeed())
		g.Expect(hub.Spec.MachineTemplate.InfrastructureRef).To(Equal(cp.Spec.MachineTemplate.Spec.InfrastructureRef))
		g.Expect(hub.Spec.MachineTemplate.Deletion).To(Equal(cp.Spec.MachineTemplate.Spec.Deletion))
		g.Expect(hub.Spec.MachineTemplate.ObjectMeta).To(Equal(cp.Spec.MachineTemplate.ObjectMeta))
		g.Expect(hub.Spec.Config).To(Equal(cp.Spec.Config))

		// The status written at v1alpha3 (as the controller does) reads the
		// same at v1beta1 (as CAPI core may).
		base := hub.DeepCopy()
		hub.Status.Initialization.ControlPlaneInitialized = ptr.To(true)
		hub.Status.Replicas, hub.Status.ReadyReplicas = ptr.To[int32](3), ptr.To[int32](2)
		hub.Status.Version, hub.Status.Selector = "v1.32.0", "cluster.x-k8s.io/cluster-name=demo"
		hub.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: "NotReady",
			LastTransitionTime: metav1.Now().Rfc3339Copy()}}
		g.Expect(c.Status().Patch(ctx, hub, client.MergeFrom(base))).To(Succeed())

		back := &controlplanev1beta1.OpenshiftAssistedControlPlane{}
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(cp), back)).To(Succeed())
		g.Expect(back.Spec).To(Equal(cp.Spec))
		g.Expect(back.Status).To(Equal(hub.Status))

		// An update at v1beta1 reaches v1alpha3.
		base1 := back.DeepCopy()
		back.Spec.MachineTemplate.Spec.InfrastructureRef.Name = "beta-cp-2"
		back.Spec.MachineTemplate.Spec.Deletion.NodeDrainTimeoutSeconds = ptr.To[int32](60)
		g.Expect(c.Patch(ctx, back, client.MergeFrom(base1))).To(Succeed())
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(cp), hub)).To(Succeed())
		g.Expect(hub.Spec.MachineTemplate.InfrastructureRef.Name).To(Equal("beta-cp-2"))
		g.Expect(hub.Spec.MachineTemplate.Deletion.NodeDrainTimeoutSeconds).To(HaveValue(BeEquivalentTo(60)))
	})

	t.Run("v1alpha3 read as v1beta1", func(t *testing.T) {
		g := NewWithT(t)
		cp := newControlPlane(ns, "alpha")
		g.Expect(c.Create(ctx, cp)).To(Succeed())
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(controlplanev1beta1.GroupVersion.WithKind("OpenshiftAssistedControlPlane"))
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(cp), u)).To(Succeed())
		ref, found, err := unstructured.NestedStringMap(u.Object, "spec", "machineTemplate", "spec", "infrastructureRef")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(found).To(BeTrue(), "spec.machineTemplate.spec.infrastructureRef in %v", u.Object["spec"])
		g.Expect(ref).To(Equal(map[string]string{"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "Metal3MachineTemplate", "name": "alpha-cp"}))
		_, found, _ = unstructured.NestedFieldNoCopy(u.Object, "spec", "machineTemplate", "infrastructureRef")
		g.Expect(found).To(BeFalse(), "v1alpha3's path at v1beta1")
		timeout, _, _ := unstructured.NestedInt64(u.Object, "spec", "machineTemplate", "spec", "deletion", "nodeDeletionTimeoutSeconds")
		g.Expect(timeout).To(BeEquivalentTo(10))
	})

	t.Run("v1beta1 refused", func(t *testing.T) {
		g := NewWithT(t)
		// The webhook (it sees v1alpha3) names v1beta1's fields.
		bad := newV1beta1ControlPlane(ns, "bad-beta")
		bad.Spec.MachineTemplate.Spec.InfrastructureRef.Kind = "OpenStackMachine"
		bad.Spec.DistributionVersion = "4.12.0"
		err := c.Create(ctx, bad)
		g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
		g.Expect(causes(err)).To(ConsistOf("spec.machineTemplate.spec.infrastructureRef.kind", "spec.distributionVersion"))

		// The schema (v1beta1's own).
		noKind := newV1beta1ControlPlane(ns, "nokind-beta")
		noKind.Spec.MachineTemplate.Spec.InfrastructureRef.Kind = ""
		err = c.Create(ctx, noKind)
		g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
		g.Expect(err.Error()).To(ContainSubstring("spec.machineTemplate.spec.infrastructureRef.kind"))

		// The schema's CEL rule, at v1beta1's path: a control plane names
		// its infrastructure machine template.
		noRef := newV1beta1ControlPlane(ns, "noref-beta")
		noRef.Spec.MachineTemplate.Spec = controlplanev1beta1.OpenshiftAssistedControlPlaneMachineTemplateSpec{}
		err = c.Create(ctx, noRef)
		g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
		g.Expect(causes(err)).To(ConsistOf("spec.machineTemplate.spec.infrastructureRef"))

		// A template, the same way.
		tmpl := &controlplanev1beta1.OpenshiftAssistedControlPlaneTemplate{ObjectMeta: metav1.ObjectMeta{Name: "class-beta", Namespace: ns}}
		tmpl.Spec.Template.Spec = newV1beta1ControlPlane(ns, "class-beta").Spec
		tmpl.Spec.Template.Spec.MachineTemplate.Spec.InfrastructureRef.Kind = "OpenStackMachine"
		err = c.Create(ctx, tmpl)
		g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
		g.Expect(causes(err)).To(ConsistOf("spec.template.spec.machineTemplate.spec.infrastructureRef.kind"))

		tmpl.Spec.Template.Spec.MachineTemplate.Spec.InfrastructureRef.Kind = "OpenStackMachineTemplate"
		g.Expect(c.Create(ctx, tmpl)).To(Succeed())
		hubT := &controlplanev1.OpenshiftAssistedControlPlaneTemplate{}
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(tmpl), hubT)).To(Succeed())
		g.Expect(hubT.Spec.Template.Spec.MachineTemplate.InfrastructureRef).To(Equal(tmpl.Spec.Template.Spec.MachineTemplate.Spec.InfrastructureRef))

		// A template without a machine template, as a ClusterClass's is
		// (its topology sets the control plane's), stored and read back
		// without one at either version.
		noRefT := &controlplanev1beta1.OpenshiftAssistedControlPlaneTemplate{ObjectMeta: metav1.ObjectMeta{Name: "class-noref-beta", Namespace: ns}}
		noRefT.Spec.Template.Spec = newV1beta1ControlPlane(ns, "class-noref-beta").Spec
		noRefT.Spec.Template.Spec.MachineTemplate = controlplanev1beta1.OpenshiftAssistedControlPlaneMachineTemplate{}
		g.Expect(c.Create(ctx, noRefT)).To(Succeed())
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(noRefT), hubT)).To(Succeed())
		g.Expect(hubT.Spec.Template.Spec.MachineTemplate.InfrastructureRef.IsDefined()).To(BeFalse())
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(controlplanev1beta1.GroupVersion.WithKind("OpenshiftAssistedControlPlaneTemplate"))
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(noRefT), u)).To(Succeed())
		_, found, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "template", "spec", "machineTemplate")
		g.Expect(found).To(BeFalse(), "no machineTemplate written back: %v", u.Object["spec"])
	})
}
