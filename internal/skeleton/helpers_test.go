package skeleton

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"

	bootstrapv1 "github.com/ocp-capi/ocp-capi/api/bootstrap/v1alpha2"
)

func TestNotStatusOnly(t *testing.T) {
	base := &bootstrapv1.OpenshiftAssistedConfig{ObjectMeta: metav1.ObjectMeta{Name: "c", Generation: 1,
		Labels: map[string]string{"a": "1"}, Annotations: map[string]string{"b": "2"}, Finalizers: []string{"f"},
		OwnerReferences: []metav1.OwnerReference{{Kind: "Machine", Name: "m", UID: "u1"}}}}
	for name, tc := range map[string]struct {
		change func(*bootstrapv1.OpenshiftAssistedConfig)
		pass   bool
	}{
		"status only":     {func(c *bootstrapv1.OpenshiftAssistedConfig) { c.Status.DataSecretName = "x" }, false},
		"generation":      {func(c *bootstrapv1.OpenshiftAssistedConfig) { c.Generation = 2 }, true},
		"label":           {func(c *bootstrapv1.OpenshiftAssistedConfig) { c.Labels = map[string]string{"a": "2"} }, true},
		"annotation":      {func(c *bootstrapv1.OpenshiftAssistedConfig) { c.Annotations = nil }, true},
		"finalizer":       {func(c *bootstrapv1.OpenshiftAssistedConfig) { c.Finalizers = nil }, true},
		"deletion":        {func(c *bootstrapv1.OpenshiftAssistedConfig) { now := metav1.Now(); c.DeletionTimestamp = &now }, true},
		"owner":           {func(c *bootstrapv1.OpenshiftAssistedConfig) { c.OwnerReferences[0].UID = "u2" }, true},
		"owner's details": {func(c *bootstrapv1.OpenshiftAssistedConfig) { c.OwnerReferences[0].Controller = new(bool) }, true},
	} {
		t.Run(name, func(t *testing.T) {
			n := base.DeepCopy()
			tc.change(n)
			if got := NotStatusOnly().Update(event.UpdateEvent{ObjectOld: base, ObjectNew: n}); got != tc.pass {
				t.Errorf("got %v, want %v", got, tc.pass)
			}
		})
	}
}

func TestClusterByName(t *testing.T) {
	g := NewWithT(t)
	s := runtime.NewScheme()
	g.Expect(clusterv1.AddToScheme(s)).To(Succeed())
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(&clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c1"}}).Build()
	ctx := context.Background()

	got, err := ClusterByName(ctx, c, "ns", "c1")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).NotTo(BeNil())
	g.Expect(got.Name).To(Equal("c1"))
	for _, name := range []string{"", "missing"} {
		got, err := ClusterByName(ctx, c, "ns", name)
		g.Expect(err).NotTo(HaveOccurred(), name)
		g.Expect(got).To(BeNil(), "no Cluster named %q", name)
	}
	_, err = ClusterByName(ctx, fake.NewClientBuilder().Build(), "ns", "c1") // the scheme does not know Clusters
	g.Expect(err).To(HaveOccurred())
}
