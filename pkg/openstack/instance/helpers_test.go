package instance_test

import (
	"context"
	"errors"
	"testing"

	"github.com/ocp-capi/ocp-capi/pkg/openstack/instance"
	"github.com/ocp-capi/ocp-capi/test/fakeopenstack"
)

// fake is the in-memory OpenStack with what the tests and the example
// use: flavor m1.large, image rhcos-4.18, network machines with a subnet,
// and security group workers.
type fake struct {
	*fakeopenstack.Cloud
	flavor, image, net, subnet, sg string
}

func startFake(t testing.TB) *fake {
	t.Helper()
	c := fakeopenstack.New(t)
	f := &fake{Cloud: c}
	f.flavor = c.AddFlavor("m1.large", 4, 16384, 100)
	f.image = c.AddImage("rhcos-4.18", "ocp")
	f.net = c.AddNetwork("machines", "cluster-a")
	f.subnet = c.AddSubnet(f.net, "machines-v4", "10.0.0.0/24")
	f.sg = c.AddSecurityGroup("workers", "cluster-a")
	return f
}

// left counts what a server can leave behind.
func (f *fake) left() map[fakeopenstack.Kind]int {
	out := map[fakeopenstack.Kind]int{}
	for _, k := range []fakeopenstack.Kind{fakeopenstack.Servers, fakeopenstack.Ports, fakeopenstack.Trunks, fakeopenstack.Volumes} {
		if n := f.Len(k); n > 0 {
			out[k] = n
		}
	}
	return out
}

// exampleTB lets an Example start the fake, which wants a testing.TB; it
// only needs Helper and Cleanup.
type exampleTB struct {
	testing.TB
	cleanups []func()
}

func (e *exampleTB) Helper()          {}
func (e *exampleTB) Cleanup(f func()) { e.cleanups = append(e.cleanups, f) }
func (e *exampleTB) stop() {
	for i := len(e.cleanups) - 1; i >= 0; i-- {
		e.cleanups[i]()
	}
}

// newClient returns a Client on the fake through clouds.yaml.
func newClient(t *testing.T, f *fake) *instance.Client {
	t.Helper()
	c, err := instance.New(context.Background(), instance.Cloud{CloudsYAML: f.Clouds("openstack"), CloudName: "openstack"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// create calls Create until Done, passing each Result to the next call
// unless lose is set (every result is lost), and returns the last one.
func create(t *testing.T, c *instance.Client, spec instance.Spec, lose bool) *instance.Result {
	t.Helper()
	var res *instance.Result
	for range 20 {
		prev := res
		if lose {
			prev = nil
		}
		var err error
		res, err = c.Create(context.Background(), spec, prev)
		if err != nil {
			t.Fatalf("Create: %v", err)
		}
		if res.Done {
			return res
		}
		if res.RequeueAfter <= 0 {
			t.Fatalf("not done and no RequeueAfter: %+v", res)
		}
	}
	t.Fatalf("Create did not finish in 20 calls: %+v", res)
	return nil
}

// deleteAll calls Delete until Done and returns the number of calls.
func deleteAll(t *testing.T, c *instance.Client, spec instance.Spec, prev *instance.Result) int {
	t.Helper()
	for n := 1; n <= 20; n++ {
		d, err := c.Delete(context.Background(), spec, prev)
		if err != nil {
			t.Fatalf("Delete call %d: %v", n, err)
		}
		if d.Done {
			return n
		}
		if d.RequeueAfter <= 0 {
			t.Fatalf("not done and no RequeueAfter: %+v", d)
		}
	}
	t.Fatal("Delete did not finish in 20 calls")
	return 0
}

// wantError asserts err is an *instance.Error with this reason (and
// field, when given).
func wantError(t *testing.T, err error, reason, field string) *instance.Error {
	t.Helper()
	var e *instance.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T), want an *instance.Error %s", err, err, reason)
	}
	if e.Reason != reason || e.Field != field {
		t.Errorf("reason %q field %q, want %q %q: %v", e.Reason, e.Field, reason, field, e)
	}
	return e
}
