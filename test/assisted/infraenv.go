package assisted

import (
	"context"
	"fmt"
	"net/url"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	aiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/agentinstall/v1beta1"
	hivev1 "github.com/ocp-capi/ocp-capi/internal/consumed/hive/v1"
)

// InfraEnvFinalizer is assisted-service's finalizer on InfraEnvs: the
// service deregisters the InfraEnv's hosts (deletes its Agents) first.
const InfraEnvFinalizer = "infraenv." + "agent-install.openshift.io/ai-deprovision"

// assisted-service's ImageCreated reasons and messages.
const (
	imageCreatedReason       = "ImageCreated"
	imageStateCreated        = "Image has been created"
	imageCreationErrorReason = "ImageCreationError"
	imageStateFailedToCreate = "Failed to create image"
)

type infraEnvReconciler struct {
	s *Simulator
	c client.Client
}

func (s *Simulator) setupInfraEnvs(mgr ctrl.Manager) error {
	r := &infraEnvReconciler{s: s, c: mgr.GetClient()}
	return ctrl.NewControllerManagedBy(mgr).
		Named("assisted-simulator-infraenv").
		WithOptions(s.controllerOptions()).
		For(&aiv1beta1.InfraEnv{}).
		Watches(&hivev1.ClusterDeployment{}, handler.EnqueueRequestsFromMapFunc(r.clusterDeploymentToInfraEnvs)).
		WatchesRawSource(source.Channel(s.infraEnvEvents, &handler.EnqueueRequestForObject{})).
		Complete(r)
}

func (r *infraEnvReconciler) clusterDeploymentToInfraEnvs(ctx context.Context, o client.Object) []reconcile.Request {
	list := &aiv1beta1.InfraEnvList{}
	if err := r.c.List(ctx, list, client.InNamespace(o.GetNamespace())); err != nil {
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		if ref := list.Items[i].Spec.ClusterRef; ref != nil && ref.Name == o.GetName() {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return out
}

func (r *infraEnvReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ie := &aiv1beta1.InfraEnv{}
	if err := r.c.Get(ctx, req.NamespacedName, ie); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	id := infraEnvID(ie.UID)
	if !ie.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.deprovision(ctx, ie, id)
	}
	if !controllerutil.ContainsFinalizer(ie, InfraEnvFinalizer) {
		base := ie.DeepCopy()
		controllerutil.AddFinalizer(ie, InfraEnvFinalizer)
		if err := r.c.Patch(ctx, ie, client.MergeFrom(base)); err != nil {
			return ctrl.Result{}, err
		}
	}
	r.s.mu.Lock()
	r.s.infraEnvs[id] = req.NamespacedName
	failure := r.s.images[req.NamespacedName]
	r.s.mu.Unlock()

	base := ie.DeepCopy()
	now := metav1.Now()
	cond := aiv1beta1.Condition{Type: aiv1beta1.ImageCreatedCondition, Status: corev1.ConditionTrue,
		Reason: imageCreatedReason, Message: imageStateCreated}
	var requeue time.Duration
	if ref := ie.Spec.ClusterRef; ref != nil {
		cd := &hivev1.ClusterDeployment{}
		if err := r.c.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, cd); err != nil {
			if !apierrors.IsNotFound(err) {
				return ctrl.Result{}, err
			}
			cond = aiv1beta1.Condition{Type: aiv1beta1.ImageCreatedCondition, Status: corev1.ConditionUnknown,
				Reason: imageCreationErrorReason,
				Message: fmt.Sprintf("%s: failed to get clusterDeployment with name %s in namespace %s: %v",
					imageStateFailedToCreate, ref.Name, ref.Namespace, err)}
		}
	}
	if failure != "" {
		cond = aiv1beta1.Condition{Type: aiv1beta1.ImageCreatedCondition, Status: corev1.ConditionFalse,
			Reason: imageCreationErrorReason, Message: imageStateFailedToCreate + ": " + failure}
	}

	key := r.s.apiKey(id)
	st := &ie.Status
	st.InfraEnvDebugInfo.EventsURL = r.s.baseURL + restPrefix + "/events?" + url.Values{"api_key": {key}, "infra_env_id": {id}}.Encode()
	if cond.Status == corev1.ConditionTrue {
		arch := ie.Spec.CPUArchitecture
		if arch == "" {
			arch = "x86_64"
		}
		imageType := string(ie.Spec.ImageType)
		if imageType == "" {
			imageType = string(aiv1beta1.ImageTypeMinimalISO)
		}
		version := ie.Spec.OSImageVersion
		if version == "" {
			version = "4.19"
		}
		iso := r.s.baseURL + "/images/" + id + "?" + url.Values{"api_key": {key}, "arch": {arch}, "type": {imageType}, "version": {version}}.Encode()
		if st.ISODownloadURL != iso || st.CreatedTime == nil {
			st.CreatedTime = &now
		}
		st.ISODownloadURL = iso
		boot := r.s.baseURL + "/boot-artifacts/"
		st.BootArtifacts = aiv1beta1.BootArtifacts{
			InitrdURL:     r.s.baseURL + "/images/" + id + "/pxe-initrd?" + url.Values{"api_key": {key}, "arch": {arch}, "version": {version}}.Encode(),
			RootfsURL:     boot + "rootfs?" + url.Values{"arch": {arch}, "version": {version}}.Encode(),
			KernelURL:     boot + "kernel?" + url.Values{"arch": {arch}, "version": {version}}.Encode(),
			IpxeScriptURL: r.s.baseURL + restPrefix + "/infra-envs/" + id + "/downloads/files?" + url.Values{"api_key": {key}, "file_name": {"ipxe-script"}}.Encode(),
		}
		if !r.s.opts.OmitDiscoveryIgnitionURL {
			st.BootArtifacts.DiscoveryIgnitionURL = r.s.baseURL + restPrefix + "/infra-envs/" + id + "/downloads/files?" +
				url.Values{"api_key": {key}, "file_name": {discoveryIgnKey}}.Encode()
		}
	} else {
		st.ISODownloadURL = ""
		st.BootArtifacts = aiv1beta1.BootArtifacts{}
		requeue = 30 * time.Second
	}
	setCondition(&st.Conditions, cond, now)
	if equality.Semantic.DeepEqual(base.Status, ie.Status) {
		return ctrl.Result{RequeueAfter: requeue}, nil
	}
	return ctrl.Result{RequeueAfter: requeue}, r.c.Status().Patch(ctx, ie, client.MergeFrom(base))
}

// deprovision deletes the InfraEnv's Agents, then lets it go.
func (r *infraEnvReconciler) deprovision(ctx context.Context, ie *aiv1beta1.InfraEnv, id string) error {
	r.s.mu.Lock()
	delete(r.s.infraEnvs, id)
	r.s.mu.Unlock()
	if !controllerutil.ContainsFinalizer(ie, InfraEnvFinalizer) {
		return nil
	}
	if err := r.c.DeleteAllOf(ctx, &aiv1beta1.Agent{}, client.InNamespace(ie.Namespace),
		client.MatchingLabels{aiv1beta1.InfraEnvNameLabel: ie.Name}); err != nil {
		return err
	}
	base := ie.DeepCopy()
	controllerutil.RemoveFinalizer(ie, InfraEnvFinalizer)
	return client.IgnoreNotFound(r.c.Patch(ctx, ie, client.MergeFrom(base)))
}

// setCondition sets c in conds the way custom-resource-status does: the
// transition time moves only when the status changes.
func setCondition(conds *[]aiv1beta1.Condition, c aiv1beta1.Condition, now metav1.Time) {
	for i := range *conds {
		old := &(*conds)[i]
		if old.Type != c.Type {
			continue
		}
		if old.Status == c.Status && old.Reason == c.Reason && old.Message == c.Message {
			return
		}
		c.LastTransitionTime = old.LastTransitionTime
		if old.Status != c.Status {
			c.LastTransitionTime = now
		}
		c.LastHeartbeatTime = now
		*old = c
		return
	}
	c.LastTransitionTime, c.LastHeartbeatTime = now, now
	*conds = append(*conds, c)
}
