package openstackserver

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	capiconditions "sigs.k8s.io/cluster-api/util/conditions"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
)

func conditionReason(oss *infrav1alpha1.OpenStackServer, t string) string {
	if c := capiconditions.Get(oss, t); c != nil {
		return c.Reason
	}
	return ""
}

func isTrue(oss *infrav1alpha1.OpenStackServer, t string) bool {
	c := capiconditions.Get(oss, t)
	return c != nil && c.Status == metav1.ConditionTrue
}
