package buildcontroller

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	osbuild "github.com/ocp-capi/ocp-capi/internal/addon/internal/osbuild"
	mcfgv1 "github.com/ocp-capi/ocp-capi/internal/consumed/machineconfiguration/v1"
)

func TestSetConditions(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(time.Minute))
	updated := mcfgv1.MachineConfigPoolCondition{Type: "Updated", Status: corev1.ConditionTrue, LastTransitionTime: t0}
	cond := func(typ string, status corev1.ConditionStatus, reason, msg string, at metav1.Time) mcfgv1.MachineConfigPoolCondition {
		return mcfgv1.MachineConfigPoolCondition{Type: mcfgv1.MachineConfigPoolConditionType(typ), Status: status, Reason: reason, Message: msg, LastTransitionTime: at}
	}
	pending := poolState{Type: osbuild.ConditionBuildPending, Reason: osbuild.ReasonPending, Message: "waiting"}
	running := poolState{Type: osbuild.ConditionBuilding, Reason: osbuild.ReasonRunning, Message: "building"}

	// First visit: all four appear, others' conditions are kept.
	got, changed := setConditions([]mcfgv1.MachineConfigPoolCondition{updated}, pending, t0)
	want := []mcfgv1.MachineConfigPoolCondition{
		updated,
		cond(osbuild.ConditionBuildPending, corev1.ConditionTrue, osbuild.ReasonPending, "waiting", t0),
		cond(osbuild.ConditionBuilding, corev1.ConditionFalse, osbuild.ReasonPending, "", t0),
		cond(osbuild.ConditionBuildSuccess, corev1.ConditionFalse, osbuild.ReasonPending, "", t0),
		cond(osbuild.ConditionBuildFailed, corev1.ConditionFalse, osbuild.ReasonPending, "", t0),
	}
	if !changed || !cmp.Equal(got, want) {
		t.Fatalf("first visit (changed=%v):\n%s", changed, cmp.Diff(want, got))
	}
	// Same state: nothing changes, even at a later time.
	if again, changed := setConditions(got, pending, t1); changed || !cmp.Equal(again, got) {
		t.Fatalf("same state changed the conditions:\n%s", cmp.Diff(got, again))
	}
	// Transition: only the flipped conditions get the new time.
	next, changed := setConditions(got, running, t1)
	want = []mcfgv1.MachineConfigPoolCondition{
		updated,
		cond(osbuild.ConditionBuildPending, corev1.ConditionFalse, osbuild.ReasonRunning, "", t1),
		cond(osbuild.ConditionBuilding, corev1.ConditionTrue, osbuild.ReasonRunning, "building", t1),
		cond(osbuild.ConditionBuildSuccess, corev1.ConditionFalse, osbuild.ReasonRunning, "", t0),
		cond(osbuild.ConditionBuildFailed, corev1.ConditionFalse, osbuild.ReasonRunning, "", t0),
	}
	if !changed || !cmp.Equal(next, want) {
		t.Fatalf("transition:\n%s", cmp.Diff(want, next))
	}
	// The input is not modified.
	if got[1].Status != corev1.ConditionTrue {
		t.Fatal("setConditions modified its input")
	}
	// Removal keeps the others.
	left, changed := removeConditions(next)
	if !changed || !cmp.Equal(left, []mcfgv1.MachineConfigPoolCondition{updated}) {
		t.Fatalf("removeConditions: %v", left)
	}
	if _, changed := removeConditions(left); changed {
		t.Fatal("removing absent conditions is a change")
	}
}

func TestSetAnnotations(t *testing.T) {
	p := &mcfgv1.MachineConfigPool{}
	if setAnnotations(p, map[string]string{"a": ""}) {
		t.Error("removing an absent annotation is a change")
	}
	if !setAnnotations(p, map[string]string{"a": "1", "b": ""}) || p.Annotations["a"] != "1" {
		t.Errorf("setting: %v", p.Annotations)
	}
	if setAnnotations(p, map[string]string{"a": "1"}) {
		t.Error("setting the same value is a change")
	}
	if !setAnnotations(p, map[string]string{"a": ""}) || len(p.Annotations) != 0 {
		t.Errorf("removing: %v", p.Annotations)
	}
	p.Annotations = map[string]string{osbuild.BuildIDAnnotation: "x", osbuild.DesiredOSImageAnnotation: "img"}
	if !published(p, "x") || published(p, "y") {
		t.Error("published")
	}
}

func TestOptions(t *testing.T) {
	o := DefaultOptions()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse([]string{"--build-backend=job", "--build-namespace=builds", "--build-timeout=30m",
		"--builder-image=quay.io/buildah/stable:v1.40", "--build-service-account=machine-os-builder", "--build-failed-retention=0", "--build-api-timeout=45s",
		"--build-retries=2", "--build-image-retention=4"}); err != nil {
		t.Fatal(err)
	}
	want := Options{Backend: "job", Namespace: "builds", Timeout: 30 * time.Minute, BuilderImage: "quay.io/buildah/stable:v1.40",
		ServiceAccount: "machine-os-builder", FailedRetention: 0, SecretRetry: time.Minute, APITimeout: 45 * time.Second,
		Retries: 2, ImageRetention: 4}
	if o != want {
		t.Fatalf("options %+v, want %+v", o, want)
	}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := DefaultOptions().Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	for name, mutate := range map[string]func(*Options){
		"--build-backend":          func(o *Options) { o.Backend = "pod" },
		"--build-namespace":        func(o *Options) { o.Namespace = "Not A Namespace" },
		"--build-timeout":          func(o *Options) { o.Timeout = 0 },
		"--builder-image":          func(o *Options) { o.Backend, o.BuilderImage = "job", " " },
		"--build-service-account":  func(o *Options) { o.ServiceAccount = "No" },
		"--build-failed-retention": func(o *Options) { o.FailedRetention = -1 },
		"--build-api-timeout":      func(o *Options) { o.APITimeout = 0 },
		"--build-retries":          func(o *Options) { o.Retries = 11 },
		"--build-image-retention":  func(o *Options) { o.ImageRetention = 0 },
	} {
		o := DefaultOptions()
		mutate(&o)
		if err := o.Validate(); err == nil || !contains(err.Error(), name) {
			t.Errorf("%s: error %v does not name the flag", name, err)
		}
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
