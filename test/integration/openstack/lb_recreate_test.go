package openstack

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/pools"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	capiconditions "sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
)

// poolMembers is, for each pool of load balancer lbID, the sorted names of
// its members.
func poolMembers(lbc *gophercloud.ServiceClient, lbID string) (map[string][]string, error) {
	ctx := context.Background()
	pp, err := pools.List(lbc, pools.ListOpts{LoadbalancerID: lbID}).AllPages(ctx)
	if err != nil {
		return nil, err
	}
	pl, err := pools.ExtractPools(pp)
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, p := range pl {
		mp, err := pools.ListMembers(lbc, p.ID, pools.ListMembersOpts{}).AllPages(ctx)
		if err != nil {
			return nil, err
		}
		ml, err := pools.ExtractMembers(mp)
		if err != nil {
			return nil, err
		}
		names := []string{}
		for _, m := range ml {
			names = append(names, m.Name)
		}
		sort.Strings(names)
		out[p.Name] = names
	}
	return out, nil
}

// readyHistory records, for every stored version of the objects of one
// kind in a namespace, the status of condition t, by object name.
type readyHistory struct {
	mu  sync.Mutex
	seq map[string][]metav1.ConditionStatus
}

func watchCondition(t *testing.T, ns string, list client.ObjectList, cond string) *readyHistory {
	t.Helper()
	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	w, err := wc.Watch(context.Background(), list, client.InNamespace(ns))
	if err != nil {
		t.Fatal(err)
	}
	h := &readyHistory{seq: map[string][]metav1.ConditionStatus{}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			if ev.Type != watch.Modified {
				continue
			}
			obj, ok := ev.Object.(interface {
				client.Object
				capiconditions.Getter
			})
			if !ok {
				continue
			}
			st := metav1.ConditionUnknown
			if c := capiconditions.Get(obj, cond); c != nil {
				st = c.Status
			}
			h.mu.Lock()
			h.seq[obj.GetName()] = append(h.seq[obj.GetName()], st)
			h.mu.Unlock()
		}
	}()
	t.Cleanup(func() { w.Stop(); <-done })
	return h
}

func (h *readyHistory) of(name string) []metav1.ConditionStatus {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.seq[name])
}

// TestRecreatedLoadBalancerGetsMembers: the cluster's API load balancer is
// deleted out of band (an operator, an Octavia failover gone wrong). The
// cluster recreates it with its listeners, pools and monitors, and the
// control-plane machines must follow: they join both pools of the new load
// balancer (API and machine-config ports). While a machine is not a member
// of the load balancer in place, its APIServerIngressReady (and so its
// Ready) must not say True: at no time may a machine claim membership of
// the current load balancer while a pool of it lacks the machine, and each
// machine's condition must have left True after the deletion.
func TestRecreatedLoadBalancerGetsMembers(t *testing.T) {
	RegisterTestingT(t)
	startManager(t)
	lbc := loadBalancerClient(t)
	if lbc == nil {
		msg := "the local cloud has no Octavia (load-balancer) endpoint"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	ns := newNamespace(t)
	name := fx.prefix + "-lbr"
	t.Cleanup(func() { expectNoClusterLeftovers(t, ns, name) })
	ctx := context.Background()

	spec := managedClusterSpec()
	spec.APIServer = &infrav1.APIServer{ManagedLoadBalancer: &infrav1.ManagedLoadBalancer{AdditionalPorts: []int32{22623}}}
	c, osc := clusterObjects(t, ns, name, spec)
	waitClusterReady(t, osc)
	Expect(osc.Status.APIServerLoadBalancer).NotTo(BeNil(), "the local cloud has Octavia; the endpoint must be the load balancer")
	markInfrastructureProvisioned(t, c)

	machines := []*infrav1.OpenStackMachine{cpMachine(t, ns, name, name+"-cp-0"), cpMachine(t, ns, name, name+"-cp-1")}
	var want []string
	for _, m := range machines {
		waitMachineReady(t, m)
		want = append(want, m.Name)
	}
	sort.Strings(want)
	oldID := osc.Status.APIServerLoadBalancer.ID
	before, err := poolMembers(lbc, oldID)
	Expect(err).NotTo(HaveOccurred())
	Expect(before).To(HaveLen(2), "one pool per forwarded port")
	for p, ms := range before {
		Expect(ms).To(Equal(want), "pool %s before the deletion", p)
	}

	membership := watchCondition(t, ns, &infrav1.OpenStackMachineList{}, infrav1.APIServerIngressReadyCondition)

	// A sampler checks the invariant while the load balancer is rebuilt:
	// a machine that says it is behind load balancer X (True, with X
	// recorded) is in every pool of X. It reads the machine first: a
	// machine records X only after its members were created.
	var violations []string
	var vmu sync.Mutex
	stop := make(chan struct{})
	sampled := make(chan struct{})
	// The keys are taken now: the test goroutine writes the machines
	// themselves (their decoding would race with the sampler's reads).
	keys := make([]client.ObjectKey, 0, len(machines))
	for _, m := range machines {
		keys = append(keys, client.ObjectKeyFromObject(m))
	}
	go func() {
		defer close(sampled)
		for {
			select {
			case <-stop:
				return
			case <-time.After(500 * time.Millisecond):
			}
			for _, key := range keys {
				cur := &infrav1.OpenStackMachine{}
				if err := env.Client.Get(ctx, key, cur); err != nil {
					continue
				}
				id := ptr.Deref(cur.Status.APIServerLoadBalancerID, "")
				if id == "" || id == oldID || !capiconditions.IsTrue(cur, infrav1.APIServerIngressReadyCondition) {
					continue
				}
				members, err := poolMembers(lbc, id)
				if err != nil {
					continue // the load balancer may be gone again; not this check's business
				}
				for p, ms := range members {
					if !slices.Contains(ms, cur.Name) {
						vmu.Lock()
						violations = append(violations, fmt.Sprintf("%s says APIServerIngressReady True for load balancer %s, but pool %s has only %v",
							cur.Name, id, p, ms))
						vmu.Unlock()
					}
				}
			}
		}
	}()
	defer func() { close(stop); <-sampled }()

	// Delete the load balancer out of band, with everything in it. Octavia
	// refuses (409) while the load balancer is PENDING_* (a member still
	// being added), as it would refuse a user: try again until it takes.
	Eventually(func() error {
		err := loadbalancers.Delete(ctx, lbc, oldID, loadbalancers.DeleteOpts{Cascade: true}).ExtractErr()
		if err != nil && !gophercloud.ResponseCodeIs(err, 409) {
			StopTrying("deleting the load balancer").Wrap(err).Now()
		}
		return err
	}, 2*wait, time.Second).Should(Succeed(), "Octavia did not take the delete")
	Eventually(func() bool {
		_, err := loadbalancers.Get(ctx, lbc, oldID).Extract()
		return gophercloud.ResponseCodeIs(err, 404)
	}, 2*wait, time.Second).Should(BeTrue(), "Octavia did not delete the load balancer")
	// The cluster notices at its next resync; bring that resync now.
	annotateToReconcile(t, osc)

	var newID string
	Eventually(func(g Gomega) {
		get(t, osc)(g)
		g.Expect(osc.Status.APIServerLoadBalancer).NotTo(BeNil())
		newID = osc.Status.APIServerLoadBalancer.ID
		g.Expect(newID).NotTo(Equal(oldID), "the load balancer was not recreated")
		g.Expect(capiconditions.IsTrue(osc, infrav1.APIEndpointReadyCondition)).To(BeTrue(), "APIEndpointReady: %s", condition(osc, infrav1.APIEndpointReadyCondition))
		members, err := poolMembers(lbc, newID)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(members).To(HaveLen(2), "pools of the new load balancer")
		var states []string
		for _, m := range machines {
			get(t, m)(g)
			states = append(states, fmt.Sprintf("%s Ready %s, APIServerIngressReady %s", m.Name,
				condition(m, infrav1.ReadyCondition), condition(m, infrav1.APIServerIngressReadyCondition)))
		}
		for p, ms := range members {
			g.Expect(ms).To(Equal(want), "pool %s of the new load balancer; cluster Ready %s; %v", p, condition(osc, infrav1.ReadyCondition), states)
		}
		for _, m := range machines {
			g.Expect(capiconditions.IsTrue(m, infrav1.ReadyCondition)).To(BeTrue(), "%v", states)
			g.Expect(ptr.Deref(m.Status.APIServerLoadBalancerID, "")).To(Equal(newID), "%s records the load balancer it joined", m.Name)
		}
	}, 4*wait, time.Second).Should(Succeed())

	vmu.Lock()
	Expect(violations).To(BeEmpty())
	vmu.Unlock()
	// While the machines were not members of the new load balancer, their
	// condition said so: each left True at some point after the deletion.
	for _, m := range machines {
		Expect(membership.of(m.Name)).To(ContainElement(Not(Equal(metav1.ConditionTrue))),
			"%s: APIServerIngressReady stayed True while the load balancer was rebuilt", m.Name)
	}

	// Steady again: a resync of a machine makes no OpenStack call.
	calls, writes := steadyResync(t, machines[0])
	Expect(calls).To(BeZero(), "OpenStack calls of a steady control-plane machine's resync")
	Expect(writes).To(BeZero())
}
