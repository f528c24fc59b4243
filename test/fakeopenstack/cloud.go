// Package fakeopenstack is an in-memory OpenStack for tests: Keystone, Nova,
// Neutron, Glance and Cinder served by one httptest.Server, each under its
// own path prefix. It keeps state (servers, ports, volumes, ...), answers
// like the real services closely enough for gophercloud and this project's
// clients, and is deterministic: IDs, MAC and IP addresses come from
// counters, and every state change happens on a request, never on a timer.
//
// Knobs make it misbehave on purpose (quotas, faults, servers that end in
// ERROR), and a request log lets tests count calls.
//
//	cloud := fakeopenstack.New(t)
//	netID := cloud.AddNetwork("machines")
//	cloud.AddSubnet(netID, "machines", "10.0.0.0/24")
//	yaml := cloud.Clouds("openstack") // give this to the client factory
package fakeopenstack

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
)

// The one user, project and region of the fake.
const (
	Region      = "RegionOne"
	ProjectID   = "0123456789abcdef0123456789abcdef"
	ProjectName = "demo"
	UserID      = "fedcba9876543210fedcba9876543210"
	Username    = "demo"
	Password    = "secret"
	DomainName  = "Default"
)

// Kind names a collection of objects, as the OpenStack APIs name them.
type Kind string

// The kinds the fake stores.
const (
	Servers        Kind = "servers"
	Flavors        Kind = "flavors"
	ServerGroups   Kind = "server_groups"
	Networks       Kind = "networks"
	Subnets        Kind = "subnets"
	SecurityGroups Kind = "security_groups"
	Ports          Kind = "ports"
	Trunks         Kind = "trunks"
	Images         Kind = "images"
	Volumes        Kind = "volumes"

	SecurityGroupRules Kind = "security_group_rules"
	Routers            Kind = "routers"
	FloatingIPs        Kind = "floatingips"

	LoadBalancers  Kind = "loadbalancers"
	Listeners      Kind = "listeners"
	Pools          Kind = "pools"
	Members        Kind = "members"
	HealthMonitors Kind = "healthmonitors"
	// LBFlavors and LBAvailabilityZones are Octavia's flavors and
	// availability zones (an admin makes them; members list and use them).
	LBFlavors           Kind = "lb_flavors"
	LBAvailabilityZones Kind = "lb_availability_zones"
)

// Quota names a limited resource.
type Quota string

// The quotas the fake enforces. All are unlimited unless set.
const (
	QuotaServers Quota = "instances" // Nova: 403 "Quota exceeded for instances"
	QuotaPorts   Quota = "port"      // Neutron: 409 OverQuota
	QuotaVolumes Quota = "volumes"   // Cinder: 413
)

// DefaultExtensions are the Neutron extensions enabled by default.
var DefaultExtensions = []string{
	"allowed-address-pairs", "binding", "external-net", "port-security", "router", "security-group",
	"standard-attr-tag", "tag-creation", "trunk",
}

// object is one resource in its API representation.
type object = map[string]any

// Cloud is a fake OpenStack. All its methods are safe for concurrent use.
type Cloud struct {
	srv *httptest.Server
	mux *http.ServeMux

	mu       sync.Mutex
	seq      int // of IDs
	tokenSeq int
	objs     map[Kind][]object
	servers  map[string]*serverState // by server ID
	creating map[string]int          // volume ID -> reads left in "creating"
	tokens   map[string]bool
	password string
	hidden   map[string]bool // service types left out of the catalog
	ext      []string
	azs      []string
	quota    map[Quota]int
	failing  map[string]object // server name -> Nova fault

	buildReads, deleteReads, volumeReads int

	adminGateway bool // see AllowGatewayFixedIPs

	lbSteps  int              // see SetLoadBalancerSteps
	lbOps    map[string]*lbOp // by load balancer ID
	disabled map[string]bool  // service types whose endpoint answers 404

	faults []*Fault
	log    []Request
}

// serverState is what Nova knows of a server beyond its representation.
type serverState struct {
	buildReads  int // reads left in BUILD
	deleting    bool
	deleteReads int        // reads left before a deleting server is gone
	ports       []string   // in the order of the create request
	volumes     []attached // in block device mapping order
}

type attached struct {
	id                  string
	deleteOnTermination bool
}

// New starts a fake cloud that stops when the test ends. It holds a
// "default" security group and one availability zone, "nova"; add flavors,
// images and networks with the Add methods.
func New(t testing.TB) *Cloud {
	t.Helper()
	c := &Cloud{
		objs:       map[Kind][]object{},
		servers:    map[string]*serverState{},
		creating:   map[string]int{},
		tokens:     map[string]bool{},
		password:   Password,
		hidden:     map[string]bool{},
		ext:        slices.Clone(DefaultExtensions),
		azs:        []string{"nova"},
		quota:      map[Quota]int{},
		failing:    map[string]object{},
		buildReads: 1, volumeReads: 1,
		lbSteps: 1, lbOps: map[string]*lbOp{}, disabled: map[string]bool{},
	}
	c.routes()
	c.srv = httptest.NewServer(c)
	t.Cleanup(c.srv.Close)
	c.AddSecurityGroup("default")
	return c
}

// URL is the root of the fake; each service lives under its own prefix.
func (c *Cloud) URL() string { return c.srv.URL }

// AuthURL is the Keystone v3 endpoint.
func (c *Cloud) AuthURL() string { return c.srv.URL + "/identity/v3" }

// Clouds returns a clouds.yaml with one cloud, cloudName, that
// authenticates to this fake with the user's initial password (see
// SetPassword).
func (c *Cloud) Clouds(cloudName string) []byte {
	return fmt.Appendf(nil, `clouds:
  %s:
    auth:
      auth_url: %s
      username: %s
      password: %s
      project_name: %s
      user_domain_name: %s
      project_domain_name: %s
    region_name: %s
    interface: public
    identity_api_version: 3
`, cloudName, c.AuthURL(), Username, Password, ProjectName, DomainName, DomainName, Region)
}

// Knobs.

// SetPassword changes the user's password; authentications with the old
// one get 401 from now on. Issued tokens stay valid (see RevokeTokens).
func (c *Cloud) SetPassword(p string) { c.locked(func() { c.password = p }) }

// RevokeTokens invalidates every issued token: the next service request
// of each client gets 401, and gophercloud authenticates again.
func (c *Cloud) RevokeTokens() { c.locked(func() { clear(c.tokens) }) }

// HideService leaves a service type ("block-storage", "load-balancer", ...)
// out of the catalog of the tokens issued from now on.
func (c *Cloud) HideService(serviceType string) {
	c.locked(func() { c.hidden[serviceType] = true })
}

// SetBuildReads sets how many reads (GET, or a list that returns it) a new
// server answers BUILD to before it is ACTIVE (or ERROR). Default 1, so
// the first read after the create sees BUILD and the second ACTIVE.
func (c *Cloud) SetBuildReads(n int) { c.locked(func() { c.buildReads = n }) }

// SetDeleteReads sets how many reads a deleted server still answers to
// (with task_state "deleting") before it is gone. Default 0: gone at once.
func (c *Cloud) SetDeleteReads(n int) { c.locked(func() { c.deleteReads = n }) }

// SetVolumeReads sets how many reads (GET or list) a new Cinder volume
// answers "creating" to before it is "available". Default 1.
func (c *Cloud) SetVolumeReads(n int) { c.locked(func() { c.volumeReads = n }) }

// FailServer makes the servers named name that are still building end
// their build in ERROR with this Nova fault instead of ACTIVE.
func (c *Cloud) FailServer(name string, code int, message string) {
	c.locked(func() { c.failing[name] = object{"code": code, "message": message} })
}

// SetExtensions replaces the enabled Neutron extensions (aliases). Without
// "tag-creation", a port create with tags is refused; without
// "standard-attr-tag", PUT .../tags is 404; without "trunk", trunks are 404;
// without "router" (layer 3), routers and floating IPs are 404, as on a
// cloud whose Neutron has no L3 service plugin.
func (c *Cloud) SetExtensions(aliases ...string) {
	c.locked(func() { c.ext = slices.Clone(aliases) })
}

// SetAvailabilityZones replaces the availability zones (Nova and Cinder).
func (c *Cloud) SetAvailabilityZones(names ...string) {
	c.locked(func() { c.azs = slices.Clone(names) })
}

// SetQuota limits how many of a resource may exist; max < 0 is unlimited.
func (c *Cloud) SetQuota(q Quota, max int) { c.locked(func() { c.quota[q] = max }) }

// Fault makes requests fail before they reach the fake service.
type Fault struct {
	// Method matches the request method; "" matches any.
	Method string
	// PathPrefix must prefix the request path or its template, e.g.
	// "/network/v2.0/ports" or "/compute/v2.1/servers/{id}"; "" matches any.
	PathPrefix string
	// After is how many matching requests pass before the fault starts.
	After int
	// Times is how many matching requests fail; 0 means 1.
	Times int
	// Status is the answer, e.g. 429 or 503.
	Status int
	// RetryAfter is the Retry-After header of the answer, if not "".
	RetryAfter string
	// Drop closes the connection without an answer instead.
	Drop bool
}

// Inject makes f.Times requests that match f fail, after f.After of them
// passed. Faults are tried in the order they were injected.
func (c *Cloud) Inject(f Fault) {
	if f.Times == 0 {
		f.Times = 1
	}
	c.locked(func() { c.faults = append(c.faults, &f) })
}

// Seeds. Each returns the ID of the new object.

// AddFlavor adds a public flavor.
func (c *Cloud) AddFlavor(name string, vcpus, ramMiB, diskGiB int) string {
	return c.seed(Flavors, object{"name": name, "vcpus": vcpus, "ram": ramMiB, "disk": diskGiB, "swap": 0,
		"OS-FLV-EXT-DATA:ephemeral": 0, "os-flavor-access:is_public": true, "rxtx_factor": 1.0})
}

// AddImage adds an active public image.
func (c *Cloud) AddImage(name string, tags ...string) string {
	return c.seed(Images, object{"name": name, "status": "active", "visibility": "public", "tags": strings0(tags),
		"disk_format": "qcow2", "container_format": "bare", "min_disk": 0, "min_ram": 0, "owner": ProjectID})
}

// AddServerGroup adds a server group with one policy ("anti-affinity", ...).
func (c *Cloud) AddServerGroup(name, policy string) string {
	return c.seed(ServerGroups, object{"name": name, "policy": policy, "policies": []string{policy},
		"members": []string{}, "metadata": object{}, "project_id": ProjectID, "user_id": UserID})
}

// AddNetwork adds a network of the project.
func (c *Cloud) AddNetwork(name string, tags ...string) string {
	return c.seed(Networks, neutron(object{"name": name, "status": "ACTIVE", "admin_state_up": true, "subnets": []string{},
		"shared": false, "router:external": false, "mtu": 1442, "port_security_enabled": true}, tags))
}

// AddSubnet adds a subnet to a network. Ports get addresses from .10 on.
func (c *Cloud) AddSubnet(networkID, name, cidr string, tags ...string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	net := c.get(Networks, networkID)
	if net == nil {
		panic("fakeopenstack: AddSubnet: no network " + networkID)
	}
	s, err := newSubnet(networkID, name, cidr)
	if err != nil {
		panic("fakeopenstack: AddSubnet: " + err.Error())
	}
	id := c.add(Subnets, neutron(s, tags))
	net["subnets"] = append(net["subnets"].([]string), id)
	return id
}

// AddSecurityGroup adds a security group of the project.
func (c *Cloud) AddSecurityGroup(name string, tags ...string) string {
	return c.seed(SecurityGroups, neutron(object{"name": name, "security_group_rules": []any{}, "stateful": true}, tags))
}

// AddPort adds an unbound port, as if created earlier by someone, with an
// address from the network's first subnet if it has one.
func (c *Cloud) AddPort(networkID, name string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, e := c.newPort(object{"network_id": networkID, "name": name})
	if e != nil {
		panic(fmt.Sprintf("fakeopenstack: AddPort: %d %v", e.status, e.body))
	}
	return c.add(Ports, p)
}

// AddServer adds a server with no ports or volumes in the given status
// ("ACTIVE", "ERROR", ...; "BUILD" goes ACTIVE after SetBuildReads reads).
func (c *Cloud) AddServer(name, status string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	id := c.add(Servers, object{"name": name, "status": status, "tenant_id": ProjectID, "user_id": UserID,
		"metadata": object{}, "tags": []string{}, "flavor": object{}, "image": "", "key_name": nil,
		"OS-EXT-AZ:availability_zone": c.azs[0]})
	c.servers[id] = &serverState{buildReads: c.buildReads}
	return id
}

// AddVolume adds a Cinder volume in the given status ("available", ...).
func (c *Cloud) AddVolume(name string, sizeGiB int, status string) string {
	return c.seed(Volumes, object{"name": name, "size": sizeGiB, "status": status, "volume_type": "__DEFAULT__",
		"availability_zone": "nova", "bootable": "false", "attachments": []any{}, "metadata": object{},
		"os-vol-tenant-attr:tenant_id": ProjectID, "user_id": UserID})
}

// Inspection.

// Len is the number of objects of a kind that exist (a server being
// deleted exists until it is gone).
func (c *Cloud) Len(kind Kind) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.objs[kind])
}

// Objects returns copies of the objects of a kind, oldest first, as the
// API shows them (servers with their addresses and attached volumes).
func (c *Cloud) Objects(kind Kind) []map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]map[string]any, 0, len(c.objs[kind]))
	for _, o := range c.objs[kind] {
		out = append(out, c.export(kind, o))
	}
	return out
}

// Object returns a copy of one object, or nil.
func (c *Cloud) Object(kind Kind, id string) map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	if o := c.get(kind, id); o != nil {
		return c.export(kind, o)
	}
	return nil
}

// Names returns the names of the objects of a kind, oldest first.
func (c *Cloud) Names(kind Kind) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, len(c.objs[kind]))
	for _, o := range c.objs[kind] {
		out = append(out, str(o["name"]))
	}
	return out
}

// Set changes one field of an object, e.g. a volume's "status" to "error".
func (c *Cloud) Set(kind Kind, id, field string, value any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	o := c.get(kind, id)
	if o == nil {
		panic(fmt.Sprintf("fakeopenstack: Set: no %s %s", kind, id))
	}
	o[field] = value
}

// Store helpers; the caller holds c.mu.

func (c *Cloud) locked(f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f()
}

// newID returns a UUID made from a counter, so IDs are deterministic.
func (c *Cloud) newID() string {
	c.seq++
	return fmt.Sprintf("00000000-0000-4000-8000-%012x", c.seq)
}

func (c *Cloud) seed(kind Kind, o object) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.add(kind, o)
}

func (c *Cloud) add(kind Kind, o object) string {
	if str(o["id"]) == "" {
		o["id"] = c.newID()
	}
	c.objs[kind] = append(c.objs[kind], o)
	return o["id"].(string)
}

// all returns the objects of a kind, never nil (JSON [] rather than null).
func (c *Cloud) all(kind Kind) []object {
	if c.objs[kind] == nil {
		return []object{}
	}
	return c.objs[kind]
}

func (c *Cloud) get(kind Kind, id string) object {
	for _, o := range c.objs[kind] {
		if o["id"] == id {
			return o
		}
	}
	return nil
}

func (c *Cloud) remove(kind Kind, id string) {
	c.objs[kind] = slices.DeleteFunc(c.objs[kind], func(o object) bool { return o["id"] == id })
}

// overQuota reports whether one more of q would exceed its quota.
func (c *Cloud) overQuota(q Quota, kind Kind) (bool, int) {
	max, ok := c.quota[q]
	return ok && max >= 0 && len(c.objs[kind]) >= max, max
}

// export deep-copies an object as the API shows it.
func (c *Cloud) export(kind Kind, o object) map[string]any {
	switch kind {
	case Servers:
		o = c.renderServer(o)
	case SecurityGroups:
		o = c.renderGroup(o)
	}
	b, err := json.Marshal(o)
	if err != nil {
		panic(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	return out
}

// neutron adds the attributes every Neutron object of the project has.
func neutron(o object, tags []string) object {
	o["project_id"], o["tenant_id"] = ProjectID, ProjectID
	o["tags"] = strings0(tags)
	if _, ok := o["description"]; !ok {
		o["description"] = ""
	}
	return o
}

func strings0(s []string) []string {
	if s == nil {
		return []string{}
	}
	return slices.Clone(s)
}
