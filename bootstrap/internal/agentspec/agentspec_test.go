package agentspec

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	bootstrapv1 "github.com/ocp-capi/ocp-capi/api/bootstrap/v1alpha2"
	aiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/agentinstall/v1beta1"
	"github.com/ocp-capi/ocp-capi/internal/validation/assisted"
)

func TestBuild(t *testing.T) {
	g := NewWithT(t)
	spec := bootstrapv1.OpenshiftAssistedConfigSpec{NodeRegistration: bootstrapv1.NodeRegistrationOptions{
		Name:               "$METADATA_NAME",
		KubeletExtraLabels: []string{"metal3.io/uuid=$METADATA_UUID", "tier=gold"},
	}}
	d, err := Build(Input{Spec: spec, ControlPlane: true, Vars: assisted.Vars{assisted.VarUUID: "u-1", assisted.VarName: "bmh-0"}, Approve: true,
		HostLabels: map[string]string{Metal3UUIDLabel: "u-1"}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(d.Role).To(Equal(aiv1beta1.HostRoleMaster))
	g.Expect(d.Hostname).To(Equal("bmh-0"))
	g.Expect(d.NodeLabels).To(Equal(map[string]string{Metal3UUIDLabel: "u-1", "tier": "gold"}))
	g.Expect(d.IgnitionConfigOverrides).To(BeEmpty(), "nothing to override")
	g.Expect(d.Approve).To(BeTrue())

	d, err = Build(Input{DefaultProviderID: "openstack:///srv-1"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(d.Role).To(Equal(aiv1beta1.HostRoleWorker))
	g.Expect(kubeletEnv(t, d.IgnitionConfigOverrides)).To(Equal("KUBELET_PROVIDERID=openstack:///srv-1\n"))

	spec = bootstrapv1.OpenshiftAssistedConfigSpec{NodeRegistration: bootstrapv1.NodeRegistrationOptions{ProviderID: `openstack://"$METADATA_UUID"`}}
	d, err = Build(Input{Spec: spec, Vars: assisted.Vars{assisted.VarUUID: "x"}, DefaultProviderID: "ignored"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(kubeletEnv(t, d.IgnitionConfigOverrides)).To(Equal("KUBELET_PROVIDERID=openstack://x\n"))

	for _, bad := range []bootstrapv1.NodeRegistrationOptions{
		{Name: "$METADATA_METAL3_NAME"},
		{Name: "Not A Hostname"},
		{KubeletExtraLabels: []string{"novalue"}},
		{KubeletExtraLabels: []string{"bad key=x"}},
		{KubeletExtraLabels: []string{"k=bad value"}},
		{ProviderID: "$METADATA_METAL3_NAME"},
	} {
		_, err := Build(Input{Spec: bootstrapv1.OpenshiftAssistedConfigSpec{NodeRegistration: bad}, Vars: assisted.Vars{assisted.VarUUID: "u"}})
		g.Expect(err).To(MatchError(ContainSubstring("spec.nodeRegistration")), "%+v", bad)
	}
}

func kubeletEnv(t *testing.T, override string) string {
	t.Helper()
	var cfg ignConfig
	if err := json.Unmarshal([]byte(override), &cfg); err != nil {
		t.Fatalf("override %q: %v", override, err)
	}
	for _, f := range cfg.Storage.Files {
		if f.Path == KubeletEnvPath {
			data, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(f.Contents.Source, "data:text/plain;charset=utf-8;base64,"))
			if err != nil {
				t.Fatal(err)
			}
			return string(data)
		}
	}
	return ""
}

func TestIgnitionOverride(t *testing.T) {
	g := NewWithT(t)
	out, err := IgnitionOverride(IgnitionInput{PreCommands: []string{"echo pre"}, PostCommands: []string{"echo post"}, SentinelDir: "/var/lib/x"})
	g.Expect(err).NotTo(HaveOccurred())
	var cfg ignConfig
	g.Expect(json.Unmarshal([]byte(out), &cfg)).To(Succeed())
	g.Expect(cfg.Ignition.Version).To(Equal("3.1.0"))
	g.Expect(cfg.Systemd.Units).To(HaveLen(2))
	g.Expect(cfg.Systemd.Units[0].Contents).To(ContainSubstring("Before=kubelet.service"))
	g.Expect(cfg.Systemd.Units[0].Contents).To(ContainSubstring("ConditionPathExists=!/var/lib/x/pre-bootstrap.done"))
	g.Expect(cfg.Systemd.Units[1].Contents).To(ContainSubstring("KUBECONFIG=" + DefaultKubeconfig))
	g.Expect(cfg.Storage.Files).To(HaveLen(2))
	script, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(cfg.Storage.Files[0].Contents.Source, "data:text/plain;charset=utf-8;base64,"))
	g.Expect(string(script)).To(ContainSubstring("echo pre\nmkdir -p /var/lib/x\ntouch /var/lib/x/pre-bootstrap.done"))
	again, _ := IgnitionOverride(IgnitionInput{PreCommands: []string{"echo pre"}, PostCommands: []string{"echo post"}, SentinelDir: "/var/lib/x"})
	g.Expect(again).To(Equal(out), "deterministic")
}

func TestApplyAndUnbind(t *testing.T) {
	g := NewWithT(t)
	a := &aiv1beta1.Agent{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{aiv1beta1.InfraEnvNameLabel: "ie"}},
		Spec: aiv1beta1.AgentSpec{NodeLabels: map[string]string{"user": "x"}, Hostname: "dhcp"}}
	d := Desired{Role: aiv1beta1.HostRoleWorker, NodeLabels: map[string]string{"tier": "gold"}, Approve: true}
	g.Expect(Apply(a, "cfg", d)).To(BeTrue())
	g.Expect(a.Labels).To(HaveKeyWithValue(bootstrapv1.ConfigLabel, "cfg"))
	g.Expect(a.Spec.NodeLabels).To(Equal(map[string]string{"user": "x", "tier": "gold"}))
	g.Expect(a.Spec.Hostname).To(Equal("dhcp"), "kept when the config sets none")
	g.Expect(a.Spec.Approved).To(BeTrue())
	g.Expect(Apply(a, "cfg", d)).To(BeFalse(), "nothing changes the second time")

	d.Approve = false
	g.Expect(Apply(a, "cfg", d)).To(BeFalse(), "never unapproved by Apply")

	g.Expect(Unbind(a)).To(BeTrue())
	g.Expect(a.Labels).NotTo(HaveKey(bootstrapv1.ConfigLabel))
	g.Expect(a.Spec.Approved).To(BeFalse())
	g.Expect(Unbind(a)).To(BeFalse())
}
