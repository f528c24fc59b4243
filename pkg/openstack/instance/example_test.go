package instance_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/ocp-capi/ocp-capi/pkg/openstack/instance"
)

// An actuator creates a machine's instance, reads the result, and deletes
// it. Here the cloud is the in-memory fake; with a real one, CloudsYAML
// comes from the machine's credentials Secret.
func Example() {
	tb := &exampleTB{}
	cloud := startFake(tb)
	ctx := context.Background()

	// One Client per cloud: it keeps the authenticated clients.
	c, err := instance.New(ctx, instance.Cloud{CloudsYAML: cloud.Clouds("openstack"), CloudName: "openstack"})
	if err != nil {
		log.Fatal(err)
	}

	spec := instance.Spec{
		Name:           "cluster-a-worker-0",
		Image:          instance.Ref{Name: "rhcos-4.18"},
		Flavor:         instance.Ref{Name: "m1.large"},
		Ports:          []instance.Port{{Network: instance.Ref{Name: "machines"}}},
		SecurityGroups: []instance.Ref{{Name: "workers"}},
		Tags:           []string{"cluster-a"},
		UserData:       []byte(`{"ignition":{"version":"3.2.0"}}`),
	}

	// Create until Done. An actuator returns after each call and asks to
	// be called again after res.RequeueAfter; this example just calls
	// again. Passing res back saves calls; losing it duplicates nothing.
	var res *instance.Result
	for res == nil || !res.Done {
		res, err = c.Create(ctx, spec, res)
		var e *instance.Error
		if errors.As(err, &e) && e.Transient {
			continue // an actuator requeues after e.RetryAfter, or with backoff
		}
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("state %s, waiting: %q\n", res.State, res.Waiting)
	}
	fmt.Println("id:", res.ID)
	fmt.Println("ports:", res.Ports[0].Name)
	for _, a := range res.Addresses {
		fmt.Println("address:", a.Type, a.Address)
	}

	// Delete until Done. It needs no Result: the names find everything.
	for {
		d, err := c.Delete(ctx, spec, res)
		if err != nil {
			log.Fatal(err)
		}
		if d.Done {
			break
		}
		fmt.Println("deleting:", d.Waiting)
	}
	fmt.Println("deleted")
	tb.stop()

	// Output:
	// state BUILD, waiting: "Nova is building the server"
	// state BUILD, waiting: "Nova is building the server"
	// state ACTIVE, waiting: ""
	// id: 00000000-0000-4000-8000-000000000008
	// ports: cluster-a-worker-0-0
	// address: InternalIP 10.0.0.10
	// address: InternalDNS cluster-a-worker-0
	// deleting: waiting for Nova to delete server cluster-a-worker-0
	// deleted
}
