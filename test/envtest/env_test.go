package envtest

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestStartInstallsAllCRDSets starts the real API server and checks that the
// three CRD sets (CAPI core, ours, consumed) are established and served,
// and that the audit log (Options.AuditLogPath) records its requests.
func TestStartInstallsAllCRDSets(t *testing.T) {
	auditLog := filepath.Join(t.TempDir(), "audit.log")
	begin := time.Now()
	env, err := Start(Options{AuditLogPath: auditLog})
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

	// The audit log has the create and the get, the write as a write, and
	// nothing outside the time asked for.
	events, err := ReadAuditLog(auditLog, begin, time.Now().Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var created, read bool
	for _, e := range events {
		if e.ObjectRef == nil || e.ObjectRef.Namespace != ns.Name || e.ObjectRef.Name != "x" && e.Verb != "create" {
			continue
		}
		switch {
		case e.Verb == "create" && e.Resource() == "configmaps" && e.IsWrite() && e.ResponseStatus != nil && e.ResponseStatus.Code == 201:
			created = true
		case e.Verb == "get" && e.Resource() == "configmaps" && !e.IsWrite():
			read = true
		}
	}
	if !created || !read {
		t.Errorf("audit log of %d events: ConfigMap create seen %v, get seen %v", len(events), created, read)
	}
	if events, err := ReadAuditLog(auditLog, begin.Add(-time.Hour), begin); err != nil || len(events) != 0 {
		t.Errorf("events before the server started: %d, %v", len(events), err)
	}
}
