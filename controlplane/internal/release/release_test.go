package release

import (
	"testing"
)

func TestKubernetesVersion(t *testing.T) {
	for _, tc := range []struct {
		dist, override, want string
		ok, fromTable        bool
	}{
		{"4.19.0", "", "v1.32.0", true, true},
		{"v4.14.7", "", "v1.27.0", true, true},
		{"4.19.0-okd-scos.ec.6", "", "v1.32.0", true, true},
		{"4.22.1", "", "v1.35.0", true, true},
		{"4.30.0", "", "", false, false},
		{"5.0.0", "", "", false, false},
		{"latest", "", "", false, false},
		{"4.30.0", "1.40.2", "v1.40.2", true, false},
		{"4.19.0", "v1.32.5", "v1.32.5", true, false},
	} {
		got, fromTable, ok, msg := KubernetesVersion(tc.dist, tc.override)
		if got != tc.want || ok != tc.ok || fromTable != tc.fromTable {
			t.Errorf("KubernetesVersion(%q, %q) = %q %v %v (%s), want %q %v %v", tc.dist, tc.override, got, fromTable, ok, msg, tc.want, tc.fromTable, tc.ok)
		}
		if !ok && msg == "" {
			t.Errorf("KubernetesVersion(%q): no message", tc.dist)
		}
	}
}

func TestImage(t *testing.T) {
	for _, tc := range []struct {
		dist, arch, repo, override, want string
	}{
		{"4.19.0", "", "", "", "quay.io/openshift-release-dev/ocp-release:4.19.0-x86_64"},
		{"4.19.0", "arm64", "", "", "quay.io/openshift-release-dev/ocp-release:4.19.0-aarch64"},
		{"4.19.0", "multi", "", "", "quay.io/openshift-release-dev/ocp-release:4.19.0-multi"},
		{"4.19.0-okd-scos.ec.6", "x86_64", "", "", "quay.io/okd/scos-release:4.19.0-okd-scos.ec.6"},
		{"4.19.0", "x86_64", "mirror.example.com/ocp/release/", "", "mirror.example.com/ocp/release:4.19.0-x86_64"},
		{"4.19.0", "x86_64", "mirror.example.com/r", "reg/x@sha256:abc", "reg/x@sha256:abc"},
		{"v4.19.0", "", "", "", "quay.io/openshift-release-dev/ocp-release:4.19.0-x86_64"},
	} {
		if got := Image(tc.dist, tc.arch, tc.repo, tc.override); got != tc.want {
			t.Errorf("Image(%q, %q, %q, %q) = %q, want %q", tc.dist, tc.arch, tc.repo, tc.override, got, tc.want)
		}
	}
}

func TestDesiredUpdate(t *testing.T) {
	for _, tc := range []struct {
		dist, repo, override string
		want                 Update
	}{
		{"4.19.1", "", "", Update{Version: "4.19.1"}},
		{"4.20.0-rc.1", "", "", Update{Version: "4.20.0-rc.1", Image: "quay.io/openshift-release-dev/ocp-release:4.20.0-rc.1-x86_64", Force: true}},
		{"4.19.0-okd-scos.ec.6", "", "", Update{Version: "4.19.0-okd-scos.ec.6", Image: "quay.io/okd/scos-release:4.19.0-okd-scos.ec.6", Force: true}},
		{"4.19.1", "m/r", "", Update{Version: "4.19.1", Image: "m/r:4.19.1-x86_64", Force: true}},
		{"4.19.1", "", "m/r@sha256:1", Update{Version: "4.19.1", Image: "m/r@sha256:1", Force: true}},
	} {
		if got := DesiredUpdate(tc.dist, "", tc.repo, tc.override); got != tc.want {
			t.Errorf("DesiredUpdate(%q, %q, %q) = %+v, want %+v", tc.dist, tc.repo, tc.override, got, tc.want)
		}
	}
}

func TestCompare(t *testing.T) {
	if Compare("4.19.0", "4.19.1") != -1 || Compare("4.20.0", "4.19.9") != 1 || Compare("v4.19.0", "4.19.0") != 0 {
		t.Error("Compare")
	}
}

func FuzzKubernetesVersion(f *testing.F) {
	for _, s := range []string{"4.19.0", "4.19.0-okd-scos.ec.6", "", "v", "4", "4.999999999999999999999.0"} {
		f.Add(s, "")
	}
	f.Fuzz(func(t *testing.T, dist, override string) {
		v, _, ok, msg := KubernetesVersion(dist, override)
		if ok && v == "" {
			t.Errorf("ok with an empty version for %q %q", dist, override)
		}
		if !ok && msg == "" {
			t.Errorf("no message for %q %q", dist, override)
		}
		_ = Image(dist, "", "", "")
		_ = DesiredUpdate(dist, "", "", "")
	})
}
