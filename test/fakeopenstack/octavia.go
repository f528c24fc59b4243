package fakeopenstack

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// Octavia: load balancers, listeners, pools, members and health monitors
// (API v2, under /load-balancer/v2.0/lbaas and /load-balancer/v2/lbaas).
//
// Octavia works asynchronously. A create, or any change under a load
// balancer, answers at once with the object in PENDING_CREATE (the load
// balancer in PENDING_UPDATE), and the load balancer is immutable (409)
// until the change is applied. Here a change is applied after lbSteps
// further Octavia requests have been answered (SetLoadBalancerSteps,
// default 1), so the first look after a create sees PENDING_CREATE and
// the next one ACTIVE; never on a timer. docs/openstack/fake-cloud.md
// lists each behaviour with the Octavia API reference section it mirrors.

// lbOp is the change Octavia is applying to one load balancer.
type lbOp struct {
	left int    // requests to answer before it is applied
	done func() // applies it
}

// SetLoadBalancerSteps sets how many Octavia requests are answered while
// a change to a load balancer is pending, before it is applied.
func (c *Cloud) SetLoadBalancerSteps(n int) { c.locked(func() { c.lbSteps = n }) }

// DisableService makes every request under a service's endpoint answer
// 404 while the catalog still lists it, as a cloud whose catalog names a
// service that is not deployed ("load-balancer", ...).
func (c *Cloud) DisableService(serviceType string) {
	c.locked(func() { c.disabled[serviceType] = true })
}

// servicePrefix is the path prefix of a service type.
var servicePrefix = map[string]string{
	"load-balancer": "/load-balancer/", "network": "/network/", "compute": "/compute/",
	"image": "/image/", "block-storage": "/volume/",
}

func (c *Cloud) disabledPath(path string) bool {
	for typ := range c.disabled {
		if strings.HasPrefix(path, servicePrefix[typ]) {
			return true
		}
	}
	return false
}

// octaviaError is Octavia's error format.
func octaviaError(status int, format string, args ...any) *apiError {
	return &apiError{status, object{"faultcode": faultcode(status), "faultstring": fmt.Sprintf(format, args...), "debuginfo": nil}}
}

func faultcode(status int) string {
	if status >= 500 {
		return "Server"
	}
	return "Client"
}

func lbNotFound(what, id string) *apiError {
	return octaviaError(http.StatusNotFound, "%s %s not found.", what, id)
}

func immutable(lb object) *apiError {
	return octaviaError(http.StatusConflict, "Load Balancer %s is immutable and cannot be updated.", lb["id"])
}

// advanceLoadBalancers is run before each Octavia request: pending changes
// count down, and those due are applied.
func (c *Cloud) advanceLoadBalancers() {
	ids := make([]string, 0, len(c.lbOps))
	for id := range c.lbOps {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		op := c.lbOps[id]
		if op.left > 0 {
			op.left--
			continue
		}
		delete(c.lbOps, id)
		op.done()
	}
}

// pend starts a change on lb: lb goes to status (PENDING_*), and
// applying it runs done and sets lb ACTIVE (unless done removed it).
func (c *Cloud) pend(lb object, status string, done func()) {
	lb["provisioning_status"] = status
	c.lbOps[str(lb["id"])] = &lbOp{left: c.lbSteps, done: func() {
		done()
		if c.get(LoadBalancers, str(lb["id"])) != nil {
			lb["provisioning_status"], lb["operating_status"] = "ACTIVE", "ONLINE"
		}
	}}
}

// mutable returns the load balancer if it may change now.
func (c *Cloud) mutable(lbID string) (object, *apiError) {
	lb := c.get(LoadBalancers, lbID)
	if lb == nil {
		return nil, lbNotFound("Load Balancer", lbID)
	}
	if lb["provisioning_status"] != "ACTIVE" {
		return nil, immutable(lb)
	}
	return lb, nil
}

func octaviaObject(in object, keys ...string) object {
	o := object{"project_id": ProjectID, "tenant_id": ProjectID, "admin_state_up": true, "tags": []string{},
		"description": "", "name": "", "provisioning_status": "PENDING_CREATE", "operating_status": "OFFLINE"}
	for _, k := range keys {
		if v, ok := in[k]; ok && v != nil {
			o[k] = v
		}
	}
	o["tags"] = strings0(strs(o["tags"]))
	return o
}

func ids(id ...string) []object {
	out := []object{}
	for _, i := range id {
		out = append(out, object{"id": i})
	}
	return out
}

// lbOf is the load balancer a child belongs to.
func lbOf(o object) string {
	if l := list(o["loadbalancers"]); len(l) > 0 {
		return str(l[0].(object)["id"])
	}
	if l, ok := o["loadbalancers"].([]object); ok && len(l) > 0 {
		return str(l[0]["id"])
	}
	return ""
}

func (c *Cloud) children(kind Kind, lbID string) []object {
	var out []object
	for _, o := range c.objs[kind] {
		if lbOf(o) == lbID {
			out = append(out, o)
		}
	}
	return out
}

// listOctavia lists a collection with Octavia's filters: any attribute,
// and loadbalancer_id for children.
func (c *Cloud) listOctavia(kind Kind) func(*http.Request) (int, any, *apiError) {
	return func(r *http.Request) (int, any, *apiError) {
		q := r.URL.Query()
		lbID, byLB := q["loadbalancer_id"]
		q.Del("loadbalancer_id")
		out := []object{}
		for _, o := range c.objs[kind] {
			if byLB && !slices.Contains(lbID, lbOf(o)) {
				continue
			}
			if matches(o, q) {
				out = append(out, o)
			}
		}
		return http.StatusOK, object{string(kind): out, string(kind) + "_links": []any{}}, nil
	}
}

func (c *Cloud) getOctavia(kind Kind, what string) func(*http.Request) (int, any, *apiError) {
	return func(r *http.Request) (int, any, *apiError) {
		o := c.get(kind, r.PathValue("id"))
		if o == nil {
			return 0, nil, lbNotFound(what, r.PathValue("id"))
		}
		return http.StatusOK, object{singular(kind): o}, nil
	}
}

func (c *Cloud) createLoadBalancer(r *http.Request) (int, any, *apiError) {
	var req struct{ Loadbalancer object }
	if err := decode(r, &req); err != nil {
		return 0, nil, err
	}
	in := req.Loadbalancer
	lb := octaviaObject(in, "name", "description", "tags", "provider")
	if lb["provider"] == nil || lb["provider"] == "" {
		lb["provider"] = "amphora"
	}
	if p := str(lb["provider"]); p != "amphora" && p != "octavia" && p != "ovn" {
		return 0, nil, octaviaError(http.StatusBadRequest, "Provider '%s' is not enabled.", p)
	}
	var netID, subnetID string
	switch {
	case str(in["vip_subnet_id"]) != "":
		subnetID = str(in["vip_subnet_id"])
		s := c.get(Subnets, subnetID)
		if s == nil {
			return 0, nil, octaviaError(http.StatusBadRequest, "Subnet %s not found.", subnetID)
		}
		netID = str(s["network_id"])
	case str(in["vip_network_id"]) != "":
		netID = str(in["vip_network_id"])
		n := c.get(Networks, netID)
		if n == nil {
			return 0, nil, octaviaError(http.StatusBadRequest, "Network %s not found.", netID)
		}
		if subs := strs(n["subnets"]); len(subs) > 0 {
			subnetID = subs[0]
		} else {
			return 0, nil, octaviaError(http.StatusBadRequest, "Validation failure: Supplied network does not contain a subnet.")
		}
	default:
		return 0, nil, octaviaError(http.StatusBadRequest, "Validation failure: VIP must contain one of: vip_port_id, vip_network_id, vip_subnet_id.")
	}
	// A flavor or availability zone must exist and be enabled.
	fl, az := str(in["flavor_id"]), str(in["availability_zone"])
	if fl != "" && !c.enabled(LBFlavors, "id", fl) {
		return 0, nil, octaviaError(http.StatusBadRequest, "Validation failure: Invalid flavor_id.")
	}
	if az != "" && !c.enabled(LBAvailabilityZones, "name", az) {
		return 0, nil, octaviaError(http.StatusBadRequest, "Validation failure: Invalid availability zone.")
	}
	id := c.newID()
	// Octavia allocates the VIP as a Neutron port of the project.
	fixed := object{"subnet_id": subnetID}
	if a := str(in["vip_address"]); a != "" {
		fixed["ip_address"] = a
	}
	port, perr := c.newPort(object{"network_id": netID, "name": "octavia-lb-" + id, "device_owner": "Octavia",
		"device_id": "lb-" + id, "fixed_ips": []any{fixed}})
	if perr != nil {
		return 0, nil, octaviaError(perr.status, "%s", perr.body["NeutronError"].(object)["message"])
	}
	portID := c.add(Ports, port)
	lb["id"] = id
	lb["vip_address"] = list(port["fixed_ips"])[0].(object)["ip_address"]
	lb["vip_port_id"], lb["vip_subnet_id"], lb["vip_network_id"] = portID, subnetID, netID
	lb["listeners"], lb["pools"], lb["flavor_id"], lb["availability_zone"] = []object{}, []object{}, fl, az
	c.add(LoadBalancers, lb)
	c.pend(lb, "PENDING_CREATE", func() {})
	return http.StatusCreated, object{"loadbalancer": lb}, nil
}

// deleteLoadBalancer deletes a load balancer; with ?cascade=true its
// children go with it, else it must have none. Its VIP port goes too.
func (c *Cloud) deleteLoadBalancer(r *http.Request) (int, any, *apiError) {
	id := r.PathValue("id")
	lb := c.get(LoadBalancers, id)
	if lb == nil {
		return 0, nil, lbNotFound("Load Balancer", id)
	}
	if s := lb["provisioning_status"]; s != "ACTIVE" && s != "ERROR" {
		return 0, nil, immutable(lb)
	}
	cascade := r.URL.Query().Get("cascade") == "true"
	if !cascade && (len(c.children(Listeners, id)) > 0 || len(c.children(Pools, id)) > 0) {
		return 0, nil, octaviaError(http.StatusBadRequest, "Validation failure: Cannot delete Load Balancer %s - it has children", id)
	}
	c.pend(lb, "PENDING_DELETE", func() {
		for _, p := range c.children(Pools, id) {
			c.objs[Members] = slices.DeleteFunc(c.objs[Members], func(m object) bool { return m["pool_id"] == p["id"] })
		}
		for _, k := range []Kind{Listeners, Pools, HealthMonitors} {
			c.objs[k] = slices.DeleteFunc(c.objs[k], func(o object) bool { return lbOf(o) == id })
		}
		c.remove(Ports, str(lb["vip_port_id"]))
		c.remove(LoadBalancers, id)
	})
	return http.StatusNoContent, nil, nil
}

// child starts creating a child of lbID: the child is PENDING_CREATE and
// the load balancer PENDING_UPDATE until applied, then both are ACTIVE.
func (c *Cloud) child(kind Kind, lb, o object, apply func()) {
	c.add(kind, o)
	c.pend(lb, "PENDING_UPDATE", func() {
		apply()
		o["provisioning_status"], o["operating_status"] = "ACTIVE", "ONLINE"
	})
}

func (c *Cloud) createListener(r *http.Request) (int, any, *apiError) {
	var req struct{ Listener object }
	if err := decode(r, &req); err != nil {
		return 0, nil, err
	}
	in := req.Listener
	lbID := str(in["loadbalancer_id"])
	if lbID == "" {
		return 0, nil, octaviaError(http.StatusBadRequest, "Invalid input for field/attribute loadbalancer_id. Value: 'None'. Mandatory field missing.")
	}
	switch str(in["protocol"]) {
	case "TCP", "UDP", "HTTP", "HTTPS", "TERMINATED_HTTPS", "SCTP", "PROMETHEUS":
	default:
		return 0, nil, octaviaError(http.StatusBadRequest, "Invalid input for field/attribute protocol. Value: '%s'.", str(in["protocol"]))
	}
	port := num(in["protocol_port"])
	if port < 1 || port > 65535 {
		return 0, nil, octaviaError(http.StatusBadRequest, "Invalid input for field/attribute protocol_port. Value: '%d'.", port)
	}
	lb, err := c.mutable(lbID)
	if err != nil {
		return 0, nil, err
	}
	for _, l := range c.children(Listeners, lbID) {
		if num(l["protocol_port"]) == port && l["protocol"] == in["protocol"] {
			return 0, nil, octaviaError(http.StatusConflict,
				"Another Listener on this Load Balancer is already using protocol %s and protocol_port %d", in["protocol"], port)
		}
	}
	l := octaviaObject(in, "name", "description", "tags", "protocol", "allowed_cidrs")
	l["protocol_port"], l["loadbalancers"], l["default_pool_id"] = port, ids(lbID), nil
	if l["allowed_cidrs"] == nil {
		l["allowed_cidrs"] = nil
	}
	l["id"] = c.newID()
	c.child(Listeners, lb, l, func() {})
	lb["listeners"] = append(lb["listeners"].([]object), object{"id": l["id"]})
	return http.StatusCreated, object{"listener": l}, nil
}

func (c *Cloud) createPool(r *http.Request) (int, any, *apiError) {
	var req struct{ Pool object }
	if err := decode(r, &req); err != nil {
		return 0, nil, err
	}
	in := req.Pool
	listenerID, lbID := str(in["listener_id"]), str(in["loadbalancer_id"])
	var listener object
	switch {
	case listenerID != "":
		if listener = c.get(Listeners, listenerID); listener == nil {
			return 0, nil, lbNotFound("Listener", listenerID)
		}
		lbID = lbOf(listener)
	case lbID == "":
		return 0, nil, octaviaError(http.StatusBadRequest, "Validation failure: Either a loadbalancer_id or a listener_id must be provided.")
	}
	switch str(in["lb_algorithm"]) {
	case "ROUND_ROBIN", "LEAST_CONNECTIONS", "SOURCE_IP", "SOURCE_IP_PORT":
	default:
		return 0, nil, octaviaError(http.StatusBadRequest, "Invalid input for field/attribute lb_algorithm. Value: '%s'.", str(in["lb_algorithm"]))
	}
	lb, err := c.mutable(lbID)
	if err != nil {
		return 0, nil, err
	}
	if listener != nil && listener["default_pool_id"] != nil {
		return 0, nil, octaviaError(http.StatusConflict, "Pool %s is already the default pool of listener %s.", listener["default_pool_id"], listenerID)
	}
	p := octaviaObject(in, "name", "description", "tags", "protocol", "lb_algorithm")
	p["id"] = c.newID()
	p["loadbalancers"], p["listeners"], p["members"], p["healthmonitor_id"], p["session_persistence"] = ids(lbID), []object{}, []object{}, nil, nil
	if listener != nil {
		p["listeners"] = ids(listenerID)
		listener["default_pool_id"] = p["id"]
	}
	c.child(Pools, lb, p, func() {})
	lb["pools"] = append(lb["pools"].([]object), object{"id": p["id"]})
	return http.StatusCreated, object{"pool": p}, nil
}

func (c *Cloud) pool(r *http.Request) (object, *apiError) {
	p := c.get(Pools, r.PathValue("pool"))
	if p == nil {
		return nil, lbNotFound("Pool", r.PathValue("pool"))
	}
	return p, nil
}

func (c *Cloud) listMembers(r *http.Request) (int, any, *apiError) {
	p, err := c.pool(r)
	if err != nil {
		return 0, nil, err
	}
	out := []object{}
	for _, m := range c.objs[Members] {
		if m["pool_id"] == p["id"] && matches(m, r.URL.Query()) {
			out = append(out, m)
		}
	}
	return http.StatusOK, object{"members": out, "members_links": []any{}}, nil
}

func (c *Cloud) createMember(r *http.Request) (int, any, *apiError) {
	p, err := c.pool(r)
	if err != nil {
		return 0, nil, err
	}
	var req struct{ Member object }
	if err := decode(r, &req); err != nil {
		return 0, nil, err
	}
	in := req.Member
	addr, port := str(in["address"]), num(in["protocol_port"])
	if addr == "" || port < 1 || port > 65535 {
		return 0, nil, octaviaError(http.StatusBadRequest, "Invalid input for field/attribute address or protocol_port.")
	}
	if s := str(in["subnet_id"]); s != "" && c.get(Subnets, s) == nil {
		return 0, nil, octaviaError(http.StatusBadRequest, "Subnet %s not found.", s)
	}
	lb, err := c.mutable(lbOf(p))
	if err != nil {
		return 0, nil, err
	}
	for _, m := range c.objs[Members] {
		if m["pool_id"] == p["id"] && m["address"] == addr && num(m["protocol_port"]) == port {
			return 0, nil, octaviaError(http.StatusConflict, "Another member on this pool is already using ip %s on protocol_port %d", addr, port)
		}
	}
	m := octaviaObject(in, "name", "tags", "address", "subnet_id", "weight", "backup")
	m["id"], m["pool_id"], m["protocol_port"], m["operating_status"] = c.newID(), p["id"], port, "NO_MONITOR"
	if m["weight"] == nil {
		m["weight"] = 1
	}
	c.child(Members, lb, m, func() {})
	p["members"] = append(p["members"].([]object), object{"id": m["id"]})
	return http.StatusCreated, object{"member": m}, nil
}

func (c *Cloud) deleteMember(r *http.Request) (int, any, *apiError) {
	p, err := c.pool(r)
	if err != nil {
		return 0, nil, err
	}
	id := r.PathValue("id")
	m := c.get(Members, id)
	if m == nil || m["pool_id"] != p["id"] {
		return 0, nil, lbNotFound("Member", id)
	}
	lb, err := c.mutable(lbOf(p))
	if err != nil {
		return 0, nil, err
	}
	m["provisioning_status"] = "PENDING_DELETE"
	c.pend(lb, "PENDING_UPDATE", func() {
		c.remove(Members, id)
		p["members"] = slices.DeleteFunc(p["members"].([]object), func(o object) bool { return o["id"] == id })
	})
	return http.StatusNoContent, nil, nil
}

func (c *Cloud) createMonitor(r *http.Request) (int, any, *apiError) {
	var req struct{ Healthmonitor object }
	if err := decode(r, &req); err != nil {
		return 0, nil, err
	}
	in := req.Healthmonitor
	poolID := str(in["pool_id"])
	p := c.get(Pools, poolID)
	if p == nil {
		return 0, nil, lbNotFound("Pool", poolID)
	}
	switch str(in["type"]) {
	case "TCP", "HTTP", "HTTPS", "PING", "TLS-HELLO", "UDP-CONNECT", "SCTP":
	default:
		return 0, nil, octaviaError(http.StatusBadRequest, "Invalid input for field/attribute type. Value: '%s'.", str(in["type"]))
	}
	if num(in["delay"]) < 1 || num(in["timeout"]) < 1 || num(in["max_retries"]) < 1 {
		return 0, nil, octaviaError(http.StatusBadRequest, "Invalid input: delay, timeout and max_retries are mandatory and must be positive.")
	}
	lb, err := c.mutable(lbOf(p))
	if err != nil {
		return 0, nil, err
	}
	if p["healthmonitor_id"] != nil {
		return 0, nil, octaviaError(http.StatusConflict, "This pool already has a health monitor")
	}
	m := octaviaObject(in, "name", "tags", "type", "delay", "timeout", "max_retries", "max_retries_down")
	m["id"], m["pools"], m["loadbalancers"] = c.newID(), ids(poolID), ids(lbOf(p))
	if m["max_retries_down"] == nil {
		m["max_retries_down"] = 3
	}
	c.child(HealthMonitors, lb, m, func() {})
	p["healthmonitor_id"] = m["id"]
	return http.StatusCreated, object{"healthmonitor": m}, nil
}

// AddLoadBalancerFlavor adds an Octavia flavor, as an admin would (with a
// flavor profile of its own), and returns its ID.
func (c *Cloud) AddLoadBalancerFlavor(name string, enabled bool) string {
	return c.seed(LBFlavors, object{"name": name, "description": "", "enabled": enabled, "flavor_profile_id": c.newIDLocked()})
}

// AddLoadBalancerAvailabilityZone adds an Octavia availability zone, as
// an admin would.
func (c *Cloud) AddLoadBalancerAvailabilityZone(name string, enabled bool) {
	c.seed(LBAvailabilityZones, object{"name": name, "description": "", "enabled": enabled, "availability_zone_profile_id": c.newIDLocked()})
}

func (c *Cloud) newIDLocked() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.newID()
}

// enabled tells whether an enabled object of kind has key = value.
func (c *Cloud) enabled(kind Kind, key, value string) bool {
	for _, o := range c.objs[kind] {
		if str(o[key]) == value && o["enabled"] == true {
			return true
		}
	}
	return false
}

// listOctaviaCatalog lists flavors or availability zones (filtered by any
// attribute) under Octavia's key for them, without the fake's own IDs for
// availability zones, which Octavia names only.
func (c *Cloud) listOctaviaCatalog(kind Kind, key string) func(*http.Request) (int, any, *apiError) {
	return func(r *http.Request) (int, any, *apiError) {
		out := []object{}
		for _, o := range c.objs[kind] {
			if !matches(o, r.URL.Query()) {
				continue
			}
			cp := object{}
			for k, v := range o {
				if kind != LBAvailabilityZones || k != "id" {
					cp[k] = v
				}
			}
			out = append(out, cp)
		}
		return http.StatusOK, object{key: out, key + "_links": []any{}}, nil
	}
}

// octaviaRoutes registers Octavia's endpoints under both version paths.
func (c *Cloud) octaviaRoutes(m *http.ServeMux) {
	for _, v := range []string{"v2.0", "v2"} {
		base := "/load-balancer/" + v + "/lbaas/"
		m.HandleFunc("GET "+base+"loadbalancers", handle(c.listOctavia(LoadBalancers)))
		m.HandleFunc("GET "+base+"loadbalancers/{id}", handle(c.getOctavia(LoadBalancers, "Load Balancer")))
		m.HandleFunc("POST "+base+"loadbalancers", handle(c.createLoadBalancer))
		m.HandleFunc("DELETE "+base+"loadbalancers/{id}", handle(c.deleteLoadBalancer))
		m.HandleFunc("GET "+base+"listeners", handle(c.listOctavia(Listeners)))
		m.HandleFunc("GET "+base+"listeners/{id}", handle(c.getOctavia(Listeners, "Listener")))
		m.HandleFunc("POST "+base+"listeners", handle(c.createListener))
		m.HandleFunc("GET "+base+"pools", handle(c.listOctavia(Pools)))
		m.HandleFunc("GET "+base+"pools/{id}", handle(c.getOctavia(Pools, "Pool")))
		m.HandleFunc("POST "+base+"pools", handle(c.createPool))
		m.HandleFunc("GET "+base+"pools/{pool}/members", handle(c.listMembers))
		m.HandleFunc("POST "+base+"pools/{pool}/members", handle(c.createMember))
		m.HandleFunc("DELETE "+base+"pools/{pool}/members/{id}", handle(c.deleteMember))
		m.HandleFunc("GET "+base+"healthmonitors", handle(c.listOctavia(HealthMonitors)))
		m.HandleFunc("GET "+base+"healthmonitors/{id}", handle(c.getOctavia(HealthMonitors, "Health Monitor")))
		m.HandleFunc("POST "+base+"healthmonitors", handle(c.createMonitor))
		m.HandleFunc("GET "+base+"flavors", handle(c.listOctaviaCatalog(LBFlavors, "flavors")))
		m.HandleFunc("GET "+base+"availabilityzones", handle(c.listOctaviaCatalog(LBAvailabilityZones, "availability_zones")))
	}
}
