package instance

import (
	"context"
	"errors"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/server"
)

// How soon to look again at a server Nova is building, and at one in a
// state only an operator changes (ERROR, SHUTOFF); the OpenStackServer
// controller uses the same.
const (
	buildPoll = 3 * time.Second
	slowPoll  = time.Minute
	// rebuildPoll: a server that vanished while building is created again
	// on the next call.
	rebuildPoll = time.Second
)

// Result is what Create found and made. Pass it back to the next Create or
// Delete of the same Spec: that only saves calls (a Result decoded from
// storage, or none at all, works too, from the deterministic names).
type Result struct {
	// Done: Nova reports the server ACTIVE. Call Create again until then.
	Done bool
	// RequeueAfter is when to call again while not Done; zero when done
	// or after an error.
	RequeueAfter time.Duration
	// Waiting says what is awaited while not Done.
	Waiting string

	// ID of the Nova server; empty until it is created.
	ID string
	// State is Nova's status: BUILD, ACTIVE, ERROR, SHUTOFF, ...
	State string
	// Fault is Nova's message for a server in ERROR.
	Fault string
	// Provisioned: the server has been ACTIVE once. Carried over from the
	// Result passed in; it decides whether a vanished server is created
	// again (not yet provisioned) or reported (ReasonInstanceDeleted).
	Provisioned bool
	// Addresses of the server, sorted.
	Addresses []Address

	// Ports made or adopted, in Spec order.
	Ports []CreatedPort
	// Volumes made through Cinder before the server, then those Nova
	// reports attached.
	Volumes []CreatedVolume

	// resolved is the spec's references as IDs, kept so that a Result
	// passed back is not resolved again. Not exported: a caller that
	// stores the Result only loses the saving.
	resolved *infrav1alpha1.ResolvedServerSpec
	// name is the Spec.Name this Result is of.
	name string
}

// Address is one address of the server. Type is InternalIP (fixed),
// ExternalIP (floating) or InternalDNS (the server's name).
type Address struct {
	Type    string
	Address string
}

// CreatedPort is a port made or adopted for the server. A trunk, when
// asked for, has the port's name.
type CreatedPort struct {
	Name       string
	ID         string
	MACAddress string
	Trunk      bool
}

// CreatedVolume is a Cinder volume of the server. Name is "root" or the
// Volume's name when known (Nova reports volumes by ID only).
type CreatedVolume struct {
	Name string
	ID   string
}

// Deletion is what one Delete call achieved.
type Deletion struct {
	// Done: the server, its trunks, ports and volumes are gone.
	Done bool
	// RequeueAfter is when to call again while not Done.
	RequeueAfter time.Duration
	// Waiting says what is awaited while not Done.
	Waiting string
}

// Create makes the instance exist: it resolves the spec's references,
// then makes or adopts the ports and trunks, the volumes that need an
// explicit zone and the server, and reports what Nova says of it. It
// never waits: call it again (after RequeueAfter) until Done.
//
// prev is the Result of the previous call, or nil. The returned Result is
// never nil; after an error it holds what exists so far. Errors are
// *Error; a server in ERROR is one (ReasonInstanceError), with the
// Result naming it so that it can be deleted.
func (c *Client) Create(ctx context.Context, spec Spec, prev *Result) (*Result, error) {
	res := carry(prev, spec.Name)
	res.name = spec.Name
	if err := spec.Validate(); err != nil {
		return res, err
	}
	req := spec.request()
	s := c.scope

	if res.resolved == nil {
		resolved, err := server.Resolve(ctx, s, req)
		if err != nil {
			return res, publicError(err)
		}
		res.resolved = resolved
	}
	resources := &infrav1alpha1.ServerResources{Ports: res.portStatus(), Volumes: res.volumeStatus()}

	ports, err := server.EnsurePorts(ctx, s, res.resolved.Ports, resources.Ports)
	resources.Ports = ports
	res.setPorts(ports)
	if err != nil {
		return res, publicError(err)
	}

	// Volumes come before the server, and only then: once the server
	// exists, Nova owns them.
	if res.ID == "" {
		vols, err := server.EnsureVolumes(ctx, s, req, res.resolved, resources.Volumes)
		if vols != nil {
			resources.Volumes = vols
			res.setVolumes(vols)
		}
		if p := progress(err); p != nil {
			return res.wait(p.After, p.Message), nil //nolint:nilerr // waiting is not a failure: it is RequeueAfter
		}
		if err != nil {
			return res, publicError(err)
		}
	}

	srv, err := server.EnsureInstance(ctx, s, req, res.resolved, resources, res.ID)
	if errors.Is(err, server.ErrInstanceGone) {
		return res.gone()
	}
	if err != nil {
		return res, publicError(err)
	}
	return res.observe(srv)
}

// Delete removes the server, then its trunks and ports, then the volumes
// Nova did not delete with it. It works from the names alone, so prev may
// be nil; only Spec.Name, the ports (NameSuffix, Trunk) and the volumes
// (Name, AvailabilityZone) are read, and the spec is not validated: a spec
// Create refused made nothing, and deleting it must not be stuck. Call it
// again (after RequeueAfter) until Done; a Delete after Done is a no-op.
func (c *Client) Delete(ctx context.Context, spec Spec, prev *Result) (*Deletion, error) {
	if spec.Name == "" {
		return &Deletion{}, specError("Name", "is required")
	}
	known := server.Known{}
	if usable(prev, spec.Name) {
		known.InstanceID = prev.ID
		known.Resources = &infrav1alpha1.ServerResources{Ports: prev.portStatus(), Volumes: prev.volumeStatus()}
	}
	err := server.Delete(ctx, c.scope, spec.request(), known)
	if p := progress(err); p != nil {
		return &Deletion{RequeueAfter: p.After, Waiting: p.Message}, nil //nolint:nilerr // waiting is not a failure: it is RequeueAfter
	}
	if err != nil {
		return &Deletion{}, publicError(err)
	}
	return &Deletion{Done: true}, nil
}

func progress(err error) *server.Progress {
	var p *server.Progress
	if errors.As(err, &p) {
		return p
	}
	return nil
}

// usable reports whether prev may describe the server called name. A
// Result of another name is ignored rather than trusted: its IDs are
// another server's. A decoded Result has no name and is trusted.
func usable(prev *Result, name string) bool {
	return prev != nil && (prev.name == "" || prev.name == name)
}

// carry copies what a previous Result knows.
func carry(prev *Result, name string) *Result {
	res := &Result{}
	if !usable(prev, name) {
		return res
	}
	res.ID, res.State, res.Provisioned = prev.ID, prev.State, prev.Provisioned
	res.Ports = append([]CreatedPort(nil), prev.Ports...)
	res.Volumes = append([]CreatedVolume(nil), prev.Volumes...)
	res.Addresses = append([]Address(nil), prev.Addresses...)
	res.resolved = prev.resolved
	return res
}

func (r *Result) portStatus() []infrav1.PortStatus {
	if len(r.Ports) == 0 {
		return nil
	}
	out := make([]infrav1.PortStatus, len(r.Ports))
	for i, p := range r.Ports {
		out[i] = infrav1.PortStatus{ID: p.ID, MACAddress: p.MACAddress}
	}
	return out
}

func (r *Result) volumeStatus() []infrav1alpha1.VolumeStatus {
	if len(r.Volumes) == 0 {
		return nil
	}
	out := make([]infrav1alpha1.VolumeStatus, len(r.Volumes))
	for i, v := range r.Volumes {
		out[i] = infrav1alpha1.VolumeStatus{Name: v.Name, ID: v.ID}
	}
	return out
}

func (r *Result) setPorts(ports []infrav1.PortStatus) {
	r.Ports = make([]CreatedPort, 0, len(ports))
	for i, p := range ports {
		cp := CreatedPort{ID: p.ID, MACAddress: p.MACAddress}
		if i < len(r.resolved.Ports) {
			rp := r.resolved.Ports[i]
			cp.Name, cp.Trunk = rp.Name, rp.Trunk != nil && *rp.Trunk
		}
		r.Ports = append(r.Ports, cp)
	}
}

func (r *Result) setVolumes(vols []infrav1alpha1.VolumeStatus) {
	r.Volumes = make([]CreatedVolume, 0, len(vols))
	for _, v := range vols {
		r.Volumes = append(r.Volumes, CreatedVolume{Name: v.Name, ID: v.ID})
	}
}

func (r *Result) wait(after time.Duration, why string) *Result {
	r.Done, r.RequeueAfter, r.Waiting = false, after, why
	return r
}

// observe records what Nova says of the server, as the OpenStackServer
// controller does for its status.
func (r *Result) observe(srv *servers.Server) (*Result, error) {
	r.ID, r.State, r.Fault = srv.ID, srv.Status, server.FaultMessage(srv)
	if srv.Addresses != nil {
		r.Addresses = r.Addresses[:0]
		for _, a := range server.Addresses(srv) {
			r.Addresses = append(r.Addresses, Address{Type: string(a.Type), Address: a.Address})
		}
	}
	if len(srv.AttachedVolumes) > 0 {
		r.setVolumes(server.AttachedVolumes(srv, r.volumeStatus()))
	}
	switch infrav1.InstanceState(srv.Status) {
	case infrav1.InstanceStateActive:
		r.Done, r.Provisioned, r.RequeueAfter, r.Waiting = true, true, 0, ""
		return r, nil
	case infrav1.InstanceStateBuild, "":
		return r.wait(buildPoll, "Nova is building the server"), nil
	case infrav1.InstanceStateError:
		msg := "the server is in ERROR"
		if r.Fault != "" {
			msg += ": " + r.Fault
		}
		return r.wait(0, ""), &Error{Reason: ReasonInstanceError, Message: msg}
	case infrav1.InstanceStateDeleted, infrav1.InstanceStateSoftDeleted:
		return r.wait(0, ""), &Error{Reason: ReasonInstanceDeleted, Message: "the server was deleted outside this package"}
	default:
		return r.wait(slowPoll, "the server is "+srv.Status), nil
	}
}

// gone handles a known server that Nova no longer has. Before it was ever
// ACTIVE it is created again on the next call (as the controller does);
// after, it is reported and not replaced.
func (r *Result) gone() (*Result, error) {
	if r.Provisioned {
		r.State = string(infrav1.InstanceStateDeleted)
		return r.wait(0, ""), &Error{Reason: ReasonInstanceDeleted, Message: "the server " + r.ID + " no longer exists in OpenStack"}
	}
	r.ID, r.State, r.Addresses = "", "", nil
	return r.wait(rebuildPoll, "the server disappeared while building; creating it again"), nil
}
