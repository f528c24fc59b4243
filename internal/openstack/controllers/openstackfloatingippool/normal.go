package openstackfloatingippool

import (
	"context"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ipamv1 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/conditions"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/fippool"
)

func (r *Reconciler) reconcileNormal(ctx context.Context, pool *infrav1alpha1.OpenStackFloatingIPPool) (ctrl.Result, error) {
	addrs, err := r.addresses(ctx, pool)
	if err != nil {
		return ctrl.Result{}, err
	}
	all, err := r.claims(ctx, pool)
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := r.dropOrphans(ctx, addrs, all); err != nil {
		return ctrl.Result{}, err
	}
	claims := pending(all, addrs)
	// OpenStack is asked only when there is something to do.
	if pool.Status.FloatingIPNetwork != nil && len(claims) == 0 && !anyDeleting(addrs) {
		r.record(pool, addrs, nil)
		return ctrl.Result{}, nil
	}
	n, err := r.neutron(ctx, pool)
	if err != nil {
		res, rerr, _ := conditions.Outcome(pool, infrav1alpha1.ClaimsFulfilledCondition, err)
		return res, rerr
	}
	if err := r.release(ctx, n, pool, addrs); err != nil {
		res, rerr, _ := conditions.Outcome(pool, infrav1alpha1.ClaimsFulfilledCondition, err)
		return res, rerr
	}
	if pool.Status.FloatingIPNetwork == nil {
		net, err := fippool.ExternalNetwork(ctx, n, pool.Spec.FloatingIPNetwork)
		if err != nil {
			res, rerr, _ := conditions.Outcome(pool, infrav1alpha1.FloatingIPNetworkReadyCondition, err)
			conditions.MarkFalse(pool, infrav1alpha1.ClaimsFulfilledCondition, infrav1.WaitingForDependenciesReason, "waiting for the floating IP network")
			return res, rerr
		}
		pool.Status.FloatingIPNetwork = net
	}
	var waiting []string
	for _, claim := range claims {
		if a := addrs[claim.Name]; a != nil {
			// Made on an earlier pass whose claim write failed.
			if err := r.bind(ctx, claim, a); err != nil {
				return ctrl.Result{}, err
			}
			continue
		}
		ip, err := r.take(ctx, n, pool, addrs)
		if err != nil {
			r.record(pool, addrs, nil)
			res, rerr, _ := conditions.Outcome(pool, infrav1alpha1.ClaimsFulfilledCondition, err)
			return res, rerr
		}
		if ip == "" {
			waiting = append(waiting, claim.Name)
			continue
		}
		a, err := r.createAddress(ctx, pool, claim, ip)
		if err != nil {
			// A created floating IP carries the pool's tag: the next
			// pass finds it again.
			r.record(pool, addrs, nil)
			return ctrl.Result{}, err
		}
		r.Recorder.Eventf(pool, claim, corev1.EventTypeNormal, "AddressAllocated", "Allocate", "Floating IP %s for IPAddressClaim %s", ip, claim.Name)
		addrs[a.Name] = a
		if err := r.bind(ctx, claim, a); err != nil {
			r.record(pool, addrs, nil)
			return ctrl.Result{}, err
		}
	}
	r.record(pool, addrs, waiting)
	return ctrl.Result{}, nil
}

// record writes what the pool holds into its status (sorted, so a pass
// that changed nothing writes nothing) and ClaimsFulfilled.
func (r *Reconciler) record(pool *infrav1alpha1.OpenStackFloatingIPPool, addrs map[string]*ipamv1.IPAddress, waiting []string) {
	claimed := claimedIPs(addrs)
	pool.Status.ClaimedIPs = claimed
	pool.Status.AvailableIPs = available(pool, claimed)
	if pool.Status.FailedIPs != nil {
		slices.Sort(pool.Status.FailedIPs)
	}
	if pool.Status.FloatingIPNetwork != nil {
		conditions.MarkTrue(pool, infrav1alpha1.FloatingIPNetworkReadyCondition, "network "+pool.Status.FloatingIPNetwork.Name)
	}
	switch {
	case len(waiting) > 0:
		conditions.MarkFalse(pool, infrav1alpha1.ClaimsFulfilledCondition, infrav1alpha1.MaxIPsReachedReason,
			fmt.Sprintf("%d IPAddressClaims wait (%s): maxIPs is %d and %d addresses are handed out", len(waiting), waiting[0], ptr.Deref(pool.Spec.MaxIPs, 0), len(claimed)))
	case pool.Status.FloatingIPNetwork != nil:
		conditions.MarkTrue(pool, infrav1alpha1.ClaimsFulfilledCondition, fmt.Sprintf("%d addresses handed out", len(claimed)))
	}
}

// claims are the claims of the pool, by name.
func (r *Reconciler) claims(ctx context.Context, pool *infrav1alpha1.OpenStackFloatingIPPool) (map[string]*ipamv1.IPAddressClaim, error) {
	list := &ipamv1.IPAddressClaimList{}
	if err := r.Client.List(ctx, list, client.InNamespace(pool.Namespace)); err != nil {
		return nil, err
	}
	out := map[string]*ipamv1.IPAddressClaim{}
	for i := range list.Items {
		c := &list.Items[i]
		if ours(c.Spec.PoolRef) && c.Spec.PoolRef.Name == pool.Name {
			out[c.Name] = c
		}
	}
	return out, nil
}

// pending are the live claims without an address, by name.
func pending(claims map[string]*ipamv1.IPAddressClaim, addrs map[string]*ipamv1.IPAddress) []*ipamv1.IPAddressClaim {
	var out []*ipamv1.IPAddressClaim
	for _, name := range slices.Sorted(maps.Keys(claims)) {
		c := claims[name]
		if !c.DeletionTimestamp.IsZero() || (c.Status.AddressRef.Name != "" && addrs[c.Status.AddressRef.Name] != nil) {
			continue
		}
		out = append(out, c)
	}
	return out
}

// dropOrphans deletes the IPAddresses whose claim is gone or going (the
// garbage collector would, through the owner reference; this does not
// wait for it). Their release follows on the next pass.
func (r *Reconciler) dropOrphans(ctx context.Context, addrs map[string]*ipamv1.IPAddress, claims map[string]*ipamv1.IPAddressClaim) error {
	for _, a := range addrs {
		if !a.DeletionTimestamp.IsZero() {
			continue
		}
		if c := claims[a.Spec.ClaimRef.Name]; c != nil && c.DeletionTimestamp.IsZero() {
			continue
		}
		if err := r.Client.Delete(ctx, a); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	return nil
}

// take picks an address for a claim: an available one that still exists
// (one that does not joins failedIPs), else, below maxIPs, a floating IP
// the pool created earlier and lost track of, else a new one. "" means
// maxIPs is reached.
func (r *Reconciler) take(ctx context.Context, n fippool.Neutron, pool *infrav1alpha1.OpenStackFloatingIPPool, addrs map[string]*ipamv1.IPAddress) (string, error) {
	claimed := claimedIPs(addrs)
	for _, ip := range available(pool, claimed) {
		f, err := fippool.Find(ctx, n, ip)
		if err != nil {
			return "", err
		}
		if f != nil {
			return ip, nil
		}
		pool.Status.FailedIPs = with(pool.Status.FailedIPs, ip)
	}
	if m := pool.Spec.MaxIPs; m != nil && len(claimed) >= *m {
		return "", nil
	}
	tagged, err := fippool.Tagged(ctx, n, pool.FloatingIPTag())
	if err != nil {
		return "", err
	}
	for _, ip := range tagged {
		if !contains(claimed, ip) && !contains(pool.Status.FailedIPs, ip) {
			pool.Status.AvailableIPs = with(pool.Status.AvailableIPs, ip)
			return ip, nil
		}
	}
	ip, err := fippool.Create(ctx, n, pool.Status.FloatingIPNetwork.ID,
		"Created by ocp-capi OpenStackFloatingIPPool "+pool.Namespace+"/"+pool.Name, pool.FloatingIPTag())
	if err != nil {
		return "", err
	}
	pool.Status.AvailableIPs = with(pool.Status.AvailableIPs, ip)
	return ip, nil
}

// createAddress makes the IPAddress of claim: same name, owned by the
// claim, with the finalizer that makes its release go through the pool.
func (r *Reconciler) createAddress(ctx context.Context, pool *infrav1alpha1.OpenStackFloatingIPPool, claim *ipamv1.IPAddressClaim, ip string) (*ipamv1.IPAddress, error) {
	a := &ipamv1.IPAddress{
		ObjectMeta: metav1.ObjectMeta{
			Name: claim.Name, Namespace: claim.Namespace,
			Labels:     claim.Labels,
			Finalizers: []string{infrav1alpha1.DeleteFloatingIPFinalizer},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: ipamv1.GroupVersion.String(), Kind: "IPAddressClaim", Name: claim.Name, UID: claim.UID,
			}},
		},
		Spec: ipamv1.IPAddressSpec{
			ClaimRef: ipamv1.IPAddressClaimReference{Name: claim.Name},
			PoolRef:  ipamv1.IPPoolReference{APIGroup: infrav1alpha1.GroupVersion.Group, Kind: Kind, Name: pool.Name},
			Address:  ip,
			Prefix:   ptr.To[int32](32),
		},
	}
	if err := r.Client.Create(ctx, a); err != nil {
		return nil, err
	}
	return a, nil
}

// bind points the claim at its address.
func (r *Reconciler) bind(ctx context.Context, claim *ipamv1.IPAddressClaim, a *ipamv1.IPAddress) error {
	if claim.Status.AddressRef.Name == a.Name {
		return nil
	}
	base := claim.DeepCopy()
	claim.Status.AddressRef.Name = a.Name
	return r.Client.Status().Patch(ctx, claim, client.MergeFrom(base))
}

func anyDeleting(addrs map[string]*ipamv1.IPAddress) bool {
	for _, a := range addrs {
		if !a.DeletionTimestamp.IsZero() {
			return true
		}
	}
	return false
}

// claimedIPs are the addresses of the live IPAddresses, sorted.
func claimedIPs(addrs map[string]*ipamv1.IPAddress) []string {
	out := []string{}
	for _, a := range addrs {
		if a.DeletionTimestamp.IsZero() {
			out = with(out, a.Spec.Address)
		}
	}
	return out
}

// available are the pool's addresses not handed out: those it kept and
// the pre-allocated ones, less the claimed and the failed, sorted.
func available(pool *infrav1alpha1.OpenStackFloatingIPPool, claimed []string) []string {
	out := []string{}
	for _, ip := range slices.Concat(pool.Spec.PreAllocatedFloatingIPs, pool.Status.AvailableIPs) {
		if !contains(claimed, ip) && !contains(pool.Status.FailedIPs, ip) {
			out = with(out, ip)
		}
	}
	return out
}

func contains(s []string, v string) bool { return slices.Contains(s, v) }

// with adds v to the set s and sorts it.
func with(s []string, v string) []string {
	if !slices.Contains(s, v) {
		s = append(slices.Clone(s), v)
	}
	slices.Sort(s)
	return s
}

// without removes v from s.
func without(s []string, v string) []string {
	return slices.DeleteFunc(slices.Clone(s), func(x string) bool { return x == v })
}
