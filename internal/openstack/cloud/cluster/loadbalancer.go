package cluster

import (
	"context"
	"fmt"
	"time"

	lbflavors "github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/flavors"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/listeners"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/monitors"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/pools"
	"k8s.io/utils/ptr"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/clients"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/scope"
)

// lbPoll is how often a load balancer that Octavia is working on is read.
const lbPoll = 3 * time.Second

// UseLoadBalancer reports whether the cluster gets an API load balancer:
// when Octavia is in the catalog and the spec does not disable it.
func (r Request) UseLoadBalancer(s Scope) (bool, error) {
	var lb *infrav1.ManagedLoadBalancer
	if r.Spec.APIServer != nil {
		lb = r.Spec.APIServer.ManagedLoadBalancer
	}
	if lb != nil && !ptr.Deref(lb.Enabled, true) {
		return false, nil
	}
	if s.Clients.LoadBalancer == nil {
		if lb != nil && lb.Enabled != nil && *lb.Enabled {
			return false, terminal(clients.ReasonInvalidSpec, "apiServer.managedLoadBalancer.enabled is true but the cloud has no Octavia (load-balancer) endpoint")
		}
		return false, nil
	}
	return true, nil
}

// ensureLoadBalancer creates the load balancer, then its listeners, pools
// and health monitors, and returns it once ACTIVE with a floating IP on its
// VIP if wanted.
func ensureLoadBalancer(ctx context.Context, s Scope, req Request, net *infrav1.NetworkStatusWithSubnets, ext *infrav1.NetworkStatus, known *infrav1.LoadBalancer) (*infrav1.LoadBalancer, error) {
	name := req.LoadBalancerName()
	var lb *loadbalancers.LoadBalancer
	if known != nil && known.ID != "" {
		got, err := s.Clients.LoadBalancer.GetLoadBalancer(ctx, known.ID)
		if err != nil {
			if e := clients.Classify(err, "reading load balancer "+name); e.Reason != clients.ReasonNotFound {
				return known, e
			}
		} else {
			lb = got
		}
	}
	if lb == nil {
		list, err := s.Clients.LoadBalancer.ListLoadBalancers(ctx, loadbalancers.ListOpts{Name: name, ProjectID: s.Clients.ProjectID})
		if err != nil {
			return known, clients.Classify(err, "looking up load balancer "+name)
		}
		switch len(list) {
		case 0:
			// A load balancer recreated after it vanished keeps the old
			// VIP when that is the endpoint (no floating IP in front of
			// it): the endpoint is in every kubeconfig and certificate.
			vip := ""
			if known != nil && !req.floatingIPWanted(ext) {
				vip = known.InternalIP
			}
			created, err := createLoadBalancer(ctx, s, req, net, vip)
			if err != nil {
				return known, err
			}
			s.Log.Info("Created load balancer", "loadBalancer", name, "id", created.ID)
			return lbStatus(req, created), scope.Wait(infrav1.LoadBalancerPendingReason, lbPoll, "Octavia is creating load balancer %s", name)
		case 1:
			lb = &list[0]
		default:
			return known, terminal(clients.ReasonAmbiguous, "%d load balancers are named %q; delete the extra ones", len(list), name)
		}
	}
	status := lbStatus(req, lb)
	switch lb.ProvisioningStatus {
	case "ACTIVE":
	case "ERROR":
		return status, terminal(clients.ReasonInvalidSpec, "load balancer %s is in ERROR in Octavia; delete it to have it recreated", name)
	default:
		return status, scope.Wait(infrav1.LoadBalancerPendingReason, lbPoll, "load balancer %s is %s", name, lb.ProvisioningStatus)
	}
	// Listeners, pools and monitors one at a time: Octavia locks the load
	// balancer while it applies each change (and some drivers leave the
	// children of a single-call create pending).
	if err := ensureListenersAndPools(ctx, s, req, lb.ID); err != nil {
		return status, err
	}

	if req.floatingIPWanted(ext) {
		var want string
		if a := req.Spec.APIServer; a != nil {
			want = ptr.Deref(a.FloatingIP, "")
		}
		fip, err := EnsureFloatingIP(ctx, s, req, ext.ID, want, req.APIFloatingIPDescription(), lb.VipPortID)
		if err != nil {
			return status, err
		}
		if status != nil {
			status.IP = fip.FloatingIP
		}
	}
	return status, nil
}

// lbStatus is the status of a load balancer; nil until Octavia has given
// it a VIP (the status fields are required).
func lbStatus(req Request, lb *loadbalancers.LoadBalancer) *infrav1.LoadBalancer {
	if lb.VipAddress == "" {
		return nil
	}
	st := &infrav1.LoadBalancer{Name: lb.Name, ID: lb.ID, IP: lb.VipAddress, InternalIP: lb.VipAddress, Tags: lb.Tags}
	if a := req.Spec.APIServer; a != nil && a.ManagedLoadBalancer != nil {
		st.AllowedCIDRs = a.ManagedLoadBalancer.AllowedCIDRs
	}
	return st
}

func createLoadBalancer(ctx context.Context, s Scope, req Request, net *infrav1.NetworkStatusWithSubnets, vip string) (*loadbalancers.LoadBalancer, error) {
	name := req.LoadBalancerName()
	mlb := &infrav1.ManagedLoadBalancer{}
	if a := req.Spec.APIServer; a != nil && a.ManagedLoadBalancer != nil {
		mlb = a.ManagedLoadBalancer
	}
	opts := loadbalancers.CreateOpts{Name: name, Description: fmt.Sprintf("API of cluster %s/%s (ocp-capi)", req.Namespace, req.Name),
		Provider: ptr.Deref(mlb.Provider, ""), Tags: req.Spec.Tags}
	switch {
	case len(mlb.Subnets) > 0 && mlb.Subnets[0].ID != nil:
		opts.VipSubnetID = *mlb.Subnets[0].ID
	case mlb.Network != nil && mlb.Network.ID != nil:
		opts.VipNetworkID = *mlb.Network.ID
	case net != nil && len(net.Subnets) > 0:
		opts.VipSubnetID = net.Subnets[0].ID
	default:
		return nil, terminal(clients.ReasonInvalidSpec, "the load balancer needs a subnet: the cluster has no network, so set apiServer.managedLoadBalancer.subnets (by id)")
	}
	opts.VipAddress = vip
	if a := req.Spec.APIServer; a != nil && a.FixedIP != nil {
		opts.VipAddress = *a.FixedIP
	}
	if mlb.Flavor != nil && *mlb.Flavor != "" {
		id, err := loadBalancerFlavorID(ctx, s, *mlb.Flavor)
		if err != nil {
			return nil, err
		}
		opts.FlavorID = id
	}
	// Octavia checks the availability zone itself (400 "Invalid
	// availability zone."), so it is passed as is.
	opts.AvailabilityZone = ptr.Deref(mlb.AvailabilityZone, "")
	lb, err := s.Clients.LoadBalancer.CreateLoadBalancer(ctx, opts)
	if err != nil {
		return nil, clients.Classify(err, "creating load balancer "+name)
	}
	return lb, nil
}

// loadBalancerFlavorID is the ID of the enabled Octavia flavor named name
// (a flavor is chosen by name, as in CAPO; Octavia's API takes its ID).
func loadBalancerFlavorID(ctx context.Context, s Scope, name string) (string, error) {
	list, err := s.Clients.LoadBalancer.ListFlavors(ctx, lbflavors.ListOpts{Name: name})
	if err != nil {
		return "", clients.Classify(err, "looking up load balancer flavor "+name)
	}
	var ids []string
	for _, f := range list {
		if f.Name == name && f.Enabled {
			ids = append(ids, f.ID)
		}
	}
	switch len(ids) {
	case 0:
		return "", terminal(clients.ReasonNotFound, "no enabled load balancer flavor is named %q (apiServer.managedLoadBalancer.flavor); see `openstack loadbalancer flavor list`", name)
	case 1:
		return ids[0], nil
	}
	return "", terminal(clients.ReasonAmbiguous, "%d load balancer flavors are named %q", len(ids), name)
}

// ForwardedPorts are the ports the API load balancer forwards, each with a
// listener and a pool named after it: the API port and the additional ones.
func (r Request) ForwardedPorts() []int {
	ports := []int{r.APIPort()}
	if a := r.Spec.APIServer; a != nil && a.ManagedLoadBalancer != nil {
		for _, p := range a.ManagedLoadBalancer.AdditionalPorts {
			ports = append(ports, int(p))
		}
	}
	return ports
}

// PoolPort returns the port a pool forwards, read from its name
// (<load balancer>-<port>), or 0.
func PoolPort(req Request, poolName string) int {
	var p int
	if _, err := fmt.Sscanf(poolName, req.LoadBalancerName()+"-%d", &p); err != nil {
		return 0
	}
	return p
}

// ensureListenersAndPools creates the first missing listener, pool or
// health monitor and returns a Progress (the load balancer is busy until
// Octavia applies it); nil once all exist. Calls: one list of listeners
// and one of pools per pass.
func ensureListenersAndPools(ctx context.Context, s Scope, req Request, lbID string) error {
	name := req.LoadBalancerName()
	mlb := &infrav1.ManagedLoadBalancer{}
	if a := req.Spec.APIServer; a != nil && a.ManagedLoadBalancer != nil {
		mlb = a.ManagedLoadBalancer
	}
	ls, err := s.Clients.LoadBalancer.ListListeners(ctx, listeners.ListOpts{LoadbalancerID: lbID})
	if err != nil {
		return clients.Classify(err, "listing the listeners of "+name)
	}
	byPort := map[int]listeners.Listener{}
	for _, l := range ls {
		byPort[l.ProtocolPort] = l
	}
	busy := func(what string) error {
		return scope.Wait(infrav1.LoadBalancerPendingReason, lbPoll, "Octavia is creating the %s of load balancer %s", what, name)
	}
	for _, p := range req.ForwardedPorts() {
		if _, ok := byPort[p]; ok {
			continue
		}
		_, err := s.Clients.LoadBalancer.CreateListener(ctx, listeners.CreateOpts{LoadbalancerID: lbID,
			Name: fmt.Sprintf("%s-%d", name, p), Protocol: listeners.ProtocolTCP, ProtocolPort: p, AllowedCIDRs: mlb.AllowedCIDRs})
		if err != nil {
			return clients.Classify(err, fmt.Sprintf("creating listener %d of %s", p, name))
		}
		return busy(fmt.Sprintf("listener on port %d", p))
	}
	ps, err := s.Clients.LoadBalancer.ListPools(ctx, pools.ListOpts{LoadbalancerID: lbID})
	if err != nil {
		return clients.Classify(err, "listing the pools of "+name)
	}
	byName := map[string]pools.Pool{}
	for _, p := range ps {
		byName[p.Name] = p
	}
	for _, port := range req.ForwardedPorts() {
		pn := fmt.Sprintf("%s-%d", name, port)
		pool, ok := byName[pn]
		if !ok {
			_, err := s.Clients.LoadBalancer.CreatePool(ctx, pools.CreateOpts{ListenerID: byPort[port].ID, Name: pn,
				Protocol: pools.ProtocolTCP, LBMethod: pools.LBMethodRoundRobin})
			if err != nil {
				return clients.Classify(err, "creating pool "+pn)
			}
			return busy("pool " + pn)
		}
		if pool.MonitorID == "" {
			mon := monitors.CreateOpts{PoolID: pool.ID, Name: pn, Type: monitors.TypeTCP, Delay: 10, Timeout: 5, MaxRetries: 5, MaxRetriesDown: 3}
			if m := mlb.Monitor; m != nil {
				if m.Delay > 0 {
					mon.Delay = int(m.Delay)
				}
				if m.Timeout > 0 {
					mon.Timeout = int(m.Timeout)
				}
				if m.MaxRetries > 0 {
					mon.MaxRetries = int(m.MaxRetries)
				}
				if m.MaxRetriesDown > 0 {
					mon.MaxRetriesDown = int(m.MaxRetriesDown)
				}
			}
			if _, err := s.Clients.LoadBalancer.CreateMonitor(ctx, mon); err != nil {
				return clients.Classify(err, "creating the health monitor of pool "+pn)
			}
			return busy("health monitor of pool " + pn)
		}
	}
	return nil
}
