package envtest

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestStartInstallsAllCRDSets starts the real API server and checks that the
// three CRD sets (CAPI core, ours, consumed) are established and served.
func TestStartInstallsAllCRDSets(t *testing.T) {
	env, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Error(err)
		}
	})
	ctx := context.Background()

	var list apiextensionsv1.CustomResourceDefinitionList
	if err := env.Client.List(ctx, &list); err != nil {
		t.Fatal(err)
	}
	served := map[string]bool{}
	for _, c := range list.Items {
		for _, cond := range c.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				served[c.Name] = true
			}
		}
	}
	want := env.CRDs()
	if len(want) == 0 {
		t.Fatal("no CRDs were installed")
	}
	for _, c := range want {
		if !served[c.Object.Name] {
			t.Errorf("CRD %s (from %s) is not established", c.Object.Name, c.Source)
		}
	}
	for _, name := range []string{"clusters.cluster.x-k8s.io", "machines.cluster.x-k8s.io", "machinesets.cluster.x-k8s.io"} {
		if !served[name] {
			t.Errorf("CAPI core CRD %s missing", name)
		}
		if src := env.CRDSources()[name]; !strings.Contains(src, "sigs.k8s.io/cluster-api@") {
			t.Errorf("CAPI core CRD %s came from %q, want the cluster-api module cache", name, src)
		}
	}

	// The server really stores objects.
	ns, err := env.NewNamespace(ctx, "smoke")
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: ns.Name}, Data: map[string]string{"k": "v"}}
	if err := env.Client.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	got := &corev1.ConfigMap{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(cm), got); err != nil || got.Data["k"] != "v" {
		t.Fatalf("read back %v, %v", got.Data, err)
	}
}
