package osbuild

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	mcfgv1 "github.com/ocp-capi/ocp-capi/internal/consumed/machineconfiguration/v1"
)

// FuzzBuilderConfig feeds arbitrary builder ConfigMaps and MachineOSConfigs
// to their parsers: no panic, the same answer twice, and what is accepted
// is safe to use: Secret names that are names, a push repository that,
// tagged, is an image reference, nothing that could break a Containerfile
// or a Job's arguments (no whitespace or control character).
//
//	go test ./internal/addon/internal/osbuild -run '^$' -fuzz '^FuzzBuilderConfig$' -fuzztime 60s
func FuzzBuilderConfig(f *testing.F) {
	for _, s := range []struct {
		mosc                          bool
		builder, pull, push, pullspec string
	}{
		{false, "", "pull-secret", "push-secret", testRepo + ":latest"},
		{false, "", " pull ", "push", "quay.io/org/repo"},
		{false, "", "Pull", "push", "quay.io/org/repo"},
		{false, "", "pull", "", "quay.io/org/repo"},
		{false, "", "pull", "push", "quay.io/org/repo@sha256:" + strings.Repeat("a", 64)},
		{true, ImageBuilderTypeJob, "", "push", "quay.io/org/repo:tag"},
		{true, ImageBuilderTypeJob, "pull", "push", "registry:5000/a/b"},
		{true, "PodImageBuilder", "pull", "push", "quay.io/org/repo"},
		{true, ImageBuilderTypeJob, "pull", "push\n", "quay.io/org/repo\nRUN x"},
	} {
		f.Add(s.mosc, s.builder, s.pull, s.push, s.pullspec)
	}
	f.Fuzz(func(t *testing.T, mosc bool, builder, pull, push, pullspec string) {
		var parse func() (BuilderConfig, error)
		if mosc {
			m := &mcfgv1.MachineOSConfig{ObjectMeta: metav1.ObjectMeta{Name: "worker"}}
			m.Spec.ImageBuilder.ImageBuilderType = builder
			if pull != "" {
				m.Spec.BaseImagePullSecret = &mcfgv1.ImageSecretObjectReference{Name: pull}
			}
			m.Spec.RenderedImagePushSecret.Name = push
			m.Spec.RenderedImagePushSpec = pullspec
			before := m.DeepCopy()
			parse = func() (BuilderConfig, error) {
				defer func() {
					if !reflect.DeepEqual(before, m) {
						t.Fatalf("BuilderConfigOf changed its input")
					}
				}()
				return BuilderConfigOf(m)
			}
		} else {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: BuilderConfigMapName}, Data: map[string]string{
				BaseImagePullSecretNameKey: pull, FinalImagePushSecretNameKey: push, FinalImagePullspecKey: pullspec}}
			parse = func() (BuilderConfig, error) { return ParseBuilderConfig(cm) }
		}
		cfg, err := parse()
		again, err2 := parse()
		if !reflect.DeepEqual(cfg, again) || (err == nil) != (err2 == nil) || (err != nil && err.Error() != err2.Error()) {
			t.Fatalf("two parses differ: %+v %v / %+v %v", cfg, err, again, err2)
		}
		if err != nil {
			if cfg != (BuilderConfig{}) {
				t.Fatalf("a config with an error: %+v", cfg)
			}
			return
		}
		if !validImageReference(cfg.FinalRepository + ":t") {
			t.Fatalf("accepted repository %q is not one", cfg.FinalRepository)
		}
		for _, v := range []string{cfg.BaseImagePullSecret, cfg.FinalImagePushSecret, cfg.FinalRepository} {
			if v == "" || strings.ContainsFunc(v, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) {
				t.Fatalf("accepted value %q is empty or holds whitespace", v)
			}
		}
		for _, name := range []string{cfg.BaseImagePullSecret, cfg.FinalImagePushSecret} {
			if len(validation.IsDNS1123Subdomain(name)) > 0 {
				t.Fatalf("accepted Secret name %q is not a name", name)
			}
		}
	})
}

// FuzzParseOSImageURL: no panic, the same answer twice; an accepted base
// image is an image reference without whitespace, and the release version
// kept is safe as an unquoted label value.
//
//	go test ./internal/addon/internal/osbuild -run '^$' -fuzz '^FuzzParseOSImageURL$' -fuzztime 60s
func FuzzParseOSImageURL(f *testing.F) {
	for _, s := range [][3]string{
		{"quay.io/openshift/os@sha256:" + strings.Repeat("b", 64), "", "4.19.0"},
		{"", "registry:5000/os:latest", "4.19.0 LABEL x=y"},
		{"quay.io/os\nRUN rm -rf /", "", ""},
		{"", "", "4.19"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, base, osImageURL, release string) {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "machine-config-osimageurl"}, Data: map[string]string{
			BaseOSContainerImageKey: base, OSImageURLKey: osImageURL, ReleaseVersionKey: release}}
		got, err := ParseOSImageURL(cm)
		again, err2 := ParseOSImageURL(cm)
		if got != again || (err == nil) != (err2 == nil) {
			t.Fatalf("two parses differ: %+v %v / %+v %v", got, err, again, err2)
		}
		if err != nil {
			return
		}
		if !validImageReference(got.BaseImage) || strings.ContainsFunc(got.BaseImage, unicode.IsSpace) {
			t.Fatalf("accepted base image %q", got.BaseImage)
		}
		if !labelSafe.MatchString(got.ReleaseVersion) {
			t.Fatalf("kept release version %q", got.ReleaseVersion)
		}
	})
}

// Regression (found by FuzzBuilderConfig): a MachineOSConfig's Secret names
// were taken as they came, e.g. "0 0", and failed only in the build Job.
func TestBuilderConfigOfRejectsInvalidSecretNames(t *testing.T) {
	for _, tc := range []struct{ pull, push, field string }{
		{"0 0", "push", "spec.baseImagePullSecret.name"},
		{"", "Push_Secret", "spec.renderedImagePushSecret.name"},
	} {
		m := &mcfgv1.MachineOSConfig{ObjectMeta: metav1.ObjectMeta{Name: "worker"}}
		m.Spec.ImageBuilder.ImageBuilderType = ImageBuilderTypeJob
		if tc.pull != "" {
			m.Spec.BaseImagePullSecret = &mcfgv1.ImageSecretObjectReference{Name: tc.pull}
		}
		m.Spec.RenderedImagePushSecret.Name = tc.push
		m.Spec.RenderedImagePushSpec = testRepo + ":latest"
		_, err := BuilderConfigOf(m)
		var ie *InputError
		if !errors.As(err, &ie) || ie.Reason != ReasonInvalidMachineOSConfig || !strings.Contains(ie.Message, tc.field) {
			t.Errorf("%+v: %v, want %s %s", tc, err, ReasonInvalidMachineOSConfig, tc.field)
		}
	}
}
