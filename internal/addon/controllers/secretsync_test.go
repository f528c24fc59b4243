package controllers_test

// The Secret sync (internal/addon/controllers/secretsync): with the suite's
// two namespaces, and, in a manager of its own, with one namespace for both
// sides (the bare-metal layout where the CAPI objects live beside the
// hosts).

import (
	"context"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ocp-capi/ocp-capi/internal/addon"
	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
)

func secret(ns, name string, data map[string]string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

// machineSetUsing refers to the user data and credentials Secrets.
func machineSetUsing(ns, name, userData, creds string) *mapiv1beta1.MachineSet {
	raw := fmt.Sprintf(`{"kind":"OpenstackProviderSpec","userDataSecret":{"name":%q},"cloudsSecret":{"name":%q,"namespace":%q}}`, userData, creds, ns)
	return &mapiv1beta1.MachineSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: mapiv1beta1.MachineSetSpec{Template: mapiv1beta1.MachineTemplateSpec{Spec: mapiv1beta1.MachineSpec{
			ProviderSpec: mapiv1beta1.ProviderSpec{Value: &runtime.RawExtension{Raw: []byte(raw)}}}}},
	}
}

func secretData(g Gomega, ns, name string) map[string]string {
	s := &corev1.Secret{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, s)).To(Succeed())
	out := map[string]string{}
	for k, v := range s.Data {
		out[k] = string(v)
	}
	return out
}

// TestCopies: the user data Secret is copied with the key value, the
// credentials as they are; a change of the source shows in the copy, a
// deleted copy is made again, a copy nothing refers to goes, and a Secret
// the sync did not create is left alone. Its Secrets have names of their
// own: the other flows' MachineSets use the installer's.
func TestCopies(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	g.Expect(env.Client.Create(ctx, secret(mapiNS, "copies-user-data", map[string]string{"userData": "ign-1", "disableTemplating": "true"}))).To(Succeed())
	g.Expect(env.Client.Create(ctx, secret(mapiNS, "copies-cloud-credentials", map[string]string{"clouds.yaml": "clouds: {}", "cacert": "CA"}))).To(Succeed())
	g.Expect(env.Client.Create(ctx, secret(mapiNS, "copies-other-creds", map[string]string{"clouds.yaml": "x"}))).To(Succeed())
	g.Expect(env.Client.Create(ctx, secret(capiNS, "copies-other-creds", map[string]string{"clouds.yaml": "the CCO's"}))).To(Succeed())
	ms := machineSetUsing(mapiNS, "copies-workers", "copies-user-data", "copies-cloud-credentials")
	g.Expect(env.Client.Create(ctx, ms)).To(Succeed())
	g.Expect(env.Client.Create(ctx, machineSetUsing(mapiNS, "copies-others", "copies-user-data", "copies-other-creds"))).To(Succeed())

	g.Eventually(func(g Gomega) {
		g.Expect(secretData(g, capiNS, "copies-user-data")).To(Equal(map[string]string{"value": "ign-1"}))
		g.Expect(secretData(g, capiNS, "copies-cloud-credentials")).To(Equal(map[string]string{"clouds.yaml": "clouds: {}", "cacert": "CA"}))
	}).WithTimeout(timeout).Should(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(secretData(g, capiNS, "copies-other-creds")).To(Equal(map[string]string{"clouds.yaml": "the CCO's"}), "not the sync's: left alone")
	}).WithTimeout(2 * time.Second).Should(Succeed())

	src := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: mapiNS, Name: "copies-user-data"}, src)).To(Succeed())
	src.Data["userData"] = []byte("ign-2")
	g.Expect(env.Client.Update(ctx, src)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(secretData(g, capiNS, "copies-user-data")).To(HaveKeyWithValue("value", "ign-2"))
	}).WithTimeout(timeout).Should(Succeed())

	g.Expect(env.Client.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: capiNS, Name: "copies-cloud-credentials"}})).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(secretData(g, capiNS, "copies-cloud-credentials")).To(HaveKey("clouds.yaml"))
	}).WithTimeout(timeout).Should(Succeed())

	g.Expect(env.Client.Delete(ctx, ms)).To(Succeed())
	g.Eventually(func(g Gomega) {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: capiNS, Name: "copies-cloud-credentials"}, &corev1.Secret{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "copy of an unused Secret still there: %v", err)
		g.Expect(secretData(g, capiNS, "copies-user-data")).To(HaveKey("value"), "still used by the other MachineSet")
	}).WithTimeout(timeout).Should(Succeed())
}

// TestSameNamespace: with one namespace for both sides, the user data
// Secret gets the key value beside userData; nothing else is written.
func TestSameNamespace(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	const shared = "bm-shared"
	g.Expect(env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: shared}})).To(Succeed())
	opts := addon.NewOptions()
	opts.MAPINamespace, opts.CAPINamespace = shared, shared
	stop, err := startAddon(ctx, addonConfig(env.ControllerConfig()), opts, 4)
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { g.Expect(stop()).To(Succeed()) }()
	g.Expect(env.Client.Create(ctx, secret(shared, "worker-user-data-managed", map[string]string{"userData": "ign"}))).To(Succeed())
	g.Expect(env.Client.Create(ctx, machineSetUsing(shared, "bm-workers", "worker-user-data-managed", ""))).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(secretData(g, shared, "worker-user-data-managed")).To(Equal(map[string]string{"userData": "ign", "value": "ign"}))
	}).WithTimeout(timeout).Should(Succeed())
}
