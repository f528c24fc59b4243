package webhooks

import (
	"context"
	"errors"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	controlplanev1 "github.com/ocp-capi/ocp-capi/api/controlplane/v1alpha3"
)

// validSpec is the smallest spec the webhooks accept.
func validSpec() controlplanev1.OpenshiftAssistedControlPlaneSpec {
	return controlplanev1.OpenshiftAssistedControlPlaneSpec{
		DistributionVersion: "4.19.0",
		Replicas:            ptr.To[int32](3),
		MachineTemplate: controlplanev1.OpenshiftAssistedControlPlaneMachineTemplate{
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "Metal3MachineTemplate", Name: "cp"},
		},
		Config: controlplanev1.OpenshiftAssistedControlPlaneConfigSpec{BaseDomain: "example.com", ClusterName: "demo"},
	}
}

// fieldsOf returns the field paths of an error: a field.ErrorList or the
// causes of an Invalid StatusError.
func fieldsOf(t *testing.T, err error) []string {
	t.Helper()
	if err == nil {
		return nil
	}
	var status *apierrors.StatusError
	if !errors.As(err, &status) || !apierrors.IsInvalid(err) {
		t.Fatalf("want an Invalid status error, got %v", err)
	}
	var out []string
	for _, c := range status.ErrStatus.Details.Causes {
		out = append(out, c.Field)
	}
	return out
}

func TestValidateSpec(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*controlplanev1.OpenshiftAssistedControlPlaneSpec)
		fields []string
	}{
		{name: "valid", mutate: func(*controlplanev1.OpenshiftAssistedControlPlaneSpec) {}},
		{name: "OKD version, single node, OKD without pull secret", mutate: func(s *controlplanev1.OpenshiftAssistedControlPlaneSpec) {
			s.DistributionVersion = "4.19.0-okd-scos.ec.6"
			s.Replicas = ptr.To[int32](1)
		}},
		{name: "replicas unset", mutate: func(s *controlplanev1.OpenshiftAssistedControlPlaneSpec) { s.Replicas = nil }},
		{name: "no version", mutate: func(s *controlplanev1.OpenshiftAssistedControlPlaneSpec) { s.DistributionVersion = "" },
			fields: []string{"spec.distributionVersion"}},
		{name: "not a version", mutate: func(s *controlplanev1.OpenshiftAssistedControlPlaneSpec) { s.DistributionVersion = "latest" },
			fields: []string{"spec.distributionVersion"}},
		{name: "not major.minor.patch", mutate: func(s *controlplanev1.OpenshiftAssistedControlPlaneSpec) { s.DistributionVersion = "4.19" },
			fields: []string{"spec.distributionVersion"}},
		{name: "v prefix", mutate: func(s *controlplanev1.OpenshiftAssistedControlPlaneSpec) { s.DistributionVersion = "v4.19.2" }},
		{name: "too old", mutate: func(s *controlplanev1.OpenshiftAssistedControlPlaneSpec) { s.DistributionVersion = "4.13.9" },
			fields: []string{"spec.distributionVersion"}},
		{name: "five nodes on 4.18", mutate: func(s *controlplanev1.OpenshiftAssistedControlPlaneSpec) {
			s.DistributionVersion, s.Replicas = "4.18.0-rc.1", ptr.To[int32](5)
		}},
		{name: "four nodes before 4.18", mutate: func(s *controlplanev1.OpenshiftAssistedControlPlaneSpec) {
			s.DistributionVersion, s.Replicas = "4.17.3", ptr.To[int32](4)
		}, fields: []string{"spec.replicas"}},
		{name: "Kubernetes version of the OpenShift minor", mutate: func(s *controlplanev1.OpenshiftAssistedControlPlaneSpec) {
			s.KubernetesVersion = "v1.32.7"
		}},
		{name: "Kubernetes version for a minor the table does not know", mutate: func(s *controlplanev1.OpenshiftAssistedControlPlaneSpec) {
			s.DistributionVersion, s.KubernetesVersion = "4.40.0", "1.53.1"
		}},
		{name: "Kubernetes version of another minor", mutate: func(s *controlplanev1.OpenshiftAssistedControlPlaneSpec) {
			s.KubernetesVersion = "v1.33.0"
		}, fields: []string{"spec.version"}},
		{name: "machine kind, not a template", mutate: func(s *controlplanev1.OpenshiftAssistedControlPlaneSpec) {
			s.MachineTemplate.InfrastructureRef.Kind = "Metal3Machine"
		}, fields: []string{"spec.machineTemplate.infrastructureRef.kind"}},
		{name: "no base domain", mutate: func(s *controlplanev1.OpenshiftAssistedControlPlaneSpec) { s.Config.BaseDomain = "" },
			fields: []string{"spec.config.baseDomain"}},
		{name: "bad DNS names", mutate: func(s *controlplanev1.OpenshiftAssistedControlPlaneSpec) {
			s.Config.BaseDomain, s.Config.ClusterName = "Example_.com", "demo.one"
		}, fields: []string{"spec.config.baseDomain", "spec.config.clusterName"}},
		{name: "VIP pairs", mutate: func(s *controlplanev1.OpenshiftAssistedControlPlaneSpec) {
			s.Config.APIVIPs, s.Config.IngressVIPs = []string{"192.168.111.5", "fd00::5"}, []string{"192.168.111.4", "fd00::4"}
		}},
		{name: "API VIP alone, not an IP", mutate: func(s *controlplanev1.OpenshiftAssistedControlPlaneSpec) {
			s.Config.APIVIPs = []string{"api.example.com"}
		}, fields: []string{"spec.config.apiVIPs[0]", "spec.config.ingressVIPs"}},
		{name: "duplicate VIP, unequal counts", mutate: func(s *controlplanev1.OpenshiftAssistedControlPlaneSpec) {
			s.Config.APIVIPs, s.Config.IngressVIPs = []string{"192.168.111.5", "fd00::5"}, []string{"192.168.111.5"}
		}, fields: []string{"spec.config.ingressVIPs[0]", "spec.config.ingressVIPs"}},
		{name: "empty reference names", mutate: func(s *controlplanev1.OpenshiftAssistedControlPlaneSpec) {
			s.Config.PullSecretRef = &corev1.LocalObjectReference{}
			s.Config.ImageRegistryRef = &corev1.LocalObjectReference{}
			s.Config.ManifestsConfigMapRefs = []controlplanev1.ManifestsConfigMapReference{{Name: "m"}, {}}
		}, fields: []string{"spec.config.pullSecretRef.name", "spec.config.imageRegistryRef.name", "spec.config.manifestsConfigMapRefs[1].name"}},
		{name: "capabilities", mutate: func(s *controlplanev1.OpenshiftAssistedControlPlaneSpec) {
			s.Config.Capabilities.BaselineCapability = "v4.19"
		}},
		{name: "bad baseline", mutate: func(s *controlplanev1.OpenshiftAssistedControlPlaneSpec) {
			s.Config.Capabilities.BaselineCapability = "everything"
		}, fields: []string{"spec.config.capabilities.baselineCapability"}},
		{name: "release image by digest", mutate: func(s *controlplanev1.OpenshiftAssistedControlPlaneSpec) {
			s.Config.ReleaseImage = "mirror.example.com/ocp/release@sha256:0123"
		}},
		{name: "release image without tag", mutate: func(s *controlplanev1.OpenshiftAssistedControlPlaneSpec) {
			s.Config.ReleaseImage = "release"
		}, fields: []string{"spec.config.releaseImage"}},
		{name: "release image with a registry port and no tag", mutate: func(s *controlplanev1.OpenshiftAssistedControlPlaneSpec) {
			s.Config.ReleaseImage = "registry.example.com:5000/ocp/release"
		}, fields: []string{"spec.config.releaseImage"}},
		{name: "release image with a registry port and a tag", mutate: func(s *controlplanev1.OpenshiftAssistedControlPlaneSpec) {
			s.Config.ReleaseImage = "registry.example.com:5000/ocp/release:4.19.0-x86_64"
		}},
		{name: "bootstrap spec", mutate: func(s *controlplanev1.OpenshiftAssistedControlPlaneSpec) {
			s.OpenshiftAssistedConfigSpec.NodeRegistration.Name = "$NOPE"
		}, fields: []string{"spec.openshiftAssistedConfigSpec.nodeRegistration.name"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := validSpec()
			tc.mutate(&s)
			var got []string
			errs := ValidateSpec(field.NewPath("spec"), &s)
			for _, e := range errs {
				got = append(got, e.Field)
			}
			NewWithT(t).Expect(got).To(ConsistOf(tc.fields), "%v", errs)
		})
	}
}

func TestValidateUpdate(t *testing.T) {
	installed := func() *controlplanev1.OpenshiftAssistedControlPlane {
		c := &controlplanev1.OpenshiftAssistedControlPlane{ObjectMeta: metav1.ObjectMeta{Name: "demo"}, Spec: validSpec()}
		c.Status.Initialization.ControlPlaneInitialized = ptr.To(true)
		c.Status.DistributionVersion = "4.19.0"
		return c
	}
	installing := func() *controlplanev1.OpenshiftAssistedControlPlane {
		c := &controlplanev1.OpenshiftAssistedControlPlane{ObjectMeta: metav1.ObjectMeta{Name: "demo"}, Spec: validSpec()}
		c.Status.Conditions = []metav1.Condition{{Type: controlplanev1.AvailableCondition, Status: metav1.ConditionFalse,
			Reason: controlplanev1.ControlPlaneInstallingReason}}
		return c
	}
	t.Run("installing: the configuration is the installer's", func(t *testing.T) {
		old := installing()
		upd := old.DeepCopy()
		upd.Spec.Config.Proxy = &controlplanev1.Proxy{HTTPProxy: "http://proxy:3128"}
		upd.Spec.Replicas = ptr.To[int32](5) // waits for the installation; allowed
		_, err := (&controlPlaneWebhook{}).ValidateUpdate(context.Background(), old, upd)
		NewWithT(t).Expect(fieldsOf(t, err)).To(ConsistOf("spec.config.proxy"))
	})
	t.Run("not started: the configuration follows", func(t *testing.T) {
		old := installing()
		old.Status.Conditions[0].Reason = controlplanev1.InstallationNotStartedReason
		upd := old.DeepCopy()
		upd.Spec.Config.Proxy = &controlplanev1.Proxy{HTTPProxy: "http://proxy:3128"}
		_, err := (&controlPlaneWebhook{}).ValidateUpdate(context.Background(), old, upd)
		NewWithT(t).Expect(err).NotTo(HaveOccurred())
	})
	for _, tc := range []struct {
		name        string
		initialized bool
		mutate      func(*controlplanev1.OpenshiftAssistedControlPlane)
		fields      []string
	}{
		{name: "before install, the configuration may change", mutate: func(c *controlplanev1.OpenshiftAssistedControlPlane) {
			c.Spec.Config.SSHAuthorizedKey = "ssh-ed25519 B"
			c.Spec.Config.Proxy = &controlplanev1.Proxy{HTTPProxy: "http://proxy:3128"}
			c.Spec.DistributionVersion = "4.18.0"
		}},
		{name: "installed: upgrade and scale", initialized: true, mutate: func(c *controlplanev1.OpenshiftAssistedControlPlane) {
			c.Spec.DistributionVersion = "4.20.1"
			c.Spec.Replicas = ptr.To[int32](5)
			c.Spec.OpenshiftAssistedConfigSpec.SSHAuthorizedKey = "ssh-ed25519 new machines"
		}},
		{name: "installed: downgrade", initialized: true, mutate: func(c *controlplanev1.OpenshiftAssistedControlPlane) {
			c.Spec.DistributionVersion = "4.18.9"
		}, fields: []string{"spec.distributionVersion"}},
		{name: "installed: install-time configuration", initialized: true, mutate: func(c *controlplanev1.OpenshiftAssistedControlPlane) {
			c.Spec.Config.SSHAuthorizedKey = "ssh-ed25519 B"
			c.Spec.Config.MastersSchedulable = true
			c.Spec.Config.APIVIPs, c.Spec.Config.IngressVIPs = []string{"10.0.0.5"}, []string{"10.0.0.4"}
		}, fields: []string{"spec.config.sshAuthorizedKey", "spec.config.mastersSchedulable", "spec.config.apiVIPs", "spec.config.ingressVIPs"}},
		{name: "installed: absent and empty are equal", initialized: true, mutate: func(c *controlplanev1.OpenshiftAssistedControlPlane) {
			c.Spec.Config.ManifestsConfigMapRefs = []controlplanev1.ManifestsConfigMapReference{}
			c.Spec.Config.Capabilities.AdditionalEnabledCapabilities = []string{}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := installed()
			if !tc.initialized {
				old.Status = controlplanev1.OpenshiftAssistedControlPlaneStatus{}
			}
			upd := old.DeepCopy()
			tc.mutate(upd)
			_, err := (&controlPlaneWebhook{}).ValidateUpdate(context.Background(), old, upd)
			NewWithT(t).Expect(fieldsOf(t, err)).To(ConsistOf(tc.fields), "%v", err)
		})
	}
}

func TestMetadataWritesPassOnInvalidObjects(t *testing.T) {
	// An object admitted before a rule existed must not block CAPI core's
	// and the controller's metadata writes (finalizers, owner references).
	g := NewWithT(t)
	old := &controlplanev1.OpenshiftAssistedControlPlane{ObjectMeta: metav1.ObjectMeta{Name: "demo"}, Spec: validSpec()}
	old.Spec.DistributionVersion = "4.12.0"
	upd := old.DeepCopy()
	upd.Finalizers = []string{controlplanev1.ControlPlaneFinalizer}
	_, err := (&controlPlaneWebhook{}).ValidateUpdate(context.Background(), old, upd)
	g.Expect(err).NotTo(HaveOccurred())

	upd.Spec.Config.SSHAuthorizedKey = "ssh-ed25519 B"
	_, err = (&controlPlaneWebhook{}).ValidateUpdate(context.Background(), old, upd)
	g.Expect(fieldsOf(t, err)).To(ConsistOf("spec.distributionVersion"), "a spec change is checked whole")
}

func TestInstallConfigOverrideAnnotation(t *testing.T) {
	g := NewWithT(t)
	w := &controlPlaneWebhook{}
	c := &controlplanev1.OpenshiftAssistedControlPlane{ObjectMeta: metav1.ObjectMeta{Name: "demo",
		Annotations: map[string]string{controlplanev1.InstallConfigOverrideAnnotation: `{"networking":`}}, Spec: validSpec()}
	_, err := w.ValidateCreate(context.Background(), c)
	g.Expect(fieldsOf(t, err)).To(ConsistOf("metadata.annotations[controlplane.cluster.x-k8s.io/install-config-override]"))

	// null decodes into a map without error, but is no object.
	c.Annotations[controlplanev1.InstallConfigOverrideAnnotation] = ` null `
	_, err = w.ValidateCreate(context.Background(), c)
	g.Expect(fieldsOf(t, err)).To(ConsistOf("metadata.annotations[controlplane.cluster.x-k8s.io/install-config-override]"))

	c.Annotations[controlplanev1.InstallConfigOverrideAnnotation] = `{"fips":true}`
	_, err = w.ValidateCreate(context.Background(), c)
	g.Expect(err).NotTo(HaveOccurred())
}

func TestTemplateWebhook(t *testing.T) {
	g := NewWithT(t)
	w := &templateWebhook{}
	tmpl := &controlplanev1.OpenshiftAssistedControlPlaneTemplate{ObjectMeta: metav1.ObjectMeta{Name: "t"}}
	tmpl.Spec.Template.Spec = validSpec()
	tmpl.Spec.Template.Spec.DistributionVersion = "4.19"
	tmpl.Spec.Template.ObjectMeta.Annotations = map[string]string{controlplanev1.InstallConfigOverrideAnnotation: "[]"}
	_, err := w.ValidateCreate(context.Background(), tmpl)
	g.Expect(fieldsOf(t, err)).To(ConsistOf("spec.template.spec.distributionVersion",
		"spec.template.metadata.annotations[controlplane.cluster.x-k8s.io/install-config-override]"))

	// Templates stay mutable: a ClusterClass may move to a new base domain,
	// which applies to the clusters made from then on.
	ok := &controlplanev1.OpenshiftAssistedControlPlaneTemplate{ObjectMeta: metav1.ObjectMeta{Name: "t"}}
	ok.Spec.Template.Spec = validSpec()
	changed := ok.DeepCopy()
	changed.Spec.Template.Spec.Config.BaseDomain = "example.org"
	changed.Spec.Template.Spec.Replicas = ptr.To[int32](1)
	_, err = w.ValidateUpdate(context.Background(), ok, changed)
	g.Expect(err).NotTo(HaveOccurred())
}
