package server_test

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/clients"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/server"
	"github.com/ocp-capi/ocp-capi/test/fakeopenstack"
)

func trunked(s *infrav1alpha1.OpenStackServerSpec) { s.Trunk = ptr.To(true) }

// deletes lists the DELETE requests of the log.
func (e *env) deletes() []string {
	var out []string
	for _, c := range e.cloud.Calls() {
		if strings.HasPrefix(c, "DELETE ") {
			out = append(out, c)
		}
	}
	return out
}

func (e *env) wantNothingLeft() {
	e.t.Helper()
	for _, k := range []fakeopenstack.Kind{fakeopenstack.Servers, fakeopenstack.Ports, fakeopenstack.Trunks, fakeopenstack.Volumes} {
		if n := e.cloud.Len(k); n != 0 {
			e.t.Errorf("%d %s left: %v", n, k, e.cloud.Names(k))
		}
	}
}

func TestDeleteServerThenTrunkThenPort(t *testing.T) {
	e := newEnv(t)
	// The root volume is Nova's: it goes with the server.
	req := e.request("worker-a", e.spec(trunked, func(s *infrav1alpha1.OpenStackServerSpec) {
		s.RootVolume = &infrav1.RootVolume{SizeGiB: 50}
	}))
	known, _ := e.converge(req)
	e.cloud.ResetRequests()

	err := server.Delete(e.ctx, e.s, req, known)
	if !progress(err) {
		t.Fatalf("first pass: %v, want a Progress while Nova deletes", err)
	}
	e.wantCalls("GET "+pathServer, "DELETE "+pathServer)
	if passes := e.deleteAll(req, known); passes != 1 {
		t.Errorf("%d more passes, want 1", passes)
	}
	want := []string{"DELETE " + pathServer, "DELETE " + pathTrunk, "DELETE " + pathPort}
	if got := e.deletes(); !slices.Equal(got, want) {
		t.Errorf("deletes %v, want %v", got, want)
	}
	e.wantNothingLeft()
}

func TestDeleteFromNamesAlone(t *testing.T) {
	e := newEnv(t)
	req := e.request("worker-a", e.spec(trunked, threePorts))
	e.converge(req)
	e.cloud.ResetRequests()

	// clusterctl move: the status is gone.
	passes := e.deleteAll(req, server.Known{})
	if passes != 2 {
		t.Errorf("%d passes, want 2", passes)
	}
	e.wantNothingLeft()
	t.Logf("delete from names: %v", e.cloud.Calls())
}

func TestDeleteProgressWhileNovaDeletes(t *testing.T) {
	e := newEnv(t, func(c *fakeopenstack.Cloud) { c.SetDeleteReads(2) })
	req := e.request("worker-a", e.spec())
	known, _ := e.converge(req)
	e.cloud.ResetRequests()

	for pass := 1; pass <= 3; pass++ {
		if err := server.Delete(e.ctx, e.s, req, known); !progress(err) {
			t.Fatalf("pass %d: %v, want a Progress while the server is deleting", pass, err)
		}
		if n := e.cloud.Len(fakeopenstack.Ports); n != 1 {
			t.Fatalf("pass %d: the port was deleted before the server was gone", pass)
		}
	}
	if err := server.Delete(e.ctx, e.s, req, known); err != nil {
		t.Fatalf("last pass: %v", err)
	}
	e.wantNothingLeft()
	// Nova ignores a DELETE of a server that is already deleting; each
	// pass sends one anyway.
	t.Logf("server DELETEs while Nova was deleting: %d", e.cloud.Hits("DELETE", pathServer))
}

// A server that was never created: its ports and the volumes made in a
// zone go, trunk before port, ports before volumes.
func TestDeleteWithoutServer(t *testing.T) {
	e := newEnv(t, twoZones, func(c *fakeopenstack.Cloud) { c.SetVolumeReads(0) })
	req := e.request("worker-a", e.spec(trunked, rootInZone))
	resolved := e.resolve(req)
	known := server.Known{Resolved: resolved, Resources: &infrav1alpha1.ServerResources{Ports: e.ports(resolved, nil)}}
	known.Resources.Volumes, _ = server.EnsureVolumes(e.ctx, e.s, req, resolved, nil)
	e.cloud.ResetRequests()

	if err := server.Delete(e.ctx, e.s, req, known); !progress(err) {
		t.Fatalf("first pass: %v, want a Progress while Cinder deletes", err)
	}
	want := []string{"DELETE " + pathTrunk, "DELETE " + pathPort, "DELETE " + pathVolume}
	if got := e.deletes(); !slices.Equal(got, want) {
		t.Errorf("deletes %v, want %v", got, want)
	}
	e.cloud.ResetRequests()
	if err := server.Delete(e.ctx, e.s, req, known); err != nil {
		t.Fatalf("second pass: %v", err)
	}
	e.wantNothingLeft()
	// The caller passes the same Known again: the port, already gone, is
	// deleted again (404, ignored).
	t.Logf("second pass: %v", e.cloud.Calls())
}

func TestDeleteIsIdempotent(t *testing.T) {
	e := newEnv(t)
	req := e.request("worker-a", e.spec())
	known, _ := e.converge(req)
	e.deleteAll(req, known)
	e.cloud.ResetRequests()
	if err := server.Delete(e.ctx, e.s, req, known); err != nil {
		t.Errorf("deleting again: %v", err)
	}
	if err := server.Delete(e.ctx, e.s, req, server.Known{}); err != nil {
		t.Errorf("deleting again from names: %v", err)
	}
}

func TestDeleteErrors(t *testing.T) {
	e := newEnv(t)
	req := e.request("worker-a", e.spec())
	known, _ := e.converge(req)
	e.cloud.Inject(fakeopenstack.Fault{Method: "DELETE", PathPrefix: pathServer, Status: 429, RetryAfter: "17"})
	err := server.Delete(e.ctx, e.s, req, known)
	if got := wantError(t, err, clients.Transient, clients.ReasonRateLimited, "deleting server worker-a"); got.RetryAfter.Seconds() != 17 {
		t.Errorf("RetryAfter %v, want 17s", got.RetryAfter)
	}
	if e.cloud.Len(fakeopenstack.Ports) != 1 {
		t.Error("the port was deleted although the server was not")
	}
}
