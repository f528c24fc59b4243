package identity

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/clients"
	"github.com/ocp-capi/ocp-capi/test/fakeopenstack"
)

// recorder remembers every object the factory reads.
type recorder struct {
	client.Reader
	mu   sync.Mutex
	gets []string // "<kind> <namespace>/<name>"
}

func (r *recorder) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	r.mu.Lock()
	r.gets = append(r.gets, typeName(obj)+" "+key.String())
	r.mu.Unlock()
	return r.Reader.Get(ctx, key, obj, opts...)
}

func typeName(obj client.Object) string {
	switch obj.(type) {
	case *corev1.Secret:
		return "Secret"
	case *corev1.Namespace:
		return "Namespace"
	case *infrav1alpha1.OpenStackClusterIdentity:
		return "OpenStackClusterIdentity"
	}
	return "other"
}

func (r *recorder) secretReads() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, g := range r.gets {
		if strings.HasPrefix(g, "Secret ") {
			out = append(out, g)
		}
	}
	return out
}

// TestClusterIdentity: an identityRef of type ClusterIdentity reaches the
// identity's Secret, in another namespace, only from a namespace its
// namespaceSelector selects; from any other namespace no Secret is read.
func TestClusterIdentity(t *testing.T) {
	cloud := fakeopenstack.New(t)
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := infrav1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tenant-a", Labels: map[string]string{"openstack-access": "shared"}}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tenant-b"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "capo-system"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "shared-cloud", Namespace: "capo-system"},
			Data: map[string][]byte{clients.CloudsYAMLKey: cloud.Clouds("openstack")}},
		&infrav1alpha1.OpenStackClusterIdentity{ObjectMeta: metav1.ObjectMeta{Name: "shared"}, Spec: infrav1alpha1.OpenStackClusterIdentitySpec{
			SecretRef:         infrav1alpha1.OpenStackCredentialSecretReference{Name: "shared-cloud", Namespace: "capo-system"},
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"openstack-access": "shared"}},
		}},
		&infrav1alpha1.OpenStackClusterIdentity{ObjectMeta: metav1.ObjectMeta{Name: "everyone"}, Spec: infrav1alpha1.OpenStackClusterIdentitySpec{
			SecretRef: infrav1alpha1.OpenStackCredentialSecretReference{Name: "shared-cloud", Namespace: "capo-system"},
		}},
	}
	rec := &recorder{Reader: fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).Build()}
	f := &Factory{Reader: rec, Clients: clients.NewFactory(clients.Options{})}
	ctx := context.Background()
	ref := func(name string) infrav1.OpenStackIdentityReference {
		return infrav1.OpenStackIdentityReference{Type: infrav1.IdentityRefTypeClusterIdentity, Name: name, CloudName: "openstack"}
	}

	// A selected namespace gets clients made from the other namespace's
	// Secret.
	if _, err := f.For(ctx, "tenant-a", ref("shared")); err != nil {
		t.Fatalf("tenant-a: %v", err)
	}
	if got := rec.secretReads(); len(got) != 1 || got[0] != "Secret capo-system/shared-cloud" {
		t.Fatalf("Secrets read for tenant-a: %v", got)
	}

	// Any other namespace is refused before any Secret is read.
	rec.gets = nil
	_, err := f.For(ctx, "tenant-b", ref("shared"))
	var e *clients.Error
	if !errors.As(err, &e) || e.Reason != clients.ReasonIdentityAccessDenied || e.Class != clients.Terminal ||
		!strings.Contains(e.Message, "namespace tenant-b may not use OpenStackClusterIdentity shared") {
		t.Fatalf("tenant-b: %v", err)
	}
	if got := rec.secretReads(); len(got) != 0 {
		t.Fatalf("a Secret was read for a namespace the identity does not allow: %v", got)
	}

	// No selector: every namespace.
	if _, err := f.For(ctx, "tenant-b", ref("everyone")); err != nil {
		t.Fatalf("tenant-b with the identity for everyone: %v", err)
	}

	// A missing identity is waited for; nothing is read in its place.
	rec.gets = nil
	_, err = f.For(ctx, "tenant-a", ref("missing"))
	if !errors.As(err, &e) || e.Reason != clients.ReasonAuthFailed || !strings.Contains(e.Message, "OpenStackClusterIdentity missing not found") {
		t.Fatalf("missing identity: %v", err)
	}
	if got := rec.secretReads(); len(got) != 0 {
		t.Fatalf("Secrets read for a missing identity: %v", got)
	}

	// type Secret never leaves the object's namespace: the name of the
	// other namespace's Secret is looked up in the object's own.
	rec.gets = nil
	_, err = f.For(ctx, "tenant-a", infrav1.OpenStackIdentityReference{Type: infrav1.IdentityRefTypeSecret, Name: "shared-cloud", CloudName: "openstack"})
	if !errors.As(err, &e) || !strings.Contains(e.Message, "identity Secret tenant-a/shared-cloud not found") {
		t.Fatalf("type Secret: %v", err)
	}
	if got := rec.secretReads(); len(got) != 1 || got[0] != "Secret tenant-a/shared-cloud" {
		t.Fatalf("Secrets read for type Secret: %v", got)
	}
}
