package conditions

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/annotations"
)

// Paused is CAPI's Paused condition for obj (of the given kind): True when
// the Cluster is paused or obj has the paused annotation, with what made it
// so. Reconcilers set it with their other conditions, in the same write
// (CAPI's EnsurePausedCondition would patch it on its own first). cluster
// may be nil while it does not exist yet.
func Paused(cluster *clusterv1.Cluster, obj metav1.Object, kind string) (bool, metav1.Condition) {
	var why []string
	if cluster != nil && ptr.Deref(cluster.Spec.Paused, false) {
		why = append(why, "Cluster spec.paused is set to true")
	}
	if annotations.HasPaused(obj) {
		why = append(why, kind+" has the "+clusterv1.PausedAnnotation+" annotation")
	}
	if len(why) > 0 {
		return true, metav1.Condition{Type: clusterv1.PausedCondition, Status: metav1.ConditionTrue,
			Reason: clusterv1.PausedReason, Message: strings.Join(why, ", ")}
	}
	return false, metav1.Condition{Type: clusterv1.PausedCondition, Status: metav1.ConditionFalse, Reason: clusterv1.NotPausedReason}
}
