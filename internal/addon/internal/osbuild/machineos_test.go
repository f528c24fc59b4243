package osbuild

import (
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	mcfgv1 "github.com/ocp-capi/ocp-capi/internal/consumed/machineconfiguration/v1"
)

func mosc(name, pool string, created int64) mcfgv1.MachineOSConfig {
	return mcfgv1.MachineOSConfig{
		ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.Unix(created, 0)},
		Spec: mcfgv1.MachineOSConfigSpec{
			MachineConfigPool:       mcfgv1.MachineConfigPoolReference{Name: pool},
			ImageBuilder:            mcfgv1.MachineOSImageBuilder{ImageBuilderType: "Job"},
			RenderedImagePushSecret: mcfgv1.ImageSecretObjectReference{Name: "push"},
			RenderedImagePushSpec:   "registry.example.com:5000/mco/os:latest",
		},
	}
}

// TestMachineOSConfigFor: upstream's lookup by spec.machineConfigPool.name,
// the one named after the pool first, then the oldest; deleted ones do not
// count.
func TestMachineOSConfigFor(t *testing.T) {
	deleted := mosc("worker", "worker", 1)
	deleted.DeletionTimestamp = &metav1.Time{Time: time.Unix(5, 0)}
	for _, tc := range []struct {
		name string
		list []mcfgv1.MachineOSConfig
		want string
	}{
		{"none", []mcfgv1.MachineOSConfig{mosc("infra", "infra", 1)}, ""},
		{"named after the pool wins", []mcfgv1.MachineOSConfig{mosc("other", "worker", 1), mosc("worker", "worker", 2)}, "worker"},
		{"else the oldest", []mcfgv1.MachineOSConfig{mosc("b", "worker", 2), mosc("a", "worker", 1)}, "a"},
		{"deleted ones do not count", []mcfgv1.MachineOSConfig{deleted}, ""},
	} {
		name := ""
		if got := MachineOSConfigFor("worker", tc.list); got != nil {
			name = got.Name
		}
		if name != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, name, tc.want)
		}
	}
}

// TestBuilderConfigOf: the push repository without its tag, the push
// secret, the pull secret or upstream's global-pull-secret-copy; unusable
// values are InvalidMachineOSConfig.
func TestBuilderConfigOf(t *testing.T) {
	m := mosc("worker", "worker", 1)
	cfg, err := BuilderConfigOf(&m)
	if err != nil || cfg.FinalRepository != "registry.example.com:5000/mco/os" || cfg.FinalImagePushSecret != "push" ||
		cfg.BaseImagePullSecret != GlobalPullSecretCopy || cfg.MachineOSConfig != "worker" {
		t.Errorf("BuilderConfigOf = %+v, %v", cfg, err)
	}
	m.Spec.BaseImagePullSecret = &mcfgv1.ImageSecretObjectReference{Name: "pull"}
	if cfg, _ := BuilderConfigOf(&m); cfg.BaseImagePullSecret != "pull" {
		t.Errorf("pull secret %q", cfg.BaseImagePullSecret)
	}
	for _, mutate := range []func(*mcfgv1.MachineOSConfig){
		func(m *mcfgv1.MachineOSConfig) { m.Spec.RenderedImagePushSpec = "os:latest" },
		func(m *mcfgv1.MachineOSConfig) { m.Spec.RenderedImagePushSecret.Name = "" },
		func(m *mcfgv1.MachineOSConfig) { m.Spec.ImageBuilder.ImageBuilderType = "PodImageBuilder" },
	} {
		bad := mosc("worker", "worker", 1)
		mutate(&bad)
		var ie *InputError
		if _, err := BuilderConfigOf(&bad); !errors.As(err, &ie) || ie.Reason != ReasonInvalidMachineOSConfig {
			t.Errorf("%+v: %v", bad.Spec, err)
		}
	}
}

// TestContainerfileOf: NoArch (also the default, empty arch), then AMD64;
// other architectures do not apply to an amd64 build.
func TestContainerfileOf(t *testing.T) {
	m := mosc("worker", "worker", 1)
	m.Spec.ContainerFile = []mcfgv1.MachineOSContainerfile{
		{ContainerfileArch: "ARM64", Content: "RUN arm"},
		{ContainerfileArch: "AMD64", Content: "RUN amd"},
		{Content: "RUN all\n"},
	}
	if got := ContainerfileOf(&m); got != "RUN all\nRUN amd" {
		t.Errorf("got %q", got)
	}
	m.Spec.ContainerFile = m.Spec.ContainerFile[:1]
	if got := ContainerfileOf(&m); got != "" {
		t.Errorf("ARM64 only: got %q", got)
	}
}

// TestMachineOSBuildState: all five conditions with upstream's reasons,
// one True; lastTransitionTime kept while a status holds; the times of a
// finished build are ordered even within one second.
func TestMachineOSBuildState(t *testing.T) {
	var st mcfgv1.MachineOSBuildStatus
	t0 := metav1.Unix(100, 0)
	if !SetBuildState(&st, BuildStatePrepared, t0) || StateOf(&st) != BuildStatePrepared || len(st.Conditions) != 5 {
		t.Fatalf("prepared: %+v", st.Conditions)
	}
	if SetBuildState(&st, BuildStatePrepared, metav1.Unix(200, 0)) {
		t.Error("same state rewrote the conditions")
	}
	SetBuildState(&st, BuildStateSucceeded, metav1.Unix(300, 0))
	for _, c := range st.Conditions {
		switch c.Type {
		case "Succeeded":
			if c.Status != metav1.ConditionTrue || c.Reason != "Ready" || !c.LastTransitionTime.Equal(ptrTime(300)) {
				t.Errorf("succeeded: %+v", c)
			}
		case "Building", "Failed", "Interrupted":
			if c.Status != metav1.ConditionFalse || c.Reason != c.Type || !c.LastTransitionTime.Equal(&t0) {
				t.Errorf("%s: %+v", c.Type, c)
			}
		}
	}
	if !BuildStateSucceeded.Terminal() || BuildStateBuilding.Terminal() {
		t.Error("Terminal")
	}
	if StateFor(Observation{Phase: PhaseFailed, Reason: ReasonCancelled}) != BuildStateInterrupted ||
		StateFor(Observation{Phase: PhaseFailed, Reason: ReasonTimeout}) != BuildStateFailed ||
		StateFor(Observation{Phase: PhaseRunning}) != BuildStateBuilding {
		t.Error("StateFor")
	}
	start := time.Unix(1000, 400e6)
	b, e := BuildTimes(start, BuildStateSucceeded, start.Add(100*time.Millisecond))
	if !b.Before(e) {
		t.Errorf("start %v, end %v", b, e)
	}
	if _, e := BuildTimes(start, BuildStateBuilding, start); e != nil {
		t.Error("an end before the build ends")
	}
}

func ptrTime(s int64) *metav1.Time { t := metav1.Unix(s, 0); return &t }

// TestMachineOSBuildName: <mosc>-<16 hex>, one per rendered config and
// inputs, within a name's 253 characters.
func TestMachineOSBuildName(t *testing.T) {
	a, b := MachineOSBuildName("worker", "rendered-a", "0123"), MachineOSBuildName("worker", "rendered-b", "0123")
	if a == b || !strings.HasPrefix(a, "worker-") || len(a) != len("worker-")+16 {
		t.Errorf("%q %q", a, b)
	}
	if n := MachineOSBuildName(strings.Repeat("p", 253), "r", "i"); len(n) > 253 {
		t.Errorf("%d characters", len(n))
	}
}
