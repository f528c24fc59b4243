package openshiftassistedcontrolplane

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// TestMachineController: the index holds a Machine under the control plane
// that controls it, at any version of our API, and under nothing else.
func TestMachineController(t *testing.T) {
	ref := func(apiVersion, kind string, controller bool) metav1.OwnerReference {
		return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: "cp", UID: "u", Controller: ptr.To(controller)}
	}
	for _, tt := range []struct {
		name   string
		owners []metav1.OwnerReference
		want   []string
	}{
		{"controlled by a v1alpha3 control plane", []metav1.OwnerReference{ref("controlplane.cluster.x-k8s.io/v1alpha3", kind, true)}, []string{"cp"}},
		{"controlled at another version", []metav1.OwnerReference{ref("controlplane.cluster.x-k8s.io/v1beta1", kind, true)}, []string{"cp"}},
		{"no owner", nil, nil},
		{"owned, not controlled", []metav1.OwnerReference{ref("controlplane.cluster.x-k8s.io/v1alpha3", kind, false)}, nil},
		{"controlled by a KubeadmControlPlane", []metav1.OwnerReference{ref("controlplane.cluster.x-k8s.io/v1beta2", "KubeadmControlPlane", true)}, nil},
		{"same kind, another group", []metav1.OwnerReference{ref("example.com/v1", kind, true)}, nil},
		{"unparsable apiVersion", []metav1.OwnerReference{ref("a/b/c", kind, true)}, nil},
		{"controlled by a MachineSet, owned by the control plane", []metav1.OwnerReference{
			ref("cluster.x-k8s.io/v1beta2", "MachineSet", true), ref("controlplane.cluster.x-k8s.io/v1alpha3", kind, false)}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "m", OwnerReferences: tt.owners}}
			if got := machineController(m); !slices.Equal(got, tt.want) {
				t.Errorf("machineController = %v, want %v", got, tt.want)
			}
		})
	}
}
