package openstackserver

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ipamv1 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	capiconditions "sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/conditions"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/clients"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/fippool"
	"github.com/ocp-capi/ocp-capi/internal/skeleton"
)

// ClaimName is the IPAddressClaim of a server with floatingIPPoolRef
// (CAPO's name, so that CAPO's claims are found after a switch).
func ClaimName(server string) string { return server + "-floating-ip-address" }

// claimFloatingAddress makes the server's IPAddressClaim on its pool and
// waits, before anything is created in OpenStack, for the pool's
// IPAddress. The claim's update brings the next pass.
func (r *Reconciler) claimFloatingAddress(ctx context.Context, s *serverScope) (ctrl.Result, error) {
	oss := s.oss
	ref := oss.Spec.FloatingIPPoolRef
	if ref == nil {
		conditions.MarkTrue(oss, infrav1.FloatingAddressFromPoolReadyCondition, "no floatingIPPoolRef", infrav1.NotRequiredReason)
		return ctrl.Result{}, nil
	}
	claim := &ipamv1.IPAddressClaim{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: oss.Namespace, Name: ClaimName(oss.Name)}, claim)
	switch {
	case apierrors.IsNotFound(err):
		if claim, err = r.createClaim(ctx, oss, ref); err != nil {
			return skeleton.Stop(ctrl.Result{}, err)
		}
	case err != nil:
		return skeleton.Stop(ctrl.Result{}, err)
	}
	if claim.Status.AddressRef.Name == "" {
		conditions.MarkFalse(oss, infrav1.FloatingAddressFromPoolReadyCondition, infrav1.WaitingForIPAddressReason,
			fmt.Sprintf("waiting for %s %s to fulfil IPAddressClaim %s", ref.Kind, ref.Name, claim.Name))
		return skeleton.Stop(ctrl.Result{}, nil)
	}
	addr := &ipamv1.IPAddress{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: oss.Namespace, Name: claim.Status.AddressRef.Name}, addr); err != nil {
		if apierrors.IsNotFound(err) {
			conditions.MarkFalse(oss, infrav1.FloatingAddressFromPoolReadyCondition, infrav1.WaitingForIPAddressReason,
				fmt.Sprintf("waiting for IPAddress %s", claim.Status.AddressRef.Name))
			return skeleton.Stop(ctrl.Result{}, nil)
		}
		return skeleton.Stop(ctrl.Result{}, err)
	}
	s.floatingIP = addr.Spec.Address
	if !associated(oss, s.floatingIP) {
		conditions.MarkFalse(oss, infrav1.FloatingAddressFromPoolReadyCondition, infrav1.WaitingForDependenciesReason,
			fmt.Sprintf("floating IP %s is associated with the first port once the server is ACTIVE", s.floatingIP))
	}
	return ctrl.Result{}, nil
}

func (r *Reconciler) createClaim(ctx context.Context, oss *infrav1alpha1.OpenStackServer, ref *corev1.TypedLocalObjectReference) (*ipamv1.IPAddressClaim, error) {
	claim := &ipamv1.IPAddressClaim{
		ObjectMeta: metav1.ObjectMeta{
			Name: ClaimName(oss.Name), Namespace: oss.Namespace,
			Labels:     map[string]string{},
			Finalizers: []string{infrav1alpha1.IPClaimFinalizer},
		},
		Spec: ipamv1.IPAddressClaimSpec{
			ClusterName: oss.Labels[clusterv1.ClusterNameLabel],
			PoolRef:     ipamv1.IPPoolReference{APIGroup: ptr.Deref(ref.APIGroup, ""), Kind: ref.Kind, Name: ref.Name},
		},
	}
	for _, l := range []string{clusterv1.ClusterNameLabel, clusterv1.WatchLabel} {
		if v, ok := oss.Labels[l]; ok {
			claim.Labels[l] = v
		}
	}
	if err := controllerutil.SetControllerReference(oss, claim, r.Client.Scheme()); err != nil {
		return nil, err
	}
	if err := r.Client.Create(ctx, claim); err != nil {
		return nil, err
	}
	r.Recorder.Eventf(oss, claim, corev1.EventTypeNormal, "IPAddressClaimCreated", "Create", "Created IPAddressClaim %s on %s %s", claim.Name, ref.Kind, ref.Name)
	return claim, nil
}

// associated tells whether the condition already records the floating IP
// on the server's port: then OpenStack is not asked again.
func associated(oss *infrav1alpha1.OpenStackServer, ip string) bool {
	c := capiconditions.Get(oss, infrav1.FloatingAddressFromPoolReadyCondition)
	return c != nil && c.Status == metav1.ConditionTrue && c.Message == associatedMessage(oss, ip)
}

func associatedMessage(oss *infrav1alpha1.OpenStackServer, ip string) string {
	return fmt.Sprintf("floating IP %s on port %s", ip, firstPort(oss))
}

func firstPort(oss *infrav1alpha1.OpenStackServer) string {
	if oss.Status.Resources == nil || len(oss.Status.Resources.Ports) == 0 {
		return ""
	}
	return oss.Status.Resources.Ports[0].ID
}

// associateFloatingAddress points the pool's floating IP at the server's
// first port once the server is ACTIVE.
func (r *Reconciler) associateFloatingAddress(ctx context.Context, s *serverScope) (ctrl.Result, error) {
	oss := s.oss
	if s.floatingIP == "" || s.instanceID == "" || ptr.Deref(oss.Status.InstanceState, "") != infrav1.InstanceStateActive || associated(oss, s.floatingIP) {
		return ctrl.Result{}, nil
	}
	port := firstPort(oss)
	f, err := fippool.Find(ctx, fippool.From(s.cloud.Clients), s.floatingIP)
	if err == nil && f == nil {
		err = &clients.Error{Class: clients.Terminal, Reason: clients.ReasonNotFound, Message: fmt.Sprintf("floating IP %s does not exist", s.floatingIP)}
	}
	if err == nil && f.PortID != port {
		if _, err = s.cloud.Clients.NetworkInfra.AssociateFloatingIP(ctx, f.ID, port); err != nil {
			err = clients.Classify(err, fmt.Sprintf("associating floating IP %s with port %s", s.floatingIP, port))
		}
	}
	if err != nil {
		return skeleton.Stop(r.outcome(oss, infrav1.FloatingAddressFromPoolReadyCondition, err))
	}
	r.Recorder.Eventf(oss, nil, corev1.EventTypeNormal, "FloatingIPAssociated", "Associate", "Floating IP %s on port %s", s.floatingIP, port)
	conditions.MarkTrue(oss, infrav1.FloatingAddressFromPoolReadyCondition, associatedMessage(oss, s.floatingIP))
	return ctrl.Result{}, nil
}

// releaseClaim lets the server's IPAddressClaim go once the server and its
// ports are gone: the pool then deletes or keeps the floating IP.
func (r *Reconciler) releaseClaim(ctx context.Context, oss *infrav1alpha1.OpenStackServer) error {
	claim := &ipamv1.IPAddressClaim{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: oss.Namespace, Name: ClaimName(oss.Name)}, claim); err != nil {
		return client.IgnoreNotFound(err)
	}
	// Ours, or CAPO's for the same object (CAPO's owner reference is not
	// a controller reference).
	if !slices.ContainsFunc(claim.OwnerReferences, func(o metav1.OwnerReference) bool { return o.UID == oss.UID }) {
		return nil
	}
	if controllerutil.ContainsFinalizer(claim, infrav1alpha1.IPClaimFinalizer) {
		base := claim.DeepCopy()
		controllerutil.RemoveFinalizer(claim, infrav1alpha1.IPClaimFinalizer)
		if err := r.Client.Patch(ctx, claim, client.MergeFrom(base)); err != nil {
			return client.IgnoreNotFound(err)
		}
	}
	return client.IgnoreNotFound(r.Client.Delete(ctx, claim))
}
