package controllers_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	capiconditions "sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/clients"
)

// TestClusterIdentity: servers name an OpenStackClusterIdentity whose
// Secret lives in a namespace of its own. The namespace the identity's
// selector selects gets its server built; another namespace is refused with
// IdentityAccessDenied and nothing is asked of OpenStack for it.
func TestClusterIdentity(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	e := newCloudEnv(t)
	secretNS, err := env.NewNamespace(ctx, "credentials")
	g.Expect(err).NotTo(HaveOccurred())
	e.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "shared-cloud", Namespace: secretNS.Name},
		Data: map[string][]byte{clients.CloudsYAMLKey: e.cloud.Clouds("openstack")}})
	label := "openstack-access-" + utilrand.String(5)
	id := &infrav1alpha1.OpenStackClusterIdentity{ObjectMeta: metav1.ObjectMeta{Name: "shared-" + utilrand.String(5)},
		Spec: infrav1alpha1.OpenStackClusterIdentitySpec{
			SecretRef:         infrav1alpha1.OpenStackCredentialSecretReference{Name: "shared-cloud", Namespace: secretNS.Name},
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{label: "yes"}},
		}}
	e.create(id)
	t.Cleanup(func() { _ = env.Client.Delete(ctx, id) })
	ns := &corev1.Namespace{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: e.ns}, ns)).To(Succeed())
	ns.Labels[label] = "yes"
	g.Expect(env.Client.Update(ctx, ns)).To(Succeed())
	ref := infrav1.OpenStackIdentityReference{Type: infrav1.IdentityRefTypeClusterIdentity, Name: id.Name, CloudName: "openstack"}

	allowed := e.server("allowed")
	allowed.Spec.IdentityRef = ref
	e.createDeletedOnCleanup(allowed)
	waitServerReady(g, allowed)

	other, err := env.NewNamespace(ctx, "other-tenant")
	g.Expect(err).NotTo(HaveOccurred())
	denied := e.server("denied")
	denied.Namespace = other.Name
	denied.Spec.IdentityRef = ref
	before := e.requests()
	e.createDeletedOnCleanup(denied)
	g.Eventually(func(g Gomega) {
		get(g, denied)
		c := capiconditions.Get(denied, infrav1.ReferencesResolvedCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(infrav1.IdentityAccessDeniedReason), cond(denied, infrav1.ReferencesResolvedCondition))
		g.Expect(c.Message).To(ContainSubstring("namespace " + other.Name + " may not use OpenStackClusterIdentity " + id.Name))
		g.Expect(capiconditions.IsFalse(denied, infrav1.ReadyCondition)).To(BeTrue())
	}, wait, tick).Should(Succeed())
	g.Expect(e.requests()).To(Equal(before), "nothing is asked of OpenStack for a refused namespace")

	// Deletion needs the credentials too (it finds what a server may have
	// left by name): allow the namespace, so that the cleanup can delete.
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: other.Name}, other)).To(Succeed())
	other.Labels[label] = "yes"
	g.Expect(env.Client.Update(ctx, other)).To(Succeed())
}
