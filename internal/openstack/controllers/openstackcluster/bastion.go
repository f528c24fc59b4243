package openstackcluster

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	capiconditions "sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/conditions"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/cluster"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/scope"
	"github.com/ocp-capi/ocp-capi/internal/openstack/internal/serverspec"
	"github.com/ocp-capi/ocp-capi/internal/skeleton"
)

// BastionName is the name of the bastion's OpenStackServer (and server).
func BastionName(osc *infrav1.OpenStackCluster) string { return osc.Name + "-bastion" }

func bastionEnabled(osc *infrav1.OpenStackCluster) bool {
	b := osc.Spec.Bastion
	return b != nil && ptr.Deref(b.Enabled, true) && b.Spec != nil
}

func userBastionFIP(osc *infrav1.OpenStackCluster) string {
	if b := osc.Spec.Bastion; b != nil {
		return ptr.Deref(b.FloatingIP, "")
	}
	return ""
}

// desiredBastion is the bastion's server spec for the current cluster
// spec and status.
func desiredBastion(osc *infrav1.OpenStackCluster) (*infrav1alpha1.OpenStackServerSpec, error) {
	b := osc.Spec.Bastion
	return serverspec.FromMachineSpec(serverspec.Input{
		Spec:             *b.Spec,
		Path:             "spec.bastion.spec",
		Role:             serverspec.Bastion,
		AvailabilityZone: ptr.Deref(b.AvailabilityZone, ""),
		Defaults:         Defaults(osc),
	})
}

// reconcileBastion makes the bastion match the spec. A spec change is
// decided by comparing the desired server spec with the existing
// OpenStackServer, never by remembering what was there before: any
// difference deletes the old server, and a new one is created once it is
// gone. It is the last phase of a pass.
func (r *Reconciler) reconcileBastion(ctx context.Context, s *clusterScope) (ctrl.Result, error) {
	osc := s.osc
	oss := &infrav1alpha1.OpenStackServer{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: osc.Namespace, Name: BastionName(osc)}, oss)
	switch {
	case apierrors.IsNotFound(err):
		oss = nil
	case err != nil:
		return skeleton.Stop(ctrl.Result{}, err)
	}

	if !bastionEnabled(osc) {
		return skeleton.Stop(r.noBastion(ctx, s, oss))
	}
	desired, err := desiredBastion(osc)
	if err != nil {
		conditions.MarkFalse(osc, infrav1.BastionReadyCondition, infrav1.InvalidSpecReason, err.Error())
		return skeleton.Stop(ctrl.Result{}, nil)
	}
	if oss == nil {
		return skeleton.Stop(ctrl.Result{}, r.createBastion(ctx, s, desired))
	}
	if !oss.DeletionTimestamp.IsZero() {
		conditions.MarkFalse(osc, infrav1.BastionReadyCondition, infrav1.BastionDeletingReason, "waiting for the old bastion to go away")
		return skeleton.Stop(ctrl.Result{}, nil)
	}
	if !sameServer(oss.Spec, *desired) && !capoBastion(osc, oss) {
		r.Recorder.Eventf(osc, oss, corev1.EventTypeNormal, "BastionReplaced", "Update", "The bastion spec changed; replacing server %s", oss.Name)
		return skeleton.Stop(r.deleteBastion(ctx, osc, oss, "the bastion spec changed; replacing it"))
	}
	// The identity is the one input that changes without replacing the
	// server (credential rotation): pass it on.
	if oss.Spec.IdentityRef != desired.IdentityRef {
		base := oss.DeepCopy()
		oss.Spec.IdentityRef = desired.IdentityRef
		if err := r.Client.Patch(ctx, oss, client.MergeFrom(base)); err != nil {
			return skeleton.Stop(ctrl.Result{}, err)
		}
	}
	return skeleton.Stop(r.reportBastion(ctx, s, oss))
}

// noBastion removes a disabled bastion: its server (oss, nil when there is
// none), then its floating IP.
func (r *Reconciler) noBastion(ctx context.Context, s *clusterScope, oss *infrav1alpha1.OpenStackServer) (ctrl.Result, error) {
	osc := s.osc
	if oss != nil {
		return r.deleteBastion(ctx, osc, oss, "the bastion is disabled")
	}
	if err := r.releaseBastionFIP(ctx, s.cloud, osc); err != nil {
		return r.outcome(osc, infrav1.BastionReadyCondition, err)
	}
	osc.Status.Bastion = nil
	conditions.MarkTrue(osc, infrav1.BastionReadyCondition, "no bastion", infrav1.NotRequiredReason)
	return ctrl.Result{}, nil
}

// createBastion creates the bastion's OpenStackServer, owned by the
// cluster.
func (r *Reconciler) createBastion(ctx context.Context, s *clusterScope, desired *infrav1alpha1.OpenStackServerSpec) error {
	osc := s.osc
	oss := &infrav1alpha1.OpenStackServer{
		ObjectMeta: metav1.ObjectMeta{Name: BastionName(osc), Namespace: osc.Namespace,
			Labels: map[string]string{clusterv1.ClusterNameLabel: s.capiCluster.Name}},
		Spec: *desired,
	}
	if v, ok := osc.Labels[clusterv1.WatchLabel]; ok {
		oss.Labels[clusterv1.WatchLabel] = v
	}
	if err := controllerutil.SetControllerReference(osc, oss, r.Client.Scheme()); err != nil {
		return err
	}
	if err := r.Client.Create(ctx, oss); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	r.Recorder.Eventf(osc, oss, corev1.EventTypeNormal, "BastionCreated", "Create", "Created bastion %s", oss.Name)
	conditions.MarkFalse(osc, infrav1.BastionReadyCondition, infrav1.WaitingForServerReason, "waiting for the bastion server")
	return nil
}

// reportBastion reports the bastion's server, and gives it its floating
// IP once it is ACTIVE.
func (r *Reconciler) reportBastion(ctx context.Context, s *clusterScope, oss *infrav1alpha1.OpenStackServer) (ctrl.Result, error) {
	osc := s.osc
	st := &infrav1.BastionStatus{Name: oss.Name, ID: ptr.Deref(oss.Status.InstanceID, ""), SSHKeyName: oss.Spec.SSHKeyName,
		State: ptr.Deref(oss.Status.InstanceState, "")}
	for _, a := range oss.Status.Addresses {
		if a.Type == clusterv1.MachineInternalIP && st.IP == "" {
			st.IP = a.Address
		}
	}
	// The floating IP recorded belongs to this server only (a replaced
	// bastion gets it again).
	if prev := osc.Status.Bastion; prev != nil && prev.ID == st.ID && st.ID != "" {
		st.FloatingIP = prev.FloatingIP
	}
	osc.Status.Bastion = st
	if !capiconditions.IsTrue(oss, infrav1.ReadyCondition) {
		msg := "waiting for the bastion server"
		reason := infrav1.WaitingForServerReason
		if rc := capiconditions.Get(oss, infrav1.ReadyCondition); rc != nil && rc.Message != "" {
			msg, reason = "bastion: "+rc.Message, rc.Reason
		}
		conditions.MarkFalse(osc, infrav1.BastionReadyCondition, reason, msg)
		return ctrl.Result{}, nil
	}
	if osc.Status.ExternalNetwork != nil && st.FloatingIP == "" && oss.Status.Resources != nil && len(oss.Status.Resources.Ports) > 0 {
		fip, err := cluster.EnsureFloatingIP(ctx, s.cloud, s.req, osc.Status.ExternalNetwork.ID, userBastionFIP(osc),
			s.req.BastionFloatingIPDescription(), oss.Status.Resources.Ports[0].ID)
		if err != nil {
			return r.outcome(osc, infrav1.BastionReadyCondition, err)
		}
		st.FloatingIP = fip.FloatingIP
	}
	conditions.MarkTrue(osc, infrav1.BastionReadyCondition, fmt.Sprintf("bastion %s", firstNonEmpty(st.FloatingIP, st.IP)))
	return ctrl.Result{}, nil
}

// capoBastion reports whether oss is the bastion CAPO v0.14 derives from
// the same spec (a cluster taken over from CAPO): it is the same server,
// kept until the bastion's spec changes.
func capoBastion(osc *infrav1.OpenStackCluster, oss *infrav1alpha1.OpenStackServer) bool {
	b := osc.Spec.Bastion
	capo, err := serverspec.AsCAPO(serverspec.Input{
		Spec:             *b.Spec,
		Path:             "spec.bastion.spec",
		Role:             serverspec.Bastion,
		AvailabilityZone: ptr.Deref(b.AvailabilityZone, ""),
		Defaults:         Defaults(osc),
	}, osc.Spec.Subnets)
	return err == nil && sameServer(oss.Spec, *capo)
}

// sameServer reports whether two server specs build the same server; the
// identity does not count (it can change in place).
func sameServer(a, b infrav1alpha1.OpenStackServerSpec) bool {
	a.IdentityRef, b.IdentityRef = infrav1.OpenStackIdentityReference{}, infrav1.OpenStackIdentityReference{}
	return apiequality.Semantic.DeepEqual(a, b)
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// deleteBastion deletes the bastion's OpenStackServer; its floating IP is
// released once the server is gone (kept if the user gave it).
func (r *Reconciler) deleteBastion(ctx context.Context, osc *infrav1.OpenStackCluster, oss *infrav1alpha1.OpenStackServer, why string) (ctrl.Result, error) {
	if oss.DeletionTimestamp.IsZero() {
		if err := r.Client.Delete(ctx, oss); err != nil && !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
	}
	if osc.Status.Bastion != nil {
		osc.Status.Bastion.State = infrav1.InstanceStateDeleted
	}
	conditions.MarkFalse(osc, infrav1.BastionReadyCondition, infrav1.BastionDeletingReason, why)
	// The server's deletion event brings the next pass; the floating IP
	// is released then.
	return ctrl.Result{RequeueAfter: 10 * time.Second}, nil
}

func (r *Reconciler) releaseBastionFIP(ctx context.Context, s scope.Scope, osc *infrav1.OpenStackCluster) error {
	// Only after a bastion existed: a cluster that never had one makes no
	// call for it.
	if osc.Status.Bastion == nil || osc.Status.ExternalNetwork == nil {
		return nil
	}
	if err := cluster.DeleteFloatingIPs(ctx, s, request(osc), request(osc).BastionFloatingIPDescription(), userBastionFIP(osc)); err != nil {
		return err
	}
	return releaseCAPOBastionFIP(ctx, s, osc)
}

// releaseCAPOBastionFIP releases the floating IP of a bastion taken over
// from CAPO: it keeps CAPO's description, which this provider's lookup by
// description does not find.
func releaseCAPOBastionFIP(ctx context.Context, s scope.Scope, osc *infrav1.OpenStackCluster) error {
	b := osc.Status.Bastion
	if b == nil || b.FloatingIP == "" || b.FloatingIP == userBastionFIP(osc) {
		return nil
	}
	return cluster.DeleteCAPOFloatingIP(ctx, s, request(osc), b.FloatingIP)
}
