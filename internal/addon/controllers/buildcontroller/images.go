package buildcontroller

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	osbuild "github.com/ocp-capi/ocp-capi/internal/addon/internal/osbuild"
	mcfgv1 "github.com/ocp-capi/ocp-capi/internal/consumed/machineconfiguration/v1"
)

// The images a pool's builds pushed are recorded on the pool
// (osbuild.ImageHistoryAnnotation), newest first. The record is how an
// equivalent earlier build is reused instead of built again, and which
// images are deleted from the registry: those beyond --build-image-retention,
// once no pool refers to them.

// keepImage holds a pool whose published image was built for its current
// build ID. When only the rendered config changed (nothing baked into the
// image did), the pool keeps its image: the newest image-equivalent config
// moves to the new rendered config, and no build runs.
func (r *Reconciler) keepImage(ctx context.Context, s *poolScope) error {
	image := s.pool.Annotations[osbuild.DesiredOSImageAnnotation]
	prev := s.pool.Annotations[osbuild.NewestImageEquivalentConfigAnnotation]
	var kv map[string]string
	if prev != s.in.RenderedConfig {
		buildsTotal.WithLabelValues(outcomeReused).Inc()
		r.Recorder.Eventf(s.pool, nil, corev1.EventTypeNormal, "BuildSkipped", "Build",
			"%s changes nothing baked into the image (OS image, kernel type, extensions, kernel arguments): the pool keeps %s, built from %s",
			s.in.RenderedConfig, image, prev)
		kv = map[string]string{osbuild.NewestImageEquivalentConfigAnnotation: s.in.RenderedConfig}
	}
	if err := r.prune(ctx, s.pool, s.objs, s.id, true); err != nil {
		return err
	}
	// The config the image was built from: a change that keeps the image
	// does not rewrite the condition.
	builtFrom := s.in.RenderedConfig
	if e := osbuild.ParseHistory(s.pool.Annotations[osbuild.ImageHistoryAnnotation]).Find(s.id); e != nil {
		builtFrom = e.Config
	}
	if err := r.patchPool(ctx, s.pool, kv, &poolState{
		Type: osbuild.ConditionBuildSuccess, Reason: osbuild.ReasonBuildSucceeded,
		Message: fmt.Sprintf("The layered OS image %s is built from %s.", image, builtFrom),
	}); err != nil {
		return err
	}
	return r.recordReuse(ctx, s, image)
}

// reuse publishes e, an earlier image built for the same build ID, if the
// registry still has it. It reports whether it did; false means build.
func (r *Reconciler) reuse(ctx context.Context, s *poolScope, e osbuild.HistoryEntry) (bool, error) {
	ref, perr := osbuild.ParseDigestedImage(e.Image)
	if perr != nil {
		// Not an image reference the controller can look up: build.
		return false, nil //nolint:nilerr // the history entry is unusable, not an error of this reconcile
	}
	auth, err := r.registryAuth(ctx, s.in.Builder.FinalImagePushSecret, ref.Registry)
	if err != nil {
		return false, err
	}
	ok, err := r.Registry.Exists(ctx, ref, auth)
	if err != nil {
		return false, fmt.Errorf("looking up the earlier image %s: %w", e.Image, err)
	}
	if !ok {
		r.Recorder.Eventf(s.pool, nil, corev1.EventTypeNormal, "ImageMissing", "Build",
			"The image %s, built earlier for the same inputs, is no longer in its registry: building it again", e.Image)
		return false, nil
	}
	if err := r.publishImage(ctx, s, e.Image); err != nil {
		return false, err
	}
	if err := r.recordReuse(ctx, s, e.Image); err != nil {
		return false, err
	}
	buildsTotal.WithLabelValues(outcomeReused).Inc()
	r.Recorder.Eventf(s.pool, nil, corev1.EventTypeNormal, "ImageReused", "Build",
		"%s needs the same image as %s, built earlier: published %s again without a build", s.in.RenderedConfig, e.Config, e.Image)
	return true, nil
}

// publishImage writes image, built for the pool's current inputs, to the
// pool with the history, after deleting from the registry the images that
// fall off the history.
func (r *Reconciler) publishImage(ctx context.Context, s *poolScope, image string) error {
	hist, dropped := osbuild.ParseHistory(s.pool.Annotations[osbuild.ImageHistoryAnnotation]).
		Push(osbuild.HistoryEntry{ID: s.id, Image: image, Config: s.in.RenderedConfig, PushSecret: s.in.Builder.FinalImagePushSecret}, r.Options.ImageRetention)
	r.pruneImages(ctx, s.pool, dropped, s.in.Builder.FinalImagePushSecret)
	// The optimistic lock makes this fail if the pool changed since it
	// was read: an image is never published for an outdated config.
	return r.patchPool(ctx, s.pool, map[string]string{
		osbuild.DesiredOSImageAnnotation:              image,
		osbuild.NewestImageEquivalentConfigAnnotation: s.in.RenderedConfig,
		osbuild.BuildIDAnnotation:                     s.id,
		osbuild.ImageHistoryAnnotation:                hist.String(),
		osbuild.RebuildAnnotation:                     "",
	}, &poolState{
		Type: osbuild.ConditionBuildSuccess, Reason: osbuild.ReasonBuildSucceeded,
		Message: fmt.Sprintf("The layered OS image %s is built from %s.", image, s.in.RenderedConfig),
	})
}

// pruneImages deletes from their registry, by digest, the images of
// entries that no pool refers to (as its image or in its history), with
// the push secret each entry records, else pushSecret. A failure is
// reported as an event, not retried: the image stays in the registry.
func (r *Reconciler) pruneImages(ctx context.Context, pool *mcfgv1.MachineConfigPool, entries osbuild.History, pushSecret string) {
	if len(entries) == 0 {
		return
	}
	used, err := r.referencedImages(ctx, pool.Name)
	if err != nil {
		r.Recorder.Eventf(pool, nil, corev1.EventTypeWarning, "PruneFailed", "DeleteImage", "Not deleting superseded images: %v", err)
		return
	}
	auths := map[[2]string]RegistryAuth{}
	for _, e := range entries {
		if used[e.Image] {
			continue
		}
		ref, err := osbuild.ParseDigestedImage(e.Image)
		if err != nil {
			continue
		}
		secret := pushSecret
		if e.PushSecret != "" {
			secret = e.PushSecret
		}
		key := [2]string{secret, ref.Registry}
		auth, ok := auths[key]
		if !ok {
			if secret == "" {
				r.Recorder.Eventf(pool, nil, corev1.EventTypeWarning, "PruneFailed", "DeleteImage",
					"Left %s in its registry: no push secret is configured to delete it with", e.Image)
				continue
			}
			if auth, err = r.registryAuth(ctx, secret, ref.Registry); err != nil {
				r.Recorder.Eventf(pool, nil, corev1.EventTypeWarning, "PruneFailed", "DeleteImage", "Left %s in its registry: %v", e.Image, err)
				continue
			}
			auths[key] = auth
		}
		if err := r.Registry.Delete(ctx, ref, auth); err != nil {
			r.Recorder.Eventf(pool, nil, corev1.EventTypeWarning, "PruneFailed", "DeleteImage", "Left %s in its registry: %v", e.Image, err)
			continue
		}
		imagesPruned.Inc()
		r.Recorder.Eventf(pool, nil, corev1.EventTypeNormal, "ImagePruned", "DeleteImage",
			"Deleted %s (built from %s) from its registry: superseded, and no pool refers to it", e.Image, e.Config)
	}
}

// referencedImages are the images other pools than pool refer to: their
// published image and their history.
func (r *Reconciler) referencedImages(ctx context.Context, pool string) (map[string]bool, error) {
	list := &mcfgv1.MachineConfigPoolList{}
	if err := r.Client.List(ctx, list); err != nil {
		return nil, fmt.Errorf("listing MachineConfigPools: %w", err)
	}
	out := map[string]bool{}
	for i := range list.Items {
		p := &list.Items[i]
		if p.Name == pool {
			continue
		}
		if img := p.Annotations[osbuild.DesiredOSImageAnnotation]; img != "" {
			out[img] = true
		}
		for _, e := range osbuild.ParseHistory(p.Annotations[osbuild.ImageHistoryAnnotation]) {
			out[e.Image] = true
		}
	}
	return out, nil
}

// pruneAll deletes every image in the pool's history (opt-out, deletion),
// with the push secret the builder ConfigMap names, if it can be read.
func (r *Reconciler) pruneAll(ctx context.Context, pool *mcfgv1.MachineConfigPool) {
	hist := osbuild.ParseHistory(pool.Annotations[osbuild.ImageHistoryAnnotation])
	if len(hist) == 0 {
		return
	}
	var pushSecret string
	if cm, err := r.configMap(ctx, osbuild.BuilderConfigMapName, osbuild.BuilderConfigMapAlias); err == nil && cm != nil {
		if b, err := osbuild.ParseBuilderConfig(cm); err == nil {
			pushSecret = b.FinalImagePushSecret
		}
	}
	r.pruneImages(ctx, pool, hist, pushSecret)
}

// observeMetrics records a finished build's duration and queue wait.
func observeMetrics(cur client.Object, obs osbuild.Observation, outcome string) {
	created := cur.GetCreationTimestamp().Time
	buildsTotal.WithLabelValues(outcome).Inc()
	buildDuration.Observe(time.Since(created).Seconds())
	if !obs.Started.IsZero() && obs.Started.After(created) {
		buildQueueWait.Observe(obs.Started.Sub(created).Seconds())
	}
}
