package infraenv

import (
	"net/url"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	bootstrapv1 "github.com/ocp-capi/ocp-capi/api/bootstrap/v1alpha2"
	aiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/agentinstall/v1beta1"
	hivev1 "github.com/ocp-capi/ocp-capi/internal/consumed/hive/v1"
)

func TestSharedName(t *testing.T) {
	g := NewWithT(t)
	g.Expect(SharedName("workers")).To(Equal("workers-liveiso"))
	long := strings.Repeat("a", 250)
	n := SharedName(long)
	g.Expect(len(n)).To(BeNumerically("<=", 253))
	g.Expect(validation.IsDNS1123Subdomain(n)).To(BeEmpty())
	g.Expect(SharedName(long + "b")).NotTo(Equal(SharedName(long + "c")))
}

func cd() *hivev1.ClusterDeployment {
	return &hivev1.ClusterDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: "cd", Namespace: "ns"},
		Spec:       hivev1.ClusterDeploymentSpec{PullSecretRef: &corev1.LocalObjectReference{Name: "cd-pull"}},
	}
}

func TestSpec(t *testing.T) {
	g := NewWithT(t)
	c := &bootstrapv1.OpenshiftAssistedConfig{
		ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{bootstrapv1.DiscoveryIgnitionOverrideAnnotation: `{"ignition":{"version":"3.1.0"}}`}},
		Spec: bootstrapv1.OpenshiftAssistedConfigSpec{
			Proxy:                &bootstrapv1.Proxy{HTTPProxy: "http://p"},
			AdditionalNTPSources: []string{"ntp"},
			SSHAuthorizedKey:     "ssh-ed25519 AAA",
			KernelArguments:      []bootstrapv1.KernelArgument{{Operation: "append", Value: "quiet"}},
			OSImageVersion:       "4.19",
		},
	}
	s := Spec(c, cd(), map[string]string{"a": "b"})
	g.Expect(s.ClusterRef).To(Equal(&aiv1beta1.ClusterReference{Name: "cd", Namespace: "ns"}))
	g.Expect(s.PullSecretRef.Name).To(Equal("cd-pull"), "the ClusterDeployment's pull secret when the config has none")
	g.Expect(s.CPUArchitecture).To(Equal("x86_64"))
	g.Expect(s.ImageType).To(Equal(aiv1beta1.ImageTypeFullISO))
	g.Expect(s.Proxy.HTTPProxy).To(Equal("http://p"))
	g.Expect(s.KernelArguments).To(Equal([]aiv1beta1.KernelArgument{{Operation: "append", Value: "quiet"}}))
	g.Expect(s.IgnitionConfigOverride).To(ContainSubstring("3.1.0"))
	g.Expect(s.AgentLabels).To(HaveKeyWithValue("a", "b"))

	c.Spec.PullSecretRef = &corev1.LocalObjectReference{Name: "mine"}
	g.Expect(Spec(c, cd(), nil).PullSecretRef.Name).To(Equal("mine"))

	// The config is not aliased.
	s.AdditionalNTPSources[0] = "changed"
	g.Expect(c.Spec.AdditionalNTPSources[0]).To(Equal("ntp"))
}

func TestDiff(t *testing.T) {
	g := NewWithT(t)
	desired := Spec(&bootstrapv1.OpenshiftAssistedConfig{}, cd(), nil)
	existing := *desired.DeepCopy()
	existing.IPXEScriptType = aiv1beta1.DiscoveryImageAlways // server default
	existing.CPUArchitecture = ""                            // equal to the default
	existing.Proxy = &aiv1beta1.Proxy{}                      // empty is unset
	g.Expect(Diff(existing, desired)).To(BeEmpty())

	existing.SSHAuthorizedKey = "other"
	existing.ClusterRef = &aiv1beta1.ClusterReference{Name: "x"}
	g.Expect(Diff(existing, desired)).To(ConsistOf("sshAuthorizedKey", "clusterRef"))

	Apply(&existing, desired)
	g.Expect(Diff(existing, desired)).To(BeEmpty())
	g.Expect(existing.IPXEScriptType).To(Equal(aiv1beta1.DiscoveryImageAlways), "fields not ours are kept")
}

func TestImage(t *testing.T) {
	g := NewWithT(t)
	st := func(conds ...aiv1beta1.Condition) aiv1beta1.InfraEnvStatus {
		return aiv1beta1.InfraEnvStatus{Conditions: conds}
	}
	s, _ := Image(st())
	g.Expect(s).To(Equal(ImagePending))
	s, _ = Image(st(aiv1beta1.Condition{Type: aiv1beta1.ImageCreatedCondition, Status: corev1.ConditionTrue}))
	g.Expect(s).To(Equal(ImageReady))
	s, msg := Image(st(aiv1beta1.Condition{Type: aiv1beta1.ImageCreatedCondition, Status: corev1.ConditionFalse,
		Reason: "ImageCreationError", Message: "Failed to create image: boom"}))
	g.Expect(s).To(Equal(ImageFailed))
	g.Expect(msg).To(ContainSubstring("boom"))
	s, _ = Image(st(aiv1beta1.Condition{Type: aiv1beta1.ImageCreatedCondition, Status: corev1.ConditionUnknown}))
	g.Expect(s).To(Equal(ImagePending))
}

func TestIgnitionURL(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status aiv1beta1.InfraEnvStatus
		base   string
		want   string
		err    string
	}{
		{
			name: "from the events URL, as CAPOA builds it",
			status: aiv1beta1.InfraEnvStatus{InfraEnvDebugInfo: aiv1beta1.InfraEnvDebugInfo{
				EventsURL: "https://assisted.example.com:8443/api/assisted-install/v2/events?api_key=tok&infra_env_id=abc"}},
			want: "https://assisted.example.com:8443/api/assisted-install/v2/infra-envs/abc/downloads/files?api_key=tok&file_name=discovery.ign",
		},
		{
			name: "the published discovery ignition URL wins",
			status: aiv1beta1.InfraEnvStatus{
				InfraEnvDebugInfo: aiv1beta1.InfraEnvDebugInfo{EventsURL: "https://a/api/assisted-install/v2/events?infra_env_id=x"},
				BootArtifacts:     aiv1beta1.BootArtifacts{DiscoveryIgnitionURL: "https://b/ign?api_key=k"},
			},
			want: "https://b/ign?api_key=k",
		},
		{
			name: "an in-cluster base replaces scheme and host",
			status: aiv1beta1.InfraEnvStatus{InfraEnvDebugInfo: aiv1beta1.InfraEnvDebugInfo{
				EventsURL: "https://route.example.com/api/assisted-install/v2/events?api_key=tok&infra_env_id=abc"}},
			base: "http://assisted-service.mce.svc:8090",
			want: "http://assisted-service.mce.svc:8090/api/assisted-install/v2/infra-envs/abc/downloads/files?api_key=tok&file_name=discovery.ign",
		},
		{name: "nothing yet", err: "neither"},
		{
			name: "no infra env id",
			status: aiv1beta1.InfraEnvStatus{InfraEnvDebugInfo: aiv1beta1.InfraEnvDebugInfo{
				EventsURL: "https://a/api/assisted-install/v2/events?api_key=tok"}},
			err: "infra_env_id",
		},
		{
			name:   "relative",
			status: aiv1beta1.InfraEnvStatus{BootArtifacts: aiv1beta1.BootArtifacts{DiscoveryIgnitionURL: "/x"}},
			err:    "no scheme",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			var base *url.URL
			if tc.base != "" {
				base, _ = url.Parse(tc.base)
			}
			u, err := IgnitionURL(tc.status, base)
			if tc.err != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tc.err)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(u.String()).To(Equal(tc.want))
		})
	}
}

func FuzzIgnitionURL(f *testing.F) {
	f.Add("https://a/api/assisted-install/v2/events?api_key=k&infra_env_id=i", "")
	f.Add("", "https://b/ign")
	f.Add("http://[::1", "%zz")
	f.Fuzz(func(t *testing.T, events, ign string) {
		u, err := IgnitionURL(aiv1beta1.InfraEnvStatus{
			InfraEnvDebugInfo: aiv1beta1.InfraEnvDebugInfo{EventsURL: events},
			BootArtifacts:     aiv1beta1.BootArtifacts{DiscoveryIgnitionURL: ign},
		}, nil)
		if err == nil && (u.Scheme == "" || u.Host == "") {
			t.Fatalf("URL without scheme or host: %q", u)
		}
	})
}

func TestLabelValue(t *testing.T) {
	g := NewWithT(t)
	g.Expect(LabelValue("cfg-0")).To(Equal("cfg-0"))
	long := strings.Repeat("x", 70)
	v := LabelValue(long)
	g.Expect(validation.IsValidLabelValue(v)).To(BeEmpty())
	g.Expect(LabelValue(long + "a")).NotTo(Equal(LabelValue(long + "b")))
}
