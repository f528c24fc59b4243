package conditions

import (
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

func TestPaused(t *testing.T) {
	g := NewWithT(t)
	obj := &metav1.ObjectMeta{}
	paused, c := Paused(nil, obj, "Thing")
	g.Expect(paused).To(BeFalse())
	g.Expect(c).To(Equal(metav1.Condition{Type: clusterv1.PausedCondition, Status: metav1.ConditionFalse, Reason: clusterv1.NotPausedReason}))

	cluster := &clusterv1.Cluster{Spec: clusterv1.ClusterSpec{Paused: ptr.To(true)}}
	obj.Annotations = map[string]string{clusterv1.PausedAnnotation: ""}
	paused, c = Paused(cluster, obj, "Thing")
	g.Expect(paused).To(BeTrue())
	g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
	g.Expect(c.Reason).To(Equal(clusterv1.PausedReason))
	g.Expect(c.Message).To(Equal("Cluster spec.paused is set to true, Thing has the cluster.x-k8s.io/paused annotation"))
}
