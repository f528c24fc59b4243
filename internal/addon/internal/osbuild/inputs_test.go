package osbuild

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	mcfgv1 "github.com/ocp-capi/ocp-capi/internal/consumed/machineconfiguration/v1"
)

const testRepo = "image-registry.openshift-image-registry.svc:5000/openshift-machine-config-operator/os-image"

func configMap(name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}, Data: data}
}

// wantInputError checks err is an *InputError with reason and a message
// containing every part of msg.
func wantInputError(t *testing.T, err error, reason string, msg ...string) {
	t.Helper()
	var ie *InputError
	if !errors.As(err, &ie) {
		t.Fatalf("error %v is not an *InputError", err)
	}
	if ie.Reason != reason {
		t.Errorf("reason %q, want %q (message %q)", ie.Reason, reason, ie.Message)
	}
	for _, m := range msg {
		if !strings.Contains(ie.Message, m) {
			t.Errorf("message %q does not contain %q", ie.Message, m)
		}
	}
}

func TestParseBuilderConfig(t *testing.T) {
	valid := func() map[string]string {
		return map[string]string{
			BaseImagePullSecretNameKey:  "pull",
			FinalImagePushSecretNameKey: "push",
			FinalImagePullspecKey:       testRepo + ":latest",
		}
	}
	tests := []struct {
		name    string
		mutate  func(map[string]string)
		want    BuilderConfig
		reason  string
		message []string
	}{
		{name: "valid, tag dropped", mutate: func(map[string]string) {},
			want: BuilderConfig{ConfigMapName: BuilderConfigMapName, BaseImagePullSecret: "pull", FinalImagePushSecret: "push", FinalRepository: testRepo}},
		{name: "no tag", mutate: func(d map[string]string) { d[FinalImagePullspecKey] = testRepo },
			want: BuilderConfig{ConfigMapName: BuilderConfigMapName, BaseImagePullSecret: "pull", FinalImagePushSecret: "push", FinalRepository: testRepo}},
		{name: "whitespace trimmed", mutate: func(d map[string]string) { d[BaseImagePullSecretNameKey] = " pull\n" },
			want: BuilderConfig{ConfigMapName: BuilderConfigMapName, BaseImagePullSecret: "pull", FinalImagePushSecret: "push", FinalRepository: testRepo}},
		{name: "all keys missing", mutate: func(d map[string]string) { clear(d) },
			reason: ReasonInvalidConfigMap, message: []string{"ns/" + BuilderConfigMapName, "lacks baseImagePullSecretName, finalImagePushSecretName, finalImagePullspec"}},
		{name: "empty value", mutate: func(d map[string]string) { d[FinalImagePushSecretNameKey] = "" },
			reason: ReasonInvalidConfigMap, message: []string{"lacks finalImagePushSecretName"}},
		{name: "invalid secret name", mutate: func(d map[string]string) { d[BaseImagePullSecretNameKey] = "Not_A_Name" },
			reason: ReasonInvalidConfigMap, message: []string{"baseImagePullSecretName", "not a valid Secret name"}},
		{name: "digest", mutate: func(d map[string]string) { d[FinalImagePullspecKey] = testRepo + "@sha256:" + strings.Repeat("a", 64) },
			reason: ReasonInvalidConfigMap, message: []string{"finalImagePullspec", "names a digest"}},
		{name: "no registry", mutate: func(d map[string]string) { d[FinalImagePullspecKey] = "org/repo" },
			reason: ReasonInvalidConfigMap, message: []string{"does not start with a registry host"}},
		{name: "single component", mutate: func(d map[string]string) { d[FinalImagePullspecKey] = "repo" },
			reason: ReasonInvalidConfigMap, message: []string{"not a fully qualified image repository"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := valid()
			tt.mutate(d)
			got, err := ParseBuilderConfig(configMap(BuilderConfigMapName, d))
			if tt.reason != "" {
				wantInputError(t, err, tt.reason, tt.message...)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParsePushRepository(t *testing.T) {
	tests := []struct {
		in, want string
		wantErr  string
	}{
		{in: "quay.io/org/repo", want: "quay.io/org/repo"},
		{in: "quay.io/org/repo:v1.2", want: "quay.io/org/repo"},
		{in: "localhost/repo:tag", want: "localhost/repo"},
		{in: "registry:5000/a/b/c", want: "registry:5000/a/b/c"},
		{in: "registry:5000/a/b/c:t", want: "registry:5000/a/b/c"},
		{in: "[fd00::1]:5000/org/repo", want: "[fd00::1]:5000/org/repo"},
		{in: "quay.io/Org/repo", wantErr: "not a fully qualified"},
		{in: "quay.io/org/repo:", wantErr: "invalid tag"},
		{in: "quay.io/org/repo:-bad", wantErr: "invalid tag"},
		{in: "quay.io/org/repo@sha256:abc", wantErr: "names a digest"},
		{in: "docker/repo", wantErr: "registry host"},
		{in: "", wantErr: "not a fully qualified"},
		{in: "quay.io/", wantErr: "not a fully qualified"},
	}
	for _, tt := range tests {
		got, err := ParsePushRepository(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParsePushRepository(%q) = %q, %v; want error %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParsePushRepository(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

// FuzzParsePushRepository: no panic; an accepted repository, tagged, is a
// valid reference and parses back to itself.
func FuzzParsePushRepository(f *testing.F) {
	for _, s := range []string{testRepo, "quay.io/a/b:c", "localhost/x", "a:1/b", "[::1]:5/x/y:z", "x@y", "::", "a/b:c:d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		repo, err := ParsePushRepository(s)
		if err != nil {
			return
		}
		tagged := repo + ":" + "rendered-worker-0123"
		if !validImageReference(tagged) {
			t.Fatalf("%q accepted as %q, but %q is not a valid reference", s, repo, tagged)
		}
		again, err := ParsePushRepository(tagged)
		if err != nil || again != repo {
			t.Fatalf("%q: round trip gave %q, %v", tagged, again, err)
		}
	})
}

func TestParseOSImageURL(t *testing.T) {
	base := "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:" + strings.Repeat("1", 64)
	tests := []struct {
		name    string
		data    map[string]string
		want    OSImages
		reason  string
		message []string
	}{
		{name: "valid", data: map[string]string{BaseOSContainerImageKey: base, ReleaseVersionKey: "4.15.0"},
			want: OSImages{BaseImage: base, ReleaseVersion: "4.15.0"}},
		{name: "legacy key", data: map[string]string{OSImageURLKey: base}, want: OSImages{BaseImage: base}},
		{name: "unsafe release version dropped", data: map[string]string{BaseOSContainerImageKey: base, ReleaseVersionKey: "4.15\nRUN rm -rf /"},
			want: OSImages{BaseImage: base}},
		{name: "missing", data: map[string]string{}, reason: ReasonInvalidConfigMap, message: []string{"lacks baseOSContainerImage"}},
		{name: "not an image", data: map[string]string{BaseOSContainerImageKey: "quay.io/x y"}, reason: ReasonInvalidConfigMap, message: []string{"not an image pullspec"}},
		{name: "newline injection", data: map[string]string{BaseOSContainerImageKey: "quay.io/x\nRUN true"}, reason: ReasonInvalidConfigMap},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseOSImageURL(configMap(OSImageURLConfigMapName, tt.data))
			if tt.reason != "" {
				wantInputError(t, err, tt.reason, tt.message...)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestValidatePullSecret(t *testing.T) {
	secret := func(data map[string][]byte) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns"}, Data: data}
	}
	tests := []struct {
		name    string
		data    map[string][]byte
		message []string // empty: valid
	}{
		{name: "valid", data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{"quay.io":{"auth":"eDp5"}}}`)}},
		{name: "empty auths is valid", data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{}}`)}},
		{name: "no key", data: map[string][]byte{"other": []byte("x")}, message: []string{"ns/s", "has no .dockerconfigjson key"}},
		{name: "legacy dockercfg", data: map[string][]byte{corev1.DockerConfigKey: []byte(`{}`)}, message: []string{"legacy .dockercfg"}},
		{name: "not JSON", data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{`)}, message: []string{"not a JSON object"}},
		{name: "no auths", data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"quay.io":{}}`)}, message: []string{`"auths"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidatePullSecret("base image pull", BaseImagePullSecretNameKey, secret(tt.data))
			if len(tt.message) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantInputError(t, err, ReasonInvalidSecret, tt.message...)
		})
	}
}

func TestRenderedConfig(t *testing.T) {
	pool := &mcfgv1.MachineConfigPool{ObjectMeta: metav1.ObjectMeta{Name: "worker"}}
	if _, err := RenderedConfig(pool); err == nil {
		t.Fatal("an empty spec.configuration.name must be an error")
	} else {
		wantInputError(t, err, ReasonNoRenderedConfig, "spec.configuration.name")
	}
	pool.Spec.Configuration.Name = "rendered-worker-1"
	if got, err := RenderedConfig(pool); err != nil || got != "rendered-worker-1" {
		t.Fatalf("got %q, %v", got, err)
	}
	if IsLayered(pool) {
		t.Error("a pool without the label is not layered")
	}
	pool.Labels = map[string]string{LayeringEnabledLabel: ""}
	if !IsLayered(pool) {
		t.Error("the label's presence opts in, whatever its value")
	}
}
