package server_test

import (
	"strings"
	"testing"
)

// The whole create flow of the simplest server (image and flavor by ID,
// one port on a network by ID), from the first Resolve to ACTIVE, as the
// controller runs it: every request counts.
func TestCreateFlowCallBudget(t *testing.T) {
	const budget = 7
	e := newEnv(t)
	known, srv := e.converge(e.request("worker-a", e.spec()))
	if srv.Status != "ACTIVE" || known.InstanceID == "" || len(known.Resources.Ports) != 1 {
		t.Fatalf("server %s, status %+v", srv.Status, known)
	}
	calls := e.cloud.Calls()
	t.Logf("create flow, %d requests:\n  %s", len(calls), strings.Join(calls, "\n  "))
	if len(calls) > budget {
		t.Errorf("%d requests, budget %d", len(calls), budget)
	}
}
