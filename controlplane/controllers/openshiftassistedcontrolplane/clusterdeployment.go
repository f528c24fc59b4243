package openshiftassistedcontrolplane

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "github.com/ocp-capi/ocp-capi/api/controlplane/v1alpha3"
	"github.com/ocp-capi/ocp-capi/controlplane/internal/clusterinstall"
	"github.com/ocp-capi/ocp-capi/controlplane/internal/release"
	"github.com/ocp-capi/ocp-capi/internal/conditions"
	hivev1 "github.com/ocp-capi/ocp-capi/internal/consumed/hive/v1"
	hiveextv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/hiveext/v1beta1"
)

// placeholderPullSecret is the stand-in pull secret CAPOA (the provider
// this one replaces) uses for OKD, which needs none but assisted-service
// wants one.
const placeholderPullSecret = `{"auths":{"fake":{"auth":"aWQ6cGFzcwo="}}}`

// installation is the cluster's hive objects and what they say.
type installation struct {
	cd       *hivev1.ClusterDeployment
	imageSet *hivev1.ClusterImageSet
	aci      *hiveextv1beta1.AgentClusterInstall
	status   clusterinstall.Status
	// version is the OpenShift version the cluster is (being) installed
	// at: the ClusterImageSet's, which stops following
	// spec.distributionVersion once the installation starts.
	version string
}

// conflict is a name taken by an object this control plane did not make.
type conflict struct{ msg string }

func (c *conflict) Error() string { return c.msg }

func conflictf(format string, args ...any) error { return &conflict{msg: fmt.Sprintf(format, args...)} }

// reconcileClusterObjects ensures, in this order, the pull secret
// placeholder (when no pull secret is named), the ClusterDeployment, the
// ClusterImageSet and the AgentClusterInstall. A nil installation means the
// flow stops here; a condition says why.
func (r *Reconciler) reconcileClusterObjects(ctx context.Context, s *scope) (*installation, ctrl.Result, error) {
	oacp := s.oacp
	fail := func(err error) (*installation, ctrl.Result, error) {
		var c *conflict
		if errors.As(err, &c) {
			conditions.MarkFalse(oacp, controlplanev1.AvailableCondition, controlplanev1.InstallationNotStartedReason, c.msg)
			return nil, ctrl.Result{}, nil
		}
		var p *importPending
		if errors.As(err, &p) {
			conditions.MarkFalse(oacp, controlplanev1.AvailableCondition, controlplanev1.ImportingClusterReason, p.msg)
			return nil, ctrl.Result{RequeueAfter: importRetry}, nil
		}
		conditions.MarkFalse(oacp, controlplanev1.AvailableCondition, controlplanev1.InstallationNotStartedReason, err.Error())
		return nil, ctrl.Result{}, err
	}
	pullSecret, err := r.ensurePullSecret(ctx, s)
	if err != nil {
		return fail(err)
	}
	inst := &installation{}
	if inst.cd, err = r.ensureClusterDeployment(ctx, s, pullSecret); err != nil {
		return fail(err)
	}
	oacp.Status.ClusterDeploymentRef = &controlplanev1.LocalObjectReference{Name: inst.cd.Name}

	// The installation's state decides what may still change; read the ACI
	// first.
	aci := &hiveextv1beta1.AgentClusterInstall{}
	switch err := r.Client.Get(ctx, client.ObjectKeyFromObject(oacp), aci); {
	case apierrors.IsNotFound(err):
		aci = nil
	case err != nil:
		return fail(err)
	}
	inst.status = clusterinstall.StateOf(aci)

	if inst.imageSet, err = r.ensureClusterImageSet(ctx, s, inst.status.Started()); err != nil {
		return fail(err)
	}
	oacp.Status.ClusterImageSetRef = &controlplanev1.LocalObjectReference{Name: inst.imageSet.Name}
	inst.version = inst.imageSet.Annotations[controlplanev1.DistributionVersionAnnotation]

	workers, err := r.workers(ctx, s)
	if err != nil {
		return fail(err)
	}
	if inst.aci, err = r.ensureAgentClusterInstall(ctx, s, aci, inst, workers); err != nil {
		return fail(err)
	}
	return inst, ctrl.Result{}, nil
}

// ensurePullSecret returns the name of the pull secret: the configured one,
// or a placeholder Secret made for the control plane (CAPOA wrote its name
// into the spec; this provider leaves the spec alone: docs/controlplane.md,
// Differences from CAPOA).
func (r *Reconciler) ensurePullSecret(ctx context.Context, s *scope) (string, error) {
	oacp := s.oacp
	if ref := oacp.Spec.Config.PullSecretRef; ref != nil && ref.Name != "" {
		return ref.Name, nil
	}
	name := oacp.Name + "-pull-secret"
	secret := &corev1.Secret{}
	key := types.NamespacedName{Namespace: oacp.Namespace, Name: name}
	// A foreign Secret of that name has no label: it is looked up uncached
	// before one is made.
	switch err := r.getSecret(ctx, key, secret); {
	case apierrors.IsNotFound(err):
		secret = &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: oacp.Namespace, Labels: s.labels(),
				OwnerReferences: []metav1.OwnerReference{s.ownerRef()}},
			Type: corev1.SecretTypeDockerConfigJson,
			Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(placeholderPullSecret)},
		}
		if err := r.Client.Create(ctx, secret); err != nil && !apierrors.IsAlreadyExists(err) {
			return "", fmt.Errorf("creating the placeholder pull secret %s: %w", name, err)
		}
		r.event(oacp, secret, "PullSecretCreated", "Create",
			"Created the placeholder pull secret %s (spec.config.pullSecretRef is unset)", name)
		return name, nil
	case err != nil:
		return "", err
	}
	if !metav1.IsControlledBy(secret, oacp) {
		return "", conflictf("spec.config.pullSecretRef is unset and Secret %s, where the placeholder pull secret goes, "+
			"is not this control plane's: name a pull secret in spec.config.pullSecretRef", name)
	}
	return name, nil
}

// ensureClusterDeployment creates the ClusterDeployment (named after the
// control plane) or brings the fields this provider manages back in line.
func (r *Reconciler) ensureClusterDeployment(ctx context.Context, s *scope, pullSecret string) (*hivev1.ClusterDeployment, error) {
	oacp := s.oacp
	desired := clusterinstall.ClusterDeploymentSpec(oacp, s.clusterName, pullSecret)
	cd := &hivev1.ClusterDeployment{}
	err := r.Client.Get(ctx, client.ObjectKeyFromObject(oacp), cd)
	switch {
	case apierrors.IsNotFound(err):
		// An installed cluster without a ClusterDeployment came from
		// another management cluster: import it (import.go).
		kubeconfig, err := r.installedKubeconfig(ctx, s)
		if err != nil {
			return nil, err
		}
		if kubeconfig != nil {
			meta, err := r.importMetadata(ctx, s, kubeconfig)
			if err != nil {
				return nil, err
			}
			desired.Installed, desired.ClusterMetadata = true, meta
		}
		cd = &hivev1.ClusterDeployment{
			ObjectMeta: metav1.ObjectMeta{Name: oacp.Name, Namespace: oacp.Namespace, Labels: s.labels(),
				OwnerReferences: []metav1.OwnerReference{s.ownerRef()}},
			Spec: desired,
		}
		if err := r.Client.Create(ctx, cd); err != nil {
			if apierrors.IsAlreadyExists(err) {
				return nil, fmt.Errorf("ClusterDeployment %s appeared meanwhile: %w", cd.Name, err)
			}
			return nil, fmt.Errorf("creating ClusterDeployment %s: %w", cd.Name, err)
		}
		if desired.Installed {
			r.event(oacp, cd, "ClusterImported", "Import",
				"Imported the installed cluster (cluster ID %s, infrastructure ID %s) into this management cluster's assisted-service: "+
					"ClusterDeployment %s with installed: true; no host is installed again", desired.ClusterMetadata.ClusterID,
				desired.ClusterMetadata.InfraID, cd.Name)
			return cd, nil
		}
		r.event(oacp, cd, "ClusterDeploymentCreated", "Create", "Created ClusterDeployment %s", cd.Name)
		return cd, nil
	case err != nil:
		return nil, err
	}
	adopt, err := updatable(cd, "ClusterDeployment", s)
	if err != nil {
		return nil, err
	}
	base := cd.DeepCopy()
	changed := clusterinstall.ApplyClusterDeployment(&cd.Spec, desired)
	// hive writes the rest of the ClusterDeployment.
	if err := r.finishUpdate(ctx, s, "ClusterDeployment", cd, base, adopt, s.labels(), changed); err != nil {
		return nil, err
	}
	return cd, nil
}

// ensureClusterImageSet creates the cluster-scoped ClusterImageSet with the
// release image of spec.distributionVersion, and keeps it in line until the
// installation starts; from then on it records what was installed.
func (r *Reconciler) ensureClusterImageSet(ctx context.Context, s *scope, started bool) (*hivev1.ClusterImageSet, error) {
	oacp := s.oacp
	name := clusterinstall.ClusterImageSetName(oacp.Namespace, oacp.Name)
	owner := oacp.Namespace + "/" + oacp.Name
	image := releaseImage(oacp)
	version := strings.TrimPrefix(oacp.Spec.DistributionVersion, "v")
	is := &hivev1.ClusterImageSet{}
	err := r.Client.Get(ctx, types.NamespacedName{Name: name}, is)
	switch {
	case apierrors.IsNotFound(err):
		// Cluster-scoped: no owner reference to a namespaced object is
		// possible, so the deletion removes it explicitly.
		is = &hivev1.ClusterImageSet{
			ObjectMeta: metav1.ObjectMeta{Name: name,
				Labels:      map[string]string{clusterv1.ClusterNameLabel: s.clusterName},
				Annotations: map[string]string{controlplanev1.OwnerAnnotation: owner, controlplanev1.DistributionVersionAnnotation: version}},
			Spec: hivev1.ClusterImageSetSpec{ReleaseImage: image},
		}
		if v := oacp.Labels[clusterv1.WatchLabel]; v != "" {
			is.Labels[clusterv1.WatchLabel] = v
		}
		if err := r.Client.Create(ctx, is); err != nil {
			return nil, fmt.Errorf("creating ClusterImageSet %s: %w", name, err)
		}
		r.event(oacp, is, "ClusterImageSetCreated", "Create", "Created ClusterImageSet %s with release image %s", name, image)
		return is, nil
	case err != nil:
		return nil, err
	}
	if is.Annotations[controlplanev1.OwnerAnnotation] != owner {
		return nil, conflictf("ClusterImageSet %s exists and belongs to %q, not to this control plane: delete it", name,
			is.Annotations[controlplanev1.OwnerAnnotation])
	}
	if started || (is.Spec.ReleaseImage == image && is.Annotations[controlplanev1.DistributionVersionAnnotation] == version) {
		return is, nil
	}
	base := is.DeepCopy()
	is.Spec.ReleaseImage = image
	is.Annotations[controlplanev1.DistributionVersionAnnotation] = version
	if err := r.Client.Patch(ctx, is, client.MergeFrom(base)); err != nil {
		return nil, fmt.Errorf("updating ClusterImageSet %s: %w", name, err)
	}
	r.event(oacp, is, "ClusterImageSetUpdated", "Update", "ClusterImageSet %s now has release image %s (OpenShift %s)", name, image, version)
	return is, nil
}

// releaseImage is the release image of spec.distributionVersion.
func releaseImage(oacp *controlplanev1.OpenshiftAssistedControlPlane) string {
	return release.Image(oacp.Spec.DistributionVersion, oacp.Spec.OpenshiftAssistedConfigSpec.CpuArchitecture,
		oacp.Annotations[controlplanev1.ReleaseImageRepositoryOverrideAnnotation], oacp.Spec.Config.ReleaseImage)
}

// workers counts the workers of the cluster's MachineDeployments and
// MachineSets.
func (r *Reconciler) workers(ctx context.Context, s *scope) (int32, error) {
	mds := &clusterv1.MachineDeploymentList{}
	if err := r.Client.List(ctx, mds, client.InNamespace(s.oacp.Namespace)); err != nil {
		return 0, err
	}
	mss := &clusterv1.MachineSetList{}
	if err := r.Client.List(ctx, mss, client.InNamespace(s.oacp.Namespace)); err != nil {
		return 0, err
	}
	return clusterinstall.Workers(s.clusterName, mds.Items, mss.Items), nil
}

// ensureAgentClusterInstall creates the AgentClusterInstall (named after
// the control plane) or updates what may still change: everything before
// the installation starts, the provision requirements once it completed.
func (r *Reconciler) ensureAgentClusterInstall(ctx context.Context, s *scope, aci *hiveextv1beta1.AgentClusterInstall, inst *installation, workers int32) (*hiveextv1beta1.AgentClusterInstall, error) {
	oacp := s.oacp
	desired, overrides, err := clusterinstall.AgentClusterInstall(clusterinstall.InstallInput{
		OACP: oacp, Cluster: s.cluster, ImageSet: inst.imageSet.Name, Workers: workers,
	})
	if err != nil {
		return nil, conflictf("cannot make the AgentClusterInstall: %v", err)
	}
	labels := mergeLabels(s.labels(), map[string]string{clusterinstall.ConsumerLabel: clusterinstall.ConsumerValue})
	if aci == nil {
		aci = &hiveextv1beta1.AgentClusterInstall{
			ObjectMeta: metav1.ObjectMeta{Name: oacp.Name, Namespace: oacp.Namespace, Labels: labels,
				OwnerReferences: []metav1.OwnerReference{s.ownerRef()}},
			Spec: desired,
		}
		clusterinstall.ApplyAnnotation(aci, overrides)
		if err := r.Client.Create(ctx, aci); err != nil {
			return nil, fmt.Errorf("creating AgentClusterInstall %s: %w", aci.Name, err)
		}
		r.event(oacp, aci, "AgentClusterInstallCreated", "Create",
			"Created AgentClusterInstall %s for %d control-plane and %d worker agents", aci.Name, desired.ProvisionRequirements.ControlPlaneAgents, workers)
		return aci, nil
	}
	adopt, err := updatable(aci, "AgentClusterInstall", s)
	if err != nil {
		return nil, err
	}
	base := aci.DeepCopy()
	st := inst.status
	changed := clusterinstall.ApplyAgentClusterInstall(&aci.Spec, desired, st.Started(), st.Started() && !st.Completed())
	if !st.Started() && clusterinstall.ApplyAnnotation(aci, overrides) {
		changed = append(changed, "install-config overrides")
	}
	// assisted-service writes the rest of the AgentClusterInstall.
	if err := r.finishUpdate(ctx, s, "AgentClusterInstall", aci, base, adopt, labels, changed); err != nil {
		return nil, err
	}
	return aci, nil
}

// updatable checks that obj, of kind, found under the name the control
// plane gives it, is the control plane's (or carries its labels without a
// controller: adopt) and is not being deleted.
func updatable(obj client.Object, kind string, s *scope) (adopt bool, err error) {
	owned, adopt := ownedBy(obj, s)
	if !owned {
		return false, conflictf("%s %s exists and was not made by this control plane: delete or rename it", kind, obj.GetName())
	}
	if !obj.GetDeletionTimestamp().IsZero() {
		return false, conflictf("%s %s is being deleted; a new one is made once it is gone", kind, obj.GetName())
	}
	return adopt, nil
}

// finishUpdate completes the update of an object of kind that the control
// plane made, whose spec changes since base are named in changed: it
// adopts it (adopt), adds labels to its own, and writes the whole change,
// if any, with a merge patch of the fields we manage (another controller
// writes the rest, and fields we do not model must survive), recorded in an
// event.
func (r *Reconciler) finishUpdate(ctx context.Context, s *scope, kind string, obj, base client.Object, adopt bool, labels map[string]string,
	changed []string) error {
	if adopt {
		adoptRefs(obj, s)
		changed = append(changed, "ownerReferences")
	}
	if l := mergeLabels(obj.GetLabels(), labels); !maps.Equal(l, obj.GetLabels()) {
		obj.SetLabels(l)
		changed = append(changed, "labels")
	}
	if len(changed) == 0 {
		return nil
	}
	if err := r.Client.Patch(ctx, obj, client.MergeFrom(base)); err != nil {
		return fmt.Errorf("updating %s %s: %w", kind, obj.GetName(), err)
	}
	r.event(s.oacp, obj, kind+"Updated", "Update", "Updated %s %s: %s", kind, obj.GetName(), strings.Join(changed, ", "))
	return nil
}
