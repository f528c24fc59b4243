package webhooks_test

// This test installs the generated CRDs and webhook configurations in a real
// API server and serves the webhooks: it checks that the API server calls
// them, that the CRD's CEL rules hold (also through the scale subresource,
// which bypasses the webhooks), and that every error names its field.

import (
	"context"
	"testing"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "github.com/ocp-capi/ocp-capi/api/controlplane/v1alpha3"
	"github.com/ocp-capi/ocp-capi/controlplane/webhooks"
	"github.com/ocp-capi/ocp-capi/test/envtest"
)

func newControlPlane(ns, name string) *controlplanev1.OpenshiftAssistedControlPlane {
	return &controlplanev1.OpenshiftAssistedControlPlane{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: controlplanev1.OpenshiftAssistedControlPlaneSpec{
			DistributionVersion: "4.19.0",
			MachineTemplate: controlplanev1.OpenshiftAssistedControlPlaneMachineTemplate{
				InfrastructureRef: clusterv1.ContractVersionedObjectReference{
					APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "Metal3MachineTemplate", Name: name + "-cp"},
			},
			Config: controlplanev1.OpenshiftAssistedControlPlaneConfigSpec{BaseDomain: "example.com"},
		},
	}
}

// startWithWebhooks starts an API server that calls the control-plane
// webhooks, served here.
func startWithWebhooks(ctx context.Context, addToScheme ...func(*runtime.Scheme) error) (*envtest.Environment, func(), error) {
	return envtest.StartWithWebhooks(ctx, envtest.WebhookEnvOptions{
		Manifests:   []string{"controlplane/config/webhook/manifests.yaml"},
		AddToScheme: append([]func(*runtime.Scheme) error{controlplanev1.AddToScheme}, addToScheme...),
		Setup:       webhooks.SetupWebhooks,
	})
}

// causes are the field paths of an Invalid error.
func causes(err error) []string {
	var out []string
	if s, ok := err.(apierrors.APIStatus); ok && s.Status().Details != nil {
		for _, c := range s.Status().Details.Causes {
			out = append(out, c.Field)
		}
	}
	return out
}

func TestWebhooksInAPIServer(t *testing.T) {
	envtest.RequireAPIServer(t)
	g := NewWithT(t)
	ctrl.SetLogger(logr.Discard())
	ctx := context.Background()
	env, stop, err := startWithWebhooks(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	defer stop()

	ns, err := env.NewNamespace(ctx, "cp-webhooks")
	g.Expect(err).NotTo(HaveOccurred())
	c := env.Client

	t.Run("create", func(t *testing.T) {
		g := NewWithT(t)
		// The webhook: the version and the VIPs.
		bad := newControlPlane(ns.Name, "bad")
		bad.Spec.DistributionVersion = "4.12.0"
		bad.Spec.Config.APIVIPs = []string{"not-an-ip"}
		err := c.Create(ctx, bad)
		g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
		g.Expect(causes(err)).To(ConsistOf("spec.distributionVersion", "spec.config.apiVIPs[0]", "spec.config.ingressVIPs"))

		// The schema's CEL rule: two control-plane nodes is no OpenShift
		// topology.
		two := newControlPlane(ns.Name, "two")
		two.Spec.Replicas = ptr.To[int32](2)
		err = c.Create(ctx, two)
		g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
		g.Expect(causes(err)).To(ConsistOf("spec.replicas"))

		// The schema: infrastructureRef needs a kind.
		noKind := newControlPlane(ns.Name, "nokind")
		noKind.Spec.MachineTemplate.InfrastructureRef.Kind = ""
		err = c.Create(ctx, noKind)
		g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
		g.Expect(err.Error()).To(ContainSubstring("spec.machineTemplate.infrastructureRef.kind"))

		// The schema's CEL rule: a control plane names its infrastructure
		// machine template (a template need not, below).
		noRef := newControlPlane(ns.Name, "noref")
		noRef.Spec.MachineTemplate.InfrastructureRef = clusterv1.ContractVersionedObjectReference{}
		err = c.Create(ctx, noRef)
		g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
		g.Expect(causes(err)).To(ConsistOf("spec.machineTemplate.infrastructureRef"))
		g.Expect(err.Error()).To(ContainSubstring("name the infrastructure machine template"))

		// Valid; replicas defaults to 3.
		good := newControlPlane(ns.Name, "defaults")
		g.Expect(c.Create(ctx, good)).To(Succeed())
		g.Expect(good.Spec.Replicas).To(HaveValue(BeEquivalentTo(3)))
	})

	t.Run("update", func(t *testing.T) {
		g := NewWithT(t)
		cp := newControlPlane(ns.Name, "demo")
		cp.Spec.Config.ClusterName = "demo"
		g.Expect(c.Create(ctx, cp)).To(Succeed())

		// CEL transition rules: the DNS names and the topology are fixed.
		base := cp.DeepCopy()
		cp.Spec.Config.BaseDomain = "example.org"
		cp.Spec.Config.ClusterName = ""
		cp.Spec.Replicas = ptr.To[int32](1)
		err := c.Patch(ctx, cp, client.MergeFrom(base))
		g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
		g.Expect(causes(err)).To(ConsistOf("spec.config.baseDomain", "spec.config.clusterName", "spec.replicas"))
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(base), cp)).To(Succeed())

		// Before the installation, the install-time configuration may
		// change (the installation takes it when it starts).
		base = cp.DeepCopy()
		cp.Spec.Config.SSHAuthorizedKey = "ssh-ed25519 A"
		g.Expect(c.Patch(ctx, cp, client.MergeFrom(base))).To(Succeed())

		// Installed (as the controller reports it).
		base = cp.DeepCopy()
		cp.Status.Initialization.ControlPlaneInitialized = ptr.To(true)
		cp.Status.DistributionVersion = "4.19.0"
		g.Expect(c.Status().Patch(ctx, cp, client.MergeFrom(base))).To(Succeed())

		base = cp.DeepCopy()
		cp.Spec.Config.SSHAuthorizedKey = "ssh-ed25519 B"
		cp.Spec.DistributionVersion = "4.18.3"
		err = c.Patch(ctx, cp, client.MergeFrom(base))
		g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
		g.Expect(causes(err)).To(ConsistOf("spec.config.sshAuthorizedKey", "spec.distributionVersion"))

		// An upgrade is a change of distributionVersion.
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(base), cp)).To(Succeed())
		base = cp.DeepCopy()
		cp.Spec.DistributionVersion = "4.20.0"
		g.Expect(c.Patch(ctx, cp, client.MergeFrom(base))).To(Succeed())
	})

	t.Run("scale subresource", func(t *testing.T) {
		g := NewWithT(t)
		cp := newControlPlane(ns.Name, "scaled")
		g.Expect(c.Create(ctx, cp)).To(Succeed())
		scale := func(n int32) error {
			return c.SubResource("scale").Update(ctx, cp, client.WithSubResourceBody(&autoscalingv1.Scale{
				ObjectMeta: metav1.ObjectMeta{Name: cp.Name, Namespace: cp.Namespace},
				Spec:       autoscalingv1.ScaleSpec{Replicas: n},
			}))
		}
		// kubectl scale goes through the scale subresource, which no
		// webhook sees: the schema's rules still hold.
		for _, n := range []int32{2, 1, 6} {
			err := scale(n)
			g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "replicas %d: %v", n, err)
			g.Expect(err.Error()).To(ContainSubstring("spec.replicas"), "replicas %d", n)
		}
		g.Expect(scale(5)).To(Succeed())
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(cp), cp)).To(Succeed())
		g.Expect(cp.Spec.Replicas).To(HaveValue(BeEquivalentTo(5)))
	})

	t.Run("ClusterClass topology fields", func(t *testing.T) {
		// The topology controller server-side applies the control plane
		// with CAPI's contract fields (spec.version, spec.replicas,
		// spec.machineTemplate.metadata); a field the schema lacks fails the
		// whole apply ("field not declared in schema").
		g := NewWithT(t)
		apply := func(version string) error {
			u := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": controlplanev1.GroupVersion.String(), "kind": "OpenshiftAssistedControlPlane",
				"metadata": map[string]any{"name": "topology", "namespace": ns.Name},
				"spec": map[string]any{
					"version": version, "replicas": int64(3), "distributionVersion": "4.19.0",
					"machineTemplate": map[string]any{
						"metadata":          map[string]any{"labels": map[string]any{"topology.cluster.x-k8s.io/owned": ""}},
						"infrastructureRef": map[string]any{"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "Metal3MachineTemplate", "name": "cp"},
					},
					"config": map[string]any{"baseDomain": "example.com"},
				},
			}}
			return c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("capi-topology"), client.ForceOwnership)
		}
		g.Expect(apply("v1.32.0")).To(Succeed())
		got := &controlplanev1.OpenshiftAssistedControlPlane{}
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: "topology"}, got)).To(Succeed())
		g.Expect(got.Spec.KubernetesVersion).To(Equal("v1.32.0"))

		// A topology version of another Kubernetes minor than the OpenShift
		// version's is refused, naming the field.
		err := apply("v1.33.0")
		g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
		g.Expect(causes(err)).To(ConsistOf("spec.version"))
	})

	t.Run("template", func(t *testing.T) {
		g := NewWithT(t)
		tmpl := &controlplanev1.OpenshiftAssistedControlPlaneTemplate{ObjectMeta: metav1.ObjectMeta{Name: "class", Namespace: ns.Name}}
		tmpl.Spec.Template.Spec = newControlPlane(ns.Name, "class").Spec
		tmpl.Spec.Template.Spec.DistributionVersion = "latest"
		err := c.Create(ctx, tmpl)
		g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
		g.Expect(causes(err)).To(ConsistOf("spec.template.spec.distributionVersion"))

		tmpl.Spec.Template.Spec.DistributionVersion = "4.19.0"
		tmpl.Spec.Template.Spec.Replicas = ptr.To[int32](2)
		err = c.Create(ctx, tmpl)
		g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
		g.Expect(causes(err)).To(ConsistOf("spec.template.spec.replicas"))

		tmpl.Spec.Template.Spec.Replicas = ptr.To[int32](3)
		g.Expect(c.Create(ctx, tmpl)).To(Succeed())

		// A template may leave the machine template to its ClusterClass.
		noRef := &controlplanev1.OpenshiftAssistedControlPlaneTemplate{ObjectMeta: metav1.ObjectMeta{Name: "class-noref", Namespace: ns.Name}}
		noRef.Spec.Template.Spec = newControlPlane(ns.Name, "class").Spec
		noRef.Spec.Template.Spec.MachineTemplate = controlplanev1.OpenshiftAssistedControlPlaneMachineTemplate{}
		g.Expect(c.Create(ctx, noRef)).To(Succeed())

		// A template stays mutable: no transition rules.
		base := tmpl.DeepCopy()
		tmpl.Spec.Template.Spec.Config.BaseDomain = "example.org"
		tmpl.Spec.Template.Spec.Replicas = ptr.To[int32](1)
		g.Expect(c.Patch(ctx, tmpl, client.MergeFrom(base))).To(Succeed())
	})

	t.Run("v1beta1", func(t *testing.T) { testV1beta1(t, c, ns.Name) })
}
