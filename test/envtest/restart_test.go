package envtest

import (
	"context"
	"net/url"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestRestartAPIServer: a new kube-apiserver process on the same port and
// etcd, which keeps what was stored and takes writes again; Stop stops it.
func TestRestartAPIServer(t *testing.T) {
	env, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = env.Stop()
		}
	})
	ctx := context.Background()
	before := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "before", Namespace: "default"}, Data: map[string]string{"k": "v"}}
	if err := env.Client.Create(ctx, before); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(env.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	oldPID, _, _, err := findAPIServer(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	if err := env.RestartAPIServer(ctx, time.Second); err != nil {
		t.Fatal(err)
	}
	newPID, _, _, err := findAPIServer(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	if newPID == oldPID || processAlive(oldPID) {
		t.Fatalf("kube-apiserver pid %d after the restart, %d before (alive: %v)", newPID, oldPID, processAlive(oldPID))
	}
	got := &corev1.ConfigMap{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(before), got); err != nil || got.Data["k"] != "v" {
		t.Fatalf("the ConfigMap stored before the restart: %v %v", got.Data, err)
	}
	if err := env.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after", Namespace: "default"}}); err != nil {
		t.Fatalf("a write after the restart: %v", err)
	}
	stopped = true
	if err := env.Stop(); err != nil {
		t.Fatal(err)
	}
	if processAlive(newPID) {
		t.Fatalf("the restarted kube-apiserver (pid %d) still runs after Stop", newPID)
	}
}
