package openstackserver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/conditions"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/clients"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/server"
	"github.com/ocp-capi/ocp-capi/internal/skeleton"
)

// How often to look at a server that Nova is still building, and at one
// in ERROR (which an operator may repair).
const (
	buildPoll = 3 * time.Second
	errorPoll = time.Minute
)

// userDataKey is the key of the bootstrap data in a CAPI bootstrap Secret.
const userDataKey = "value"

// serverScope is what the phases of one pass over an OpenStackServer
// share.
type serverScope struct {
	oss        *infrav1alpha1.OpenStackServer
	cloud      server.Scope
	req        server.Request
	instanceID string // the Nova server recorded before this pass ("" if none)
	floatingIP string // the address of the server's IPAddressClaim ("" if none)
}

// reconcileNormal walks the steps in order, one phase each, and stops at
// the first that is not done; each step records its condition.
func (r *Reconciler) reconcileNormal(ctx context.Context, oss *infrav1alpha1.OpenStackServer) (ctrl.Result, error) {
	// The finalizer is stored before anything exists in OpenStack.
	if controllerutil.AddFinalizer(oss, infrav1alpha1.OpenStackServerFinalizer) {
		return ctrl.Result{}, nil
	}
	// After a terminal error, wait for a change or for the retry time.
	if d := r.memo.parkedFor(oss, time.Now()); d > 0 {
		return ctrl.Result{RequeueAfter: d}, nil
	}
	s := &serverScope{oss: oss, instanceID: ptr.Deref(oss.Status.InstanceID, "")}
	return skeleton.RunPhases(ctx, s,
		r.claimFloatingAddress,
		r.connect,
		r.resolveReferences,
		r.reconcilePorts,
		r.reconcileVolumes,
		r.associateFloatingAddress,
		r.reconcileInstance,
	)
}

// connect gets the clients of the server's identity, and its user data
// while the server is still to be created.
func (r *Reconciler) connect(ctx context.Context, s *serverScope) (ctrl.Result, error) {
	clientSet, err := r.Scopes.For(ctx, s.oss.Namespace, s.oss.Spec.IdentityRef)
	if err != nil {
		return skeleton.Stop(r.outcome(s.oss, currentStep(s.oss), err))
	}
	s.cloud = server.Scope{Clients: clientSet, Log: ctrl.LoggerFrom(ctx)}
	if s.req, err = r.request(ctx, s.oss); err != nil {
		return skeleton.Stop(r.outcome(s.oss, currentStep(s.oss), err))
	}
	return ctrl.Result{}, nil
}

// resolveReferences resolves the spec's references once, and stores the
// result before anything is created, so delete can trust it and it is
// never resolved again.
func (r *Reconciler) resolveReferences(ctx context.Context, s *serverScope) (ctrl.Result, error) {
	oss := s.oss
	if oss.Status.Resolved == nil {
		req := s.req
		if ref := oss.Spec.Image.ImageRef; ref != nil {
			id, err := imageRefID(ctx, r.APIReader, oss.Namespace, ref.Name)
			if err != nil {
				return skeleton.Stop(r.outcome(oss, infrav1.ReferencesResolvedCondition, err))
			}
			spec := *req.Spec
			spec.Image = infrav1.ImageParam{ID: &id}
			req.Spec = &spec
		}
		resolved, err := server.Resolve(ctx, s.cloud, req)
		if err != nil {
			return skeleton.Stop(r.outcome(oss, infrav1.ReferencesResolvedCondition, err))
		}
		oss.Status.Resolved = resolved
		conditions.MarkTrue(oss, infrav1.ReferencesResolvedCondition, "")
		conditions.MarkUnknown(oss, infrav1.PortsReadyCondition, infrav1.WaitingForDependenciesReason, "ports are created next")
		// The status write's own event brings the next pass.
		return skeleton.Stop(ctrl.Result{}, nil)
	}
	conditions.MarkTrue(oss, infrav1.ReferencesResolvedCondition, "")
	if oss.Status.Resources == nil {
		oss.Status.Resources = &infrav1alpha1.ServerResources{}
	}
	return ctrl.Result{}, nil
}

// reconcilePorts makes the ports and trunks exist.
func (r *Reconciler) reconcilePorts(ctx context.Context, s *serverScope) (ctrl.Result, error) {
	oss := s.oss
	portStatus, err := server.EnsurePorts(ctx, s.cloud, oss.Status.Resolved.Ports, oss.Status.Resources.Ports)
	oss.Status.Resources.Ports = portStatus
	if err != nil {
		return skeleton.Stop(r.outcome(oss, infrav1.PortsReadyCondition, err))
	}
	conditions.MarkTrue(oss, infrav1.PortsReadyCondition, fmt.Sprintf("%d port(s)", len(portStatus)))
	return ctrl.Result{}, nil
}

// reconcileVolumes makes the volumes that must exist before the server
// exist (only before it does).
func (r *Reconciler) reconcileVolumes(ctx context.Context, s *serverScope) (ctrl.Result, error) {
	oss := s.oss
	if s.instanceID == "" {
		vols, err := server.EnsureVolumes(ctx, s.cloud, s.req, oss.Status.Resolved, oss.Status.Resources.Volumes)
		if vols != nil {
			oss.Status.Resources.Volumes = vols
		}
		if err != nil {
			return skeleton.Stop(r.outcome(oss, infrav1.VolumesReadyCondition, err))
		}
	}
	conditions.MarkTrue(oss, infrav1.VolumesReadyCondition, "")
	return ctrl.Result{}, nil
}

// reconcileInstance creates (or adopts) the Nova server and records what
// Nova says of it. Nova is asked at most once per buildPoll per server,
// however many events arrive (each status write brings one).
func (r *Reconciler) reconcileInstance(ctx context.Context, s *serverScope) (ctrl.Result, error) {
	oss := s.oss
	if s.instanceID != "" {
		if recent, left := r.memo.polledWithin(oss.UID, buildPoll, time.Now()); recent {
			if ptr.Deref(oss.Status.InstanceState, "") == infrav1.InstanceStateActive {
				oss.Status.Addresses = withFloatingIP(oss.Status.Addresses, r.knownFloatingIP(ctx, s))
				return skeleton.Stop(ctrl.Result{}, nil)
			}
			return skeleton.Stop(ctrl.Result{RequeueAfter: left}, nil)
		}
	}
	srv, err := server.EnsureInstance(ctx, s.cloud, s.req, oss.Status.Resolved, oss.Status.Resources, s.instanceID)
	r.memo.markPolled(oss.UID, time.Now())
	if errors.Is(err, server.ErrInstanceGone) {
		return skeleton.Stop(r.instanceGone(oss), nil)
	}
	if err != nil {
		return skeleton.Stop(r.outcome(oss, infrav1.InstanceReadyCondition, err))
	}
	if s.instanceID == "" {
		r.Recorder.Eventf(oss, nil, corev1.EventTypeNormal, "ServerCreated", "Create", "Server %s is %s", srv.ID, srv.Status)
	}
	res := r.observe(oss, srv)
	oss.Status.Addresses = withFloatingIP(oss.Status.Addresses, r.knownFloatingIP(ctx, s))
	return skeleton.Stop(res, nil)
}

// request is what the server package needs from the object.
func (r *Reconciler) request(ctx context.Context, oss *infrav1alpha1.OpenStackServer) (server.Request, error) {
	req := server.Request{Name: oss.Name, Spec: &oss.Spec, MachineAZ: ptr.Deref(oss.Spec.AvailabilityZone, "")}
	// User data matters only until the server exists.
	if oss.Spec.UserDataRef == nil || oss.Status.InstanceID != nil {
		return req, nil
	}
	secret := &corev1.Secret{}
	key := client.ObjectKey{Namespace: oss.Namespace, Name: oss.Spec.UserDataRef.Name}
	if err := r.APIReader.Get(ctx, key, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return req, &clients.Error{Class: clients.Transient, Reason: infrav1.WaitingForDependenciesReason,
				Message: fmt.Sprintf("user data Secret %s not found", key.Name), RetryAfter: 10 * time.Second}
		}
		return req, err
	}
	data, ok := secret.Data[userDataKey]
	if !ok {
		return req, &clients.Error{Class: clients.Terminal, Reason: infrav1.InvalidSpecReason,
			Message: fmt.Sprintf("user data Secret %s has no %q key", key.Name, userDataKey)}
	}
	req.UserData = data
	return req, nil
}

// observe records what Nova says of the server.
func (r *Reconciler) observe(oss *infrav1alpha1.OpenStackServer, srv *servers.Server) ctrl.Result {
	oss.Status.InstanceID = ptr.To(srv.ID)
	state := infrav1.InstanceState(srv.Status)
	oss.Status.InstanceState = &state
	if addrs := server.Addresses(srv); len(addrs) > 0 && srv.Addresses != nil {
		oss.Status.Addresses = addrs
	}
	if len(srv.AttachedVolumes) > 0 {
		oss.Status.Resources.Volumes = server.AttachedVolumes(srv, oss.Status.Resources.Volumes)
	}

	switch state {
	case infrav1.InstanceStateActive:
		if oss.Status.Initialization == nil || !ptr.Deref(oss.Status.Initialization.Provisioned, false) {
			oss.Status.Initialization = &infrav1alpha1.OpenStackServerInitializationStatus{Provisioned: ptr.To(true)}
			r.Recorder.Eventf(oss, nil, corev1.EventTypeNormal, "ServerActive", "Provision", "Server %s is ACTIVE", srv.ID)
		}
		conditions.MarkTrue(oss, infrav1.InstanceReadyCondition, "")
		return ctrl.Result{}
	case infrav1.InstanceStateBuild, "":
		conditions.MarkFalse(oss, infrav1.InstanceReadyCondition, infrav1.InstanceBuildingReason, "Nova is building the server")
		return ctrl.Result{RequeueAfter: buildPoll}
	case infrav1.InstanceStateError:
		msg := "the server is in ERROR"
		if f := server.FaultMessage(srv); f != "" {
			msg += ": " + f
		}
		if c := conditionReason(oss, infrav1.InstanceReadyCondition); c != infrav1.InstanceErrorReason {
			r.Recorder.Eventf(oss, nil, corev1.EventTypeWarning, "ServerError", "Provision", "%s", msg)
		}
		conditions.MarkFalse(oss, infrav1.InstanceReadyCondition, infrav1.InstanceErrorReason, msg)
		return ctrl.Result{RequeueAfter: errorPoll}
	case infrav1.InstanceStateDeleted, infrav1.InstanceStateSoftDeleted:
		conditions.MarkFalse(oss, infrav1.InstanceReadyCondition, infrav1.InstanceDeletedReason, "the server was deleted outside this controller")
		return ctrl.Result{}
	default:
		conditions.MarkFalse(oss, infrav1.InstanceReadyCondition, infrav1.InstanceNotActiveReason, "the server is "+srv.Status)
		return ctrl.Result{RequeueAfter: errorPoll}
	}
}

// instanceGone handles a server that vanished from Nova. Before it was
// ever ACTIVE (deleted while building) it is created again; after, it is
// reported, not silently replaced: a Machine's server is not fungible, and
// a MachineHealthCheck decides.
func (r *Reconciler) instanceGone(oss *infrav1alpha1.OpenStackServer) ctrl.Result {
	if oss.Status.Initialization != nil && ptr.Deref(oss.Status.Initialization.Provisioned, false) {
		state := infrav1.InstanceStateDeleted
		oss.Status.InstanceState = &state
		conditions.MarkFalse(oss, infrav1.InstanceReadyCondition, infrav1.InstanceDeletedReason, "the server no longer exists in OpenStack")
		return ctrl.Result{}
	}
	oss.Status.InstanceID = nil
	oss.Status.InstanceState = nil
	conditions.MarkFalse(oss, infrav1.InstanceReadyCondition, infrav1.InstanceCreatingReason, "the server disappeared while building; creating it again")
	return ctrl.Result{RequeueAfter: time.Second}
}

// currentStep is the first step condition that is not True: where a
// failure before any step (authentication) is reported.
func currentStep(oss *infrav1alpha1.OpenStackServer) string {
	for _, t := range stepConditions {
		if t == infrav1.FloatingAddressFromPoolReadyCondition {
			continue // waits for the instance; never where a failure before the steps belongs
		}
		if conditionReason(oss, t) == "" || !isTrue(oss, t) {
			return t
		}
	}
	return infrav1.InstanceReadyCondition
}

func (r *Reconciler) outcome(oss *infrav1alpha1.OpenStackServer, step string, err error) (ctrl.Result, error) {
	before := conditionReason(oss, step)
	res, rerr, terminal := conditions.Outcome(oss, step, err)
	if terminal {
		r.memo.park(oss, res.RequeueAfter, time.Now())
		if before != conditionReason(oss, step) {
			r.Recorder.Eventf(oss, nil, corev1.EventTypeWarning, conditionReason(oss, step), "Reconcile", "%s", err.Error())
		}
	}
	return res, rerr
}
