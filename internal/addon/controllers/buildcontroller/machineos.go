package buildcontroller

import (
	"context"
	"fmt"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ocp-capi/ocp-capi/internal/addon/controllers/write"
	osbuild "github.com/ocp-capi/ocp-capi/internal/addon/internal/osbuild"
	mcfgv1 "github.com/ocp-capi/ocp-capi/internal/consumed/machineconfiguration/v1"
)

// The MachineOSConfig flow (docs/addon/build-controller.md, "MachineOSConfig
// and MachineOSBuild"). A pool with a MachineOSConfig is driven by it, with
// or without the layering-enabled label: the MachineOSConfig supplies the
// push repository, the secrets and the Containerfile, and every build is
// also a MachineOSBuild. The engine (build ID, rebuild rules, history,
// pruning, the pool's conditions and annotations) is the label flow's.

// machineOS is the MachineOSConfig flow's part of a poolScope.
type machineOS struct {
	config *mcfgv1.MachineOSConfig
	// builds are the MachineOSBuilds made for the pool, from the cache.
	builds []mcfgv1.MachineOSBuild
}

// byName returns the MachineOSBuild named name controlled by the
// MachineOSConfig, or nil.
func (m *machineOS) byName(name string) *mcfgv1.MachineOSBuild {
	for i := range m.builds {
		b := &m.builds[i]
		if b.Name == name && controlledBy(b, m.config) {
			return b
		}
	}
	return nil
}

func controlledBy(b *mcfgv1.MachineOSBuild, mosc *mcfgv1.MachineOSConfig) bool {
	ref := metav1.GetControllerOf(b)
	return ref != nil && ref.UID == mosc.UID
}

// machineOSConfigFor returns the MachineOSConfig that drives pool, or nil:
// none, or the API server does not serve MachineOSConfigs.
func (r *Reconciler) machineOSConfigFor(ctx context.Context, pool string) (*mcfgv1.MachineOSConfig, error) {
	if !r.machineOSAPI {
		return nil, nil
	}
	list := &mcfgv1.MachineOSConfigList{}
	if err := r.Client.List(ctx, list); err != nil {
		return nil, fmt.Errorf("listing MachineOSConfigs: %w", err)
	}
	return osbuild.MachineOSConfigFor(pool, list.Items), nil
}

// machineOSBuilds lists, from the cache, the MachineOSBuilds made for pool.
func (r *Reconciler) machineOSBuilds(ctx context.Context, pool string) ([]mcfgv1.MachineOSBuild, error) {
	if !r.machineOSAPI {
		return nil, nil
	}
	list := &mcfgv1.MachineOSBuildList{}
	if err := r.Client.List(ctx, list, client.MatchingLabels{
		osbuild.ManagedByLabel: osbuild.ManagedByValue, osbuild.TargetPoolLabel: osbuild.PoolLabelValue(pool),
	}); err != nil {
		return nil, fmt.Errorf("listing the MachineOSBuilds of pool %s: %w", pool, err)
	}
	out := list.Items[:0]
	for _, b := range list.Items {
		if b.Annotations[osbuild.PoolAnnotation] == pool && b.DeletionTimestamp.IsZero() {
			out = append(out, b)
		}
	}
	return out, nil
}

// machineOSBuildFor is the MachineOSBuild of the pool's current rendered
// config and inputs: named s.in.PushTag.
func machineOSBuildFor(s *poolScope) *mcfgv1.MachineOSBuild {
	name := s.in.PushTag
	mosc := s.mos.config
	return &mcfgv1.MachineOSBuild{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Labels: map[string]string{
				osbuild.ManagedByLabel:       osbuild.ManagedByValue,
				osbuild.TargetPoolLabel:      osbuild.PoolLabelValue(s.pool.Name),
				osbuild.MachineOSConfigLabel: osbuild.PoolLabelValue(mosc.Name),
				osbuild.RenderedConfigLabel:  osbuild.PoolLabelValue(s.in.RenderedConfig),
				osbuild.BuildIDLabel:         s.id,
			},
			Annotations: map[string]string{
				osbuild.PoolAnnotation:                    s.pool.Name,
				osbuild.DesiredConfigAnnotation:           s.in.RenderedConfig,
				osbuild.RenderedImagePushSecretAnnotation: s.in.Builder.FinalImagePushSecret,
			},
			// The MachineOSConfig controls its builds (upstream): deleting
			// it deletes them. Not blocking its deletion needs no right on
			// machineosconfigs/finalizers.
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: mcfgv1.GroupVersion.String(), Kind: "MachineOSConfig", Name: mosc.Name, UID: mosc.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(false),
			}},
		},
		Spec: mcfgv1.MachineOSBuildSpec{
			MachineConfig:         mcfgv1.MachineConfigReference{Name: s.in.RenderedConfig},
			MachineOSConfig:       mcfgv1.MachineOSConfigReference{Name: mosc.Name},
			RenderedImagePushSpec: s.in.PushSpec(),
		},
	}
}

// recordBuild shows the build cur (observed as obs) in the status of its
// MachineOSBuild, creating it if needed. A MachineOSBuild whose conditions
// are final (the API makes them immutable) and that is older than cur is
// from an earlier attempt (a retry, a forced rebuild): it is deleted and
// made again. For a success, image is the pushed image by digest.
func (r *Reconciler) recordBuild(ctx context.Context, s *poolScope, cur client.Object, obs osbuild.Observation, image string) error {
	if s.mos == nil {
		return nil
	}
	state := osbuild.StateFor(obs)
	mosb, err := r.ensureMachineOSBuild(ctx, s, func(b *mcfgv1.MachineOSBuild) bool {
		old := osbuild.StateOf(&b.Status)
		differs := old != state || state == osbuild.BuildStateSucceeded && b.Status.DigestedImagePushSpec != image
		return old.Terminal() && differs && b.CreationTimestamp.Before(ptr.To(cur.GetCreationTimestamp()))
	})
	if err != nil || mosb == nil {
		return err
	}
	if err := r.writeBuildStatus(ctx, mosb, cur, state, image); err != nil {
		return err
	}
	// A MachineOSConfig write that failed after the MachineOSBuild's is
	// made again: its rebuild annotation must go with the new image.
	if state == osbuild.BuildStatePrepared || osbuild.StateOf(&mosb.Status) == osbuild.BuildStateSucceeded {
		return r.pointMachineOSConfig(ctx, s, mosb)
	}
	return nil
}

// writeBuildStatus makes mosb's status show the build cur in state, unless
// its conditions are final (the API refuses any change then).
func (r *Reconciler) writeBuildStatus(ctx context.Context, mosb *mcfgv1.MachineOSBuild, cur client.Object, state osbuild.BuildState, image string) error {
	if osbuild.StateOf(&mosb.Status).Terminal() {
		return nil
	}
	err := write.LockedStatusPatch(ctx, r.Client, mosb, func() bool {
		st := &mosb.Status
		changed := osbuild.SetBuildState(st, state, metav1.Now())
		start, end := osbuild.BuildTimes(cur.GetCreationTimestamp().Time, state, time.Now())
		if st.BuildStart == nil {
			st.BuildStart, changed = start, true
		}
		if end != nil && st.BuildEnd == nil {
			if !st.BuildStart.Before(end) {
				end = ptr.To(metav1.NewTime(st.BuildStart.Add(time.Second)))
			}
			st.BuildEnd, changed = end, true
		}
		if _, isJob := cur.(*batchv1.Job); isJob && st.Builder == nil {
			st.Builder = &mcfgv1.MachineOSBuilderReference{ImageBuilderType: osbuild.ImageBuilderTypeJob, Job: &mcfgv1.ObjectReference{
				Group: batchv1.SchemeGroupVersion.Group, Resource: "jobs", Namespace: cur.GetNamespace(), Name: cur.GetName(),
			}}
			changed = true
		}
		if state == osbuild.BuildStateSucceeded && st.DigestedImagePushSpec != image {
			st.DigestedImagePushSpec, changed = image, true
		}
		return changed
	})
	if err != nil {
		return fmt.Errorf("writing the status of MachineOSBuild %s: %w", mosb.Name, err)
	}
	return nil
}

// recordReuse shows that the pool's current config gets image, built
// earlier, without a build: its MachineOSBuild is Succeeded with that image
// (upstream's reuse of an image for a new MachineOSBuild), and the
// MachineOSConfig points at it.
func (r *Reconciler) recordReuse(ctx context.Context, s *poolScope, image string) error {
	if s.mos == nil {
		return nil
	}
	mosb, err := r.ensureMachineOSBuild(ctx, s, func(b *mcfgv1.MachineOSBuild) bool {
		old := osbuild.StateOf(&b.Status)
		return old.Terminal() && (old != osbuild.BuildStateSucceeded || b.Status.DigestedImagePushSpec != image)
	})
	if err != nil || mosb == nil {
		return err
	}
	if osbuild.StateOf(&mosb.Status) != osbuild.BuildStateSucceeded {
		err = write.LockedStatusPatch(ctx, r.Client, mosb, func() bool {
			changed := osbuild.SetBuildState(&mosb.Status, osbuild.BuildStateSucceeded, metav1.Now())
			if mosb.Status.DigestedImagePushSpec != image {
				mosb.Status.DigestedImagePushSpec, changed = image, true
			}
			return changed
		})
		if err != nil {
			return fmt.Errorf("writing the status of MachineOSBuild %s: %w", mosb.Name, err)
		}
	}
	return r.pointMachineOSConfig(ctx, s, mosb)
}

// ensureMachineOSBuild returns the MachineOSBuild of the pool's current
// config and inputs, creating it if it does not exist, or if stale says
// the existing one is from an earlier attempt (it is deleted first). It
// returns nil when the one just created is not readable yet.
func (r *Reconciler) ensureMachineOSBuild(ctx context.Context, s *poolScope, stale func(*mcfgv1.MachineOSBuild) bool) (*mcfgv1.MachineOSBuild, error) {
	want := machineOSBuildFor(s)
	if cur := s.mos.byName(want.Name); cur != nil {
		if !stale(cur) {
			return cur.DeepCopy(), nil
		}
		if err := r.Client.Delete(ctx, cur, client.Preconditions{UID: &cur.UID}); client.IgnoreNotFound(err) != nil && !apierrors.IsConflict(err) {
			return nil, fmt.Errorf("deleting MachineOSBuild %s of an earlier attempt: %w", cur.Name, err)
		}
	}
	switch err := r.Client.Create(ctx, want); {
	case err == nil:
		r.Recorder.Eventf(s.mos.config, want, corev1.EventTypeNormal, "MachineOSBuildCreated", "Build",
			"Created MachineOSBuild %s for %s", want.Name, s.in.RenderedConfig)
		return want, nil
	case apierrors.IsAlreadyExists(err):
		// Ours, not yet in the cache: its event brings us back.
		return nil, nil
	default:
		return nil, fmt.Errorf("creating MachineOSBuild %s: %w", want.Name, err)
	}
}

// pointMachineOSConfig makes the MachineOSConfig name mosb as its current
// build (upstream's annotation), and, once mosb has an image, its status
// name the image and the build; the rebuild annotation goes then. Its
// status's observedGeneration follows.
func (r *Reconciler) pointMachineOSConfig(ctx context.Context, s *poolScope, mosb *mcfgv1.MachineOSBuild) error {
	mosc := s.mos.config
	done := mosb.Status.DigestedImagePushSpec != ""
	err := write.LockedPatch(ctx, r.Client, mosc, func() bool {
		kv := map[string]string{osbuild.CurrentMachineOSBuildAnnotation: mosb.Name}
		if done {
			kv[osbuild.RebuildAnnotation] = ""
		}
		return setAnnotations(mosc, kv)
	})
	if err != nil {
		return fmt.Errorf("patching the annotations of MachineOSConfig %s: %w", mosc.Name, err)
	}
	err = write.LockedStatusPatch(ctx, r.Client, mosc, func() bool {
		st := &mosc.Status
		changed := false
		if st.ObservedGeneration != mosc.Generation {
			st.ObservedGeneration, changed = mosc.Generation, true
		}
		if done {
			ref := &mcfgv1.ObjectReference{Group: mcfgv1.GroupVersion.Group, Resource: "machineosbuilds", Name: mosb.Name}
			if st.CurrentImagePullSpec != mosb.Status.DigestedImagePushSpec || st.MachineOSBuild == nil || *st.MachineOSBuild != *ref {
				st.CurrentImagePullSpec, st.MachineOSBuild, changed = mosb.Status.DigestedImagePushSpec, ref, true
			}
		}
		return changed
	})
	if err != nil {
		return fmt.Errorf("patching the status of MachineOSConfig %s: %w", mosc.Name, err)
	}
	return nil
}

// syncMachineOSBuilds deletes the MachineOSBuilds of the pool that are no
// longer needed:
//   - all of them when no MachineOSConfig drives the pool, or those another
//     MachineOSConfig than the driving one controls;
//   - a succeeded one whose image is no longer in the pool's image history
//     (pruned, or about to be) and that the MachineOSConfig does not name;
//   - one that did not succeed, unless it is the current config's or its
//     build object (a failed build kept for debugging) is still there, as
//     upstream deletes a MachineOSConfig's unsuccessful builds when another
//     starts.
//
// It reports how many it deleted.
func (r *Reconciler) syncMachineOSBuilds(ctx context.Context, pool *mcfgv1.MachineConfigPool, mos *machineOS, s *poolScope) (int, error) {
	var builds []mcfgv1.MachineOSBuild
	if mos != nil {
		builds = mos.builds
	} else {
		var err error
		if builds, err = r.machineOSBuilds(ctx, pool.Name); err != nil {
			return 0, err
		}
	}
	images := map[string]bool{}
	for _, e := range osbuild.ParseHistory(pool.Annotations[osbuild.ImageHistoryAnnotation]) {
		images[e.Image] = true
	}
	n := 0
	for i := range builds {
		b := &builds[i]
		if mos != nil && controlledBy(b, mos.config) && r.keepMachineOSBuild(b, mos, s, images) {
			continue
		}
		if err := r.Client.Delete(ctx, b, client.Preconditions{UID: &b.UID}); client.IgnoreNotFound(err) != nil && !apierrors.IsConflict(err) {
			return n, fmt.Errorf("deleting MachineOSBuild %s: %w", b.Name, err)
		}
		n++
	}
	return n, nil
}

func (r *Reconciler) keepMachineOSBuild(b *mcfgv1.MachineOSBuild, mos *machineOS, s *poolScope, images map[string]bool) bool {
	if osbuild.StateOf(&b.Status) == osbuild.BuildStateSucceeded {
		ref := mos.config.Status.MachineOSBuild
		return images[b.Status.DigestedImagePushSpec] || ref != nil && ref.Name == b.Name
	}
	if s != nil && b.Name == s.in.PushTag {
		return true
	}
	return s != nil && slices.ContainsFunc(s.objs.builds, func(o client.Object) bool { return idOf(o) == b.Labels[osbuild.BuildIDLabel] })
}

// machineOSConfigToPool maps a MachineOSConfig to its pool, if the pool
// passes the watch filter.
func (r *Reconciler) machineOSConfigToPool(ctx context.Context, o client.Object) []reconcile.Request {
	m, ok := o.(*mcfgv1.MachineOSConfig)
	if !ok || m.Spec.MachineConfigPool.Name == "" {
		return nil
	}
	return r.filteredPool(ctx, m.Spec.MachineConfigPool.Name)
}

// machineOSBuildToPool maps one of our MachineOSBuilds to its pool.
func (r *Reconciler) machineOSBuildToPool(ctx context.Context, o client.Object) []reconcile.Request {
	if o.GetLabels()[osbuild.ManagedByLabel] != osbuild.ManagedByValue {
		return nil
	}
	if pool := o.GetAnnotations()[osbuild.PoolAnnotation]; pool != "" {
		return r.filteredPool(ctx, pool)
	}
	return nil
}

// filteredPool is a request for pool, unless a watch filter is set and the
// pool does not carry it.
func (r *Reconciler) filteredPool(ctx context.Context, pool string) []reconcile.Request {
	if r.WatchFilterValue != "" {
		p := &mcfgv1.MachineConfigPool{}
		if err := r.Client.Get(ctx, client.ObjectKey{Name: pool}, p); err != nil {
			if !apierrors.IsNotFound(err) {
				ctrl.LoggerFrom(ctx).Error(err, "Reading MachineConfigPool", "pool", pool)
			}
			return nil
		}
		if p.Labels[clusterv1.WatchLabel] != r.WatchFilterValue {
			return nil
		}
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: pool}}}
}
