package conditions

import (
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

func TestGiveReasons(t *testing.T) {
	g := NewWithT(t)
	obj := &clusterv1.Machine{}
	obj.SetConditions([]metav1.Condition{
		{Type: "Ready", Status: metav1.ConditionTrue},
		{Type: "InstanceReady", Status: metav1.ConditionFalse, Reason: "InstanceStateError"},
	})
	GiveReasons(obj)
	g.Expect(obj.GetConditions()).To(Equal([]metav1.Condition{
		{Type: "Ready", Status: metav1.ConditionTrue, Reason: "NoReasonReported"},
		{Type: "InstanceReady", Status: metav1.ConditionFalse, Reason: "InstanceStateError"},
	}))
}
