package authority

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
)

func TestNextSynchronized(t *testing.T) {
	then := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	now := metav1.NewTime(then.Add(time.Hour))
	first := NextSynchronized(nil, corev1.ConditionFalse, "Failed", "boom", now)
	if first.Severity != mapiv1beta1.ConditionSeverityError || !first.LastTransitionTime.Equal(&now) || first.Type != SynchronizedCondition {
		t.Errorf("first False = %+v", first)
	}
	cur := first
	cur.LastTransitionTime = then
	same := NextSynchronized(&cur, corev1.ConditionFalse, "Failed", "other", now)
	if !same.LastTransitionTime.Equal(&then) {
		t.Errorf("the status stayed False: lastTransitionTime moved to %v", same.LastTransitionTime)
	}
	if SameCondition(&cur, same) {
		t.Error("another message is a change")
	}
	if !SameCondition(&cur, NextSynchronized(&cur, corev1.ConditionFalse, "Failed", "boom", now)) {
		t.Error("the same condition is no change")
	}
	up := NextSynchronized(&cur, corev1.ConditionUnknown, "Changed", "", now)
	if up.Severity != mapiv1beta1.ConditionSeverityInfo || !up.LastTransitionTime.Equal(&now) {
		t.Errorf("Unknown after False = %+v", up)
	}
	if ok := NextSynchronized(&cur, corev1.ConditionTrue, "Synced", "", now); ok.Severity != mapiv1beta1.ConditionSeverityNone {
		t.Errorf("True = %+v", ok)
	}
	long := NextSynchronized(nil, corev1.ConditionTrue, "Synced", strings.Repeat("w", 3*maxMessageLength), now)
	if len(long.Message) != maxMessageLength || !strings.HasSuffix(long.Message, "...(truncated)") {
		t.Errorf("a long message is %d bytes, ends %q", len(long.Message), long.Message[len(long.Message)-20:])
	}
	if SameCondition(nil, first) {
		t.Error("no condition differs from any")
	}
}

func TestMirrorAnnotations(t *testing.T) {
	in := map[string]string{"a": "1"}
	out := MirrorAnnotations(in, "created-for", "ms")
	if len(in) != 1 {
		t.Errorf("the input changed: %v", in)
	}
	if _, paused := out[clusterv1.PausedAnnotation]; !paused || out["created-for"] != "ms" || out["a"] != "1" {
		t.Errorf("out = %v", out)
	}
	if out := MirrorAnnotations(nil, "created-for", ""); len(out) != 1 {
		t.Errorf("no createdFor: %v", out)
	}
}
