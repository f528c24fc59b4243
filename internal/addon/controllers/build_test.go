package controllers_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	osbuild "github.com/ocp-capi/ocp-capi/internal/addon/internal/osbuild"
	buildv1 "github.com/ocp-capi/ocp-capi/internal/consumed/build/v1"
	mcfgv1 "github.com/ocp-capi/ocp-capi/internal/consumed/machineconfiguration/v1"
)

// TestHappyPath: pending → running → success → annotation with digest; the
// build's objects are removed.
func TestHappyPath(t *testing.T) {
	forEachBackend(t, func(t *testing.T, h *harness) {
		pool, config := h.workerPool()
		h.start()

		build := h.waitBuildFor(pool, config)
		msg := h.waitCondition(pool, osbuild.ConditionBuildPending, osbuild.ReasonPending)
		h.g.Expect(msg).To(ContainSubstring(build.GetName()))
		h.g.Expect(h.configMapNames(pool)).To(HaveLen(1))
		h.checkManifest(build, config)

		h.setRunning(build)
		h.waitCondition(pool, osbuild.ConditionBuilding, osbuild.ReasonRunning)

		h.setSucceeded(build, digest('a'))
		msg = h.waitCondition(pool, osbuild.ConditionBuildSuccess, osbuild.ReasonBuildSucceeded)
		want := repo + "@" + digest('a')
		h.g.Expect(h.image(pool)).To(Equal(want))
		h.g.Expect(msg).To(ContainSubstring(want))
		h.g.Expect(h.getPool(pool).Annotations).To(HaveKeyWithValue(osbuild.NewestImageEquivalentConfigAnnotation, config))
		h.g.Eventually(func() []string { return h.buildNames(pool) }).Should(BeEmpty())
		h.g.Eventually(func() []string { return h.configMapNames(pool) }).Should(BeEmpty())
		h.g.Expect(h.ctrl.failures()).To(BeEmpty())
	})
}

// checkManifest checks what the builder is given: the inputs ConfigMap with
// the Containerfile and the compressed config, the secrets, the push target.
func (h *harness) checkManifest(obj client.Object, config string) {
	h.t.Helper()
	id := obj.GetLabels()[osbuild.BuildIDLabel]
	names := osbuild.NamesFor(obj.GetAnnotations()[osbuild.PoolAnnotation], id)
	h.g.Expect(obj.GetName()).To(Equal(names.Build))
	cm := &corev1.ConfigMap{}
	h.g.Expect(env.Client.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: names.Inputs}, cm)).To(Succeed())
	h.g.Expect(cm.Data[osbuild.ContainerfileKey]).To(ContainSubstring("FROM " + baseImage))
	h.g.Expect(cm.BinaryData[osbuild.MachineConfigKey]).NotTo(BeEmpty())
	h.g.Expect(obj.GetOwnerReferences()).To(HaveLen(1))
	h.g.Expect(obj.GetOwnerReferences()[0].Kind).To(Equal("MachineConfigPool"))
	switch o := obj.(type) {
	case *buildv1.Build:
		h.g.Expect(o.Spec.Output.To.Name).To(Equal(repo + ":" + config))
		h.g.Expect(o.Spec.Output.PushSecret.Name).To(Equal(pushSecret))
		h.g.Expect(o.Spec.Strategy.DockerStrategy.PullSecret.Name).To(Equal(pullSecret))
		h.g.Expect(o.Spec.Source.ConfigMaps[0].ConfigMap.Name).To(Equal(names.Inputs))
		h.g.Expect(*o.Spec.CompletionDeadlineSeconds).To(BeNumerically("==", h.opts.Timeout.Seconds()))
	case *batchv1.Job:
		c := o.Spec.Template.Spec.Containers[0]
		h.g.Expect(c.Image).To(Equal(h.opts.BuilderImage))
		h.g.Expect(c.Env).To(ContainElement(corev1.EnvVar{Name: "TAG", Value: repo + ":" + config}))
		h.g.Expect(*o.Spec.Template.Spec.AutomountServiceAccountToken).To(BeFalse())
		h.g.Expect(*o.Spec.ActiveDeadlineSeconds).To(BeNumerically("==", h.opts.Timeout.Seconds()))
	}
}

// TestFailure: a failed build is BuildFailed, its objects are kept and it is
// not rebuilt; deleting the build object retries.
func TestFailure(t *testing.T) {
	forEachBackend(t, func(t *testing.T, h *harness) {
		pool, config := h.workerPool()
		h.start()

		build := h.waitBuildFor(pool, config)
		h.setRunning(build)
		h.waitCondition(pool, osbuild.ConditionBuilding, osbuild.ReasonRunning)
		h.setFailed(build)
		msg := h.waitCondition(pool, osbuild.ConditionBuildFailed, osbuild.ReasonBuildFailed)
		h.g.Expect(msg).To(ContainSubstring(build.GetName()))
		h.g.Expect(msg).To(ContainSubstring("delete the"))
		if h.backend == osbuild.BackendBuild {
			h.g.Expect(msg).To(ContainSubstring("PushImageToRegistryFailed"))
		} else {
			h.g.Expect(msg).To(ContainSubstring("unauthorized"))
		}
		// Kept for debugging, not rebuilt, no annotation.
		h.g.Expect(h.buildNames(pool)).To(Equal([]string{build.GetName()}))
		h.g.Expect(h.configMapNames(pool)).To(HaveLen(1))
		h.g.Expect(h.image(pool)).To(BeEmpty())

		// Retry: delete the failed build; a new one (same name) starts.
		old := build.GetUID()
		h.g.Expect(env.Client.Delete(h.ctx, build, client.PropagationPolicy(metav1.DeletePropagationBackground))).To(Succeed())
		h.g.Eventually(func() bool {
			objs := h.buildObjects(pool)
			return len(objs) == 1 && objs[0].GetUID() != old
		}).Should(BeTrue())
		h.waitCondition(pool, osbuild.ConditionBuildPending, osbuild.ReasonPending)
		h.g.Expect(h.ctrl.failures()).To(BeEmpty())
	})
}

// TestTimeout: a build that hangs past --build-timeout is stopped and
// reported as BuildFailed with reason Timeout; it is kept. Stopped means
// stopped in the cluster: the builder's pod is deleted (the Build is
// cancelled and OpenShift's build controller, played by the stand-in,
// moves it to phase Cancelled; the Job is suspended and the Job controller
// deletes its pod), and a late success is neither accepted nor published.
func TestTimeout(t *testing.T) {
	forEachBackend(t, func(t *testing.T, h *harness) {
		h.opts.Timeout = 2 * time.Second
		pool, config := h.workerPool()
		h.start()

		build := h.waitBuildFor(pool, config)
		// The builder's pod runs and never finishes.
		pod := h.builderPod(build)
		msg := h.waitCondition(pool, osbuild.ConditionBuildFailed, osbuild.ReasonTimeout)
		h.g.Expect(msg).To(ContainSubstring("--build-timeout (2s)"))

		cur := build.DeepCopyObject().(client.Object)
		h.g.Expect(env.Client.Get(h.ctx, client.ObjectKeyFromObject(build), cur)).To(Succeed())
		h.g.Expect(cur.GetAnnotations()).To(HaveKeyWithValue(osbuild.FailureReasonAnnotation, osbuild.ReasonTimeout))
		h.g.Eventually(func() bool { return isGone(pod) }).Should(BeTrue(), "the builder's pod %s is deleted: the build really stopped", pod.Name)
		switch o := cur.(type) {
		case *buildv1.Build:
			h.g.Eventually(func() buildv1.BuildPhase {
				h.g.Expect(env.Client.Get(h.ctx, client.ObjectKeyFromObject(o), o)).To(Succeed())
				return o.Status.Phase
			}).Should(Equal(buildv1.BuildPhaseCancelled), "the build controller cancelled the Build")
			h.g.Expect(string(o.Status.Reason)).To(Equal(buildReasonCancelled))
			// The API server keeps a finished Build finished.
			err := h.finish(o, digest('a'))
			h.g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "a late success of a cancelled Build is refused: %v", err)
		case *batchv1.Job:
			h.g.Expect(o.Spec.Suspend).To(HaveValue(BeTrue()), "the Job is suspended")
			h.g.Eventually(func() bool {
				h.g.Expect(env.Client.Get(h.ctx, client.ObjectKeyFromObject(o), o)).To(Succeed())
				return jobCondition(o, batchv1.JobSuspended)
			}).Should(BeTrue(), "the Job controller reports the Job suspended")
			// A pod that finished anyway does not publish a stopped build.
			h.g.Expect(h.finish(o, digest('a'))).To(Succeed())
		}
		h.settle(h.ctrl)
		h.g.Expect(h.image(pool)).To(BeEmpty())
		h.g.Expect(h.trueCondition(pool)).To(Equal(osbuild.ConditionBuildFailed + "/" + osbuild.ReasonTimeout))
		h.g.Expect(h.buildNames(pool)).To(Equal([]string{build.GetName()}))
		h.g.Expect(h.ctrl.failures()).To(BeEmpty())
	})
}

// builderPod returns the pod that runs obj: for a Build the one the build
// controller (the stand-in) created, for a Job one the test creates as the
// Job controller would, running.
func (h *harness) builderPod(obj client.Object) *corev1.Pod {
	h.t.Helper()
	switch o := obj.(type) {
	case *buildv1.Build:
		pod := &corev1.Pod{}
		h.g.Eventually(func() error {
			return env.Client.Get(h.ctx, client.ObjectKey{Namespace: o.Namespace, Name: buildPodName(o)}, pod)
		}).Should(Succeed(), "the build controller creates the Build's pod")
		return pod
	case *batchv1.Job:
		pod := h.createJobPod(o)
		pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{
			Name: osbuild.BuilderContainer, Image: o.Spec.Template.Spec.Containers[0].Image, Ready: true,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}},
		}}}
		h.g.Expect(env.Client.Status().Update(h.ctx, pod)).To(Succeed())
		return pod
	}
	h.t.Fatalf("unknown build object %T", obj)
	return nil
}

// TestConfigChangeMidBuild: a new rendered config supersedes the running
// build: the stale one is deleted with its ConfigMap, the new one starts,
// and the stale image is never published even if its build finishes.
func TestConfigChangeMidBuild(t *testing.T) {
	forEachBackend(t, func(t *testing.T, h *harness) {
		h.inputs()
		a, b := h.machineConfig("a"), h.machineConfig("b")
		pool := h.pool("worker", a, true).Name
		h.start()

		buildA := h.waitBuildFor(pool, a)
		h.setRunning(buildA)
		h.waitCondition(pool, osbuild.ConditionBuilding, osbuild.ReasonRunning)

		h.setPoolConfig(pool, b)
		// The stale builder finishes anyway (if the controller has not
		// deleted it yet).
		_ = h.finish(buildA, digest('a'))

		buildB := h.waitBuildFor(pool, b)
		h.g.Eventually(func() bool { return isGone(buildA) }).Should(BeTrue())
		h.g.Eventually(func() []string { return h.configMapNames(pool) }).Should(
			ConsistOf(osbuild.NamesFor(pool, buildB.GetLabels()[osbuild.BuildIDLabel]).Inputs))
		h.g.Expect(h.image(pool)).To(BeEmpty(), "no image is published for the outdated config")
		h.waitCondition(pool, osbuild.ConditionBuildPending, osbuild.ReasonPending)

		h.setSucceeded(buildB, digest('b'))
		h.waitCondition(pool, osbuild.ConditionBuildSuccess, osbuild.ReasonBuildSucceeded)
		h.g.Expect(h.image(pool)).To(Equal(repo + "@" + digest('b')))
		h.g.Expect(h.getPool(pool).Annotations).To(HaveKeyWithValue(osbuild.NewestImageEquivalentConfigAnnotation, b))
		h.g.Eventually(func() []string { return h.buildNames(pool) }).Should(BeEmpty())
		h.g.Expect(h.ctrl.failures()).To(BeEmpty())
	})
}

// TestOptOut: removing the layering label removes everything the controller
// made for the pool (a retained failed build, a build in flight, their
// ConfigMaps, the annotations and the conditions); deleting a pool removes
// its objects.
func TestOptOut(t *testing.T) {
	forEachBackend(t, func(t *testing.T, h *harness) {
		h.inputs()
		a, b, c := h.machineConfig("a"), h.machineConfig("b"), h.machineConfig("c")
		pool := h.pool("worker", a, true).Name
		other := h.pool("infra", a, true).Name
		h.start()

		// a: published; b: failed (kept); c: in flight.
		h.setSucceeded(h.waitBuildFor(pool, a), digest('a'))
		h.waitCondition(pool, osbuild.ConditionBuildSuccess, osbuild.ReasonBuildSucceeded)
		h.setPoolConfig(pool, b)
		h.setFailed(h.waitBuildFor(pool, b))
		h.waitCondition(pool, osbuild.ConditionBuildFailed, osbuild.ReasonBuildFailed)
		h.setPoolConfig(pool, c)
		h.waitBuildFor(pool, c)
		h.waitCondition(pool, osbuild.ConditionBuildPending, osbuild.ReasonPending)
		h.g.Expect(h.buildNames(pool)).To(HaveLen(2))
		h.g.Expect(h.configMapNames(pool)).To(HaveLen(2))
		h.g.Expect(h.image(pool)).NotTo(BeEmpty())

		h.patchPool(pool, func(p *mcfgv1.MachineConfigPool) { delete(p.Labels, osbuild.LayeringEnabledLabel) })
		h.g.Eventually(func() []string { return h.buildNames(pool) }).Should(BeEmpty())
		h.g.Eventually(func() []string { return h.configMapNames(pool) }).Should(BeEmpty())
		h.g.Eventually(func() map[string]string { return h.getPool(pool).Annotations }).ShouldNot(Or(
			HaveKey(osbuild.DesiredOSImageAnnotation), HaveKey(osbuild.NewestImageEquivalentConfigAnnotation), HaveKey(osbuild.BuildIDAnnotation)))
		h.g.Eventually(func() []mcfgv1.MachineConfigPoolCondition { return h.getPool(pool).Status.Conditions }).Should(BeEmpty())

		// Deleting a pool deletes its objects (the garbage collector would
		// too, through the owner references; envtest runs none).
		h.waitBuildFor(other, a)
		p := h.getPool(other)
		h.g.Expect(env.Client.Delete(h.ctx, p)).To(Succeed())
		h.g.Eventually(func() []string { return h.buildNames(other) }).Should(BeEmpty())
		h.g.Eventually(func() []string { return h.configMapNames(other) }).Should(BeEmpty())
		h.g.Expect(h.ctrl.failures()).To(BeEmpty())
	})
}

// TestRestartAdoptsRunningBuild: a controller restarted mid-build adopts the
// running build instead of starting a second one.
func TestRestartAdoptsRunningBuild(t *testing.T) {
	forEachBackend(t, func(t *testing.T, h *harness) {
		pool, config := h.workerPool()
		first := h.start()

		build := h.waitBuildFor(pool, config)
		h.setRunning(build)
		h.waitCondition(pool, osbuild.ConditionBuilding, osbuild.ReasonRunning)
		first.stop(t) // returns once every reconcile has returned
		h.g.Expect(first.failures()).To(BeEmpty(), "shutdown is clean")

		second := h.start()
		// Show the new controller has looked at the pool: touch it.
		h.patchPool(pool, func(p *mcfgv1.MachineConfigPool) { p.Labels["touched"] = "yes" })
		h.g.Eventually(func() int64 { return second.reconciles(t) }).Should(BeNumerically(">", 0))
		objs := h.buildObjects(pool)
		h.g.Expect(objs).To(HaveLen(1))
		h.g.Expect(objs[0].GetUID()).To(Equal(build.GetUID()), "the running build is adopted, not replaced")

		h.setSucceeded(build, digest('a'))
		h.waitCondition(pool, osbuild.ConditionBuildSuccess, osbuild.ReasonBuildSucceeded)
		h.g.Expect(h.image(pool)).To(Equal(repo + "@" + digest('a')))
		h.g.Expect(second.creates()).To(BeZero(), "adoption creates nothing")
		h.g.Expect(second.failures()).To(BeEmpty())
	})
}

// TestRetention: failed builds beyond --build-failed-retention are deleted
// with their ConfigMaps, oldest first; the current one is always kept.
func TestRetention(t *testing.T) {
	forEachBackend(t, func(t *testing.T, h *harness) {
		h.opts.FailedRetention = 1
		h.inputs()
		a, b, c := h.machineConfig("a"), h.machineConfig("b"), h.machineConfig("c")
		pool := h.pool("worker", a, true).Name
		h.start()

		var builds []client.Object
		for i, config := range []string{a, b, c} {
			if i > 0 {
				// One-second timestamps order the builds.
				time.Sleep(1100 * time.Millisecond)
				h.setPoolConfig(pool, config)
			}
			bo := h.waitBuildFor(pool, config)
			builds = append(builds, bo)
			h.setFailed(bo)
			h.waitCondition(pool, osbuild.ConditionBuildFailed, osbuild.ReasonBuildFailed)
		}
		// c is current; b is the one retained; a is gone with its ConfigMap.
		h.g.Eventually(func() []string { return h.buildNames(pool) }).Should(ConsistOf(builds[1].GetName(), builds[2].GetName()))
		h.g.Eventually(func() []string { return h.configMapNames(pool) }).Should(HaveLen(2))
		h.g.Expect(h.ctrl.failures()).To(BeEmpty())
	})
}

// TestAbandonedConfigMapsAreRemoved: an inputs ConfigMap with no build (a
// crash between the two creates, or upstream bug #4127) is deleted; so is a
// succeeded build for stale inputs, which is never published.
func TestAbandonedConfigMapsAreRemoved(t *testing.T) {
	forEachBackend(t, func(t *testing.T, h *harness) {
		h.inputs()
		config := h.machineConfig("a")
		pool := h.pool("worker", config, true)
		stale := &osbuild.Request{Inputs: osbuild.Inputs{Pool: pool.Name, RenderedConfig: "rendered-old"}, ID: "0123456789abcdef",
			Names: osbuild.NamesFor(pool.Name, "0123456789abcdef"), Namespace: h.ns, Owner: osbuild.PoolOwnerReference(pool)}
		h.create(stale.InputsConfigMap())
		h.start()

		build := h.waitBuildFor(pool.Name, config)
		h.g.Eventually(func() []string { return h.configMapNames(pool.Name) }).Should(
			ConsistOf(osbuild.NamesFor(pool.Name, build.GetLabels()[osbuild.BuildIDLabel]).Inputs))
	})
}

// TestSteadyStateWritesNothing: once the image is published, reconciles
// (pool touched, inputs touched, resync) write nothing; a pool that never
// opted in is never written. The resyncs of --sync-period reach the pool.
func TestBuildSteadyStateWritesNothing(t *testing.T) {
	forEachBackend(t, func(t *testing.T, h *harness) {
		// Short, so that resyncs come within the test.
		h.syncPeriod = time.Second
		pool, config := h.workerPool()
		plain := h.pool("plain", config, false).Name
		rc := h.start()
		h.setSucceeded(h.waitBuildFor(pool, config), digest('a'))
		h.waitCondition(pool, osbuild.ConditionBuildSuccess, osbuild.ReasonBuildSucceeded)
		h.g.Eventually(func() []string { return h.buildNames(pool) }).Should(BeEmpty())
		h.g.Eventually(func() []string { return h.configMapNames(pool) }).Should(BeEmpty())

		// Let the controller settle, then count.
		h.settle(rc)
		writes := rc.writes()
		before := rc.reconciles(h.t)
		h.patchPool(pool, func(p *mcfgv1.MachineConfigPool) { p.Labels["touched"] = "1" })
		h.patchPool(plain, func(p *mcfgv1.MachineConfigPool) { p.Labels["touched"] = "1" })
		cm := &corev1.ConfigMap{}
		h.g.Expect(env.Client.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: osbuild.OSImageURLConfigMapName}, cm)).To(Succeed())
		cm.Labels = map[string]string{"touched": "1"}
		h.g.Expect(env.Client.Update(h.ctx, cm)).To(Succeed())
		h.g.Eventually(func() int64 { return rc.reconciles(h.t) - before }).Should(BeNumerically(">=", 3))
		h.settle(rc)
		h.g.Expect(rc.writes()).To(Equal(writes), "steady state writes nothing")
		// Untouched, the pool is reconciled again by the resyncs alone.
		before = rc.reconciles(h.t)
		h.g.Eventually(func() int64 { return rc.reconciles(h.t) - before }).Should(BeNumerically(">=", 2), "no resync reaches the pool")
		h.settle(rc)
		h.g.Expect(rc.writes()).To(Equal(writes), "a resync writes nothing")
		h.g.Expect(h.getPool(plain).Status.Conditions).To(BeEmpty())
		h.g.Expect(h.getPool(plain).Annotations).NotTo(HaveKey(osbuild.DesiredOSImageAnnotation))
	})
}

// settle waits until the controller has no reconcile in progress.
func (h *harness) settle(rc *runningController) {
	h.t.Helper()
	h.g.Eventually(func() bool { return rc.idle(h.t) }).Should(BeTrue())
}

// TestBackendSwitchSweepsOtherBackend: restarting with the other backend
// deletes the first backend's build objects, and the new backend builds.
func TestBackendSwitchSweepsOtherBackend(t *testing.T) {
	h := newHarness(t, osbuild.BackendBuild)
	pool, config := h.workerPool()
	first := h.start()
	build := h.waitBuildFor(pool, config)
	first.stop(t)

	h.opts.Backend, h.backend = osbuild.BackendJob, osbuild.BackendJob
	h.start()
	h.g.Eventually(func() bool { return isGone(build) }).Should(BeTrue())
	job := h.waitBuildFor(pool, config)
	h.setSucceeded(job, digest('c'))
	h.waitCondition(pool, osbuild.ConditionBuildSuccess, osbuild.ReasonBuildSucceeded)
	h.g.Expect(h.image(pool)).To(Equal(repo + "@" + digest('c')))
}

// TestMalformedInputs: each bad input is a BuildFailed condition with a
// reason and a message saying what to fix, never a crash loop (no reconcile
// error); fixing it starts the build.
func TestMalformedInputs(t *testing.T) {
	type setup struct {
		h      *harness
		config string
		pool   *mcfgv1.MachineConfigPool
	}
	tests := []struct {
		name string
		// arrange breaks the valid world built before it.
		arrange     func(s *setup)
		reason      string
		wantMessage []string
		fix         func(s *setup)
	}{
		{
			name:        "builder ConfigMap missing",
			arrange:     func(s *setup) { s.h.deleteObj(&corev1.ConfigMap{}, osbuild.BuilderConfigMapName) },
			reason:      osbuild.ReasonConfigMapNotFound,
			wantMessage: []string{osbuild.BuilderConfigMapName, osbuild.BuilderConfigMapAlias, osbuild.FinalImagePullspecKey},
			fix: func(s *setup) {
				// The upstream name is accepted as an alias.
				s.h.builderConfigMap(osbuild.BuilderConfigMapAlias, map[string]string{
					osbuild.BaseImagePullSecretNameKey: pullSecret, osbuild.FinalImagePushSecretNameKey: pushSecret, osbuild.FinalImagePullspecKey: repo,
				})
			},
		},
		{
			name: "builder ConfigMap without keys",
			arrange: func(s *setup) {
				s.h.updateConfigMap(osbuild.BuilderConfigMapName, func(cm *corev1.ConfigMap) {
					delete(cm.Data, osbuild.FinalImagePushSecretNameKey)
					delete(cm.Data, osbuild.FinalImagePullspecKey)
				})
			},
			reason:      osbuild.ReasonInvalidConfigMap,
			wantMessage: []string{osbuild.FinalImagePushSecretNameKey + ", " + osbuild.FinalImagePullspecKey},
			fix: func(s *setup) {
				s.h.updateConfigMap(osbuild.BuilderConfigMapName, func(cm *corev1.ConfigMap) {
					cm.Data[osbuild.FinalImagePushSecretNameKey] = pushSecret
					cm.Data[osbuild.FinalImagePullspecKey] = repo
				})
			},
		},
		{
			name: "final pullspec with a digest",
			arrange: func(s *setup) {
				s.h.updateConfigMap(osbuild.BuilderConfigMapName, func(cm *corev1.ConfigMap) {
					cm.Data[osbuild.FinalImagePullspecKey] = repo + "@" + digest('0')
				})
			},
			reason:      osbuild.ReasonInvalidConfigMap,
			wantMessage: []string{"names a digest"},
			fix: func(s *setup) {
				s.h.updateConfigMap(osbuild.BuilderConfigMapName, func(cm *corev1.ConfigMap) { cm.Data[osbuild.FinalImagePullspecKey] = repo })
			},
		},
		{
			name:        "machine-config-osimageurl missing",
			arrange:     func(s *setup) { s.h.deleteObj(&corev1.ConfigMap{}, osbuild.OSImageURLConfigMapName) },
			reason:      osbuild.ReasonConfigMapNotFound,
			wantMessage: []string{osbuild.OSImageURLConfigMapName, osbuild.BaseOSContainerImageKey},
			fix: func(s *setup) {
				s.h.create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: osbuild.OSImageURLConfigMapName, Namespace: s.h.ns},
					Data: map[string]string{osbuild.BaseOSContainerImageKey: baseImage}})
			},
		},
		{
			name: "machine-config-osimageurl without the base image",
			arrange: func(s *setup) {
				s.h.updateConfigMap(osbuild.OSImageURLConfigMapName, func(cm *corev1.ConfigMap) { delete(cm.Data, osbuild.BaseOSContainerImageKey) })
			},
			reason:      osbuild.ReasonInvalidConfigMap,
			wantMessage: []string{osbuild.BaseOSContainerImageKey},
			fix: func(s *setup) {
				s.h.updateConfigMap(osbuild.OSImageURLConfigMapName, func(cm *corev1.ConfigMap) { cm.Data[osbuild.BaseOSContainerImageKey] = baseImage })
			},
		},
		{
			name:        "pull secret missing",
			arrange:     func(s *setup) { s.h.deleteObj(&corev1.Secret{}, pullSecret) },
			reason:      osbuild.ReasonSecretNotFound,
			wantMessage: []string{pullSecret, osbuild.BaseImagePullSecretNameKey},
			fix: func(s *setup) {
				s.h.secret(pullSecret, map[string][]byte{corev1.DockerConfigJsonKey: dockerConfigJSON})
			},
		},
		{
			name: "push secret without .dockerconfigjson",
			arrange: func(s *setup) {
				s.h.deleteObj(&corev1.Secret{}, pushSecret)
				s.h.secret(pushSecret, map[string][]byte{corev1.DockerConfigKey: []byte(`{"registry.example.com:5000":{"auth":"dXNlcjpwYXNz"}}`)})
			},
			reason:      osbuild.ReasonInvalidSecret,
			wantMessage: []string{pushSecret, ".dockerconfigjson", "legacy .dockercfg"},
			fix: func(s *setup) {
				s.h.deleteObj(&corev1.Secret{}, pushSecret)
				s.h.secret(pushSecret, map[string][]byte{corev1.DockerConfigJsonKey: dockerConfigJSON})
			},
		},
		{
			name:        "rendered MachineConfig missing",
			arrange:     func(s *setup) { s.config = "rendered-" + s.h.prefix + "-missing" },
			reason:      osbuild.ReasonMachineConfigNotFound,
			wantMessage: []string{"rendered-" + "%s-missing"},
			fix:         func(s *setup) { s.h.machineConfig("missing") },
		},
		{
			name:        "pool without a rendered config",
			arrange:     func(s *setup) { s.config = "" },
			reason:      osbuild.ReasonNoRenderedConfig,
			wantMessage: []string{"spec.configuration.name"},
			fix:         func(s *setup) { s.h.setPoolConfig(s.pool.Name, s.h.machineConfig("late")) },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			forEachBackend(t, func(t *testing.T, h *harness) {
				h.opts.SecretRetry = time.Second
				h.inputs()
				s := &setup{h: h, config: h.machineConfig("a")}
				tt.arrange(s)
				s.pool = h.pool("worker", s.config, true)
				rc := h.start()

				msg := h.waitCondition(s.pool.Name, osbuild.ConditionBuildFailed, tt.reason)
				for _, want := range tt.wantMessage {
					if want == "rendered-%s-missing" {
						want = s.config
					}
					h.g.Expect(msg).To(ContainSubstring(want))
				}
				h.g.Expect(h.buildNames(s.pool.Name)).To(BeEmpty())
				h.g.Expect(rc.failures()).To(BeEmpty(), "an input problem is no reconcile error: no crash loop")

				tt.fix(s)
				h.waitCondition(s.pool.Name, osbuild.ConditionBuildPending, osbuild.ReasonPending)
				h.g.Expect(h.buildObjects(s.pool.Name)).To(HaveLen(1))
				h.g.Expect(rc.failures()).To(BeEmpty())
			})
		})
	}
}

func (h *harness) deleteObj(obj client.Object, name string) {
	h.t.Helper()
	obj.SetName(name)
	obj.SetNamespace(h.ns)
	h.g.Expect(env.Client.Delete(h.ctx, obj)).To(Succeed())
}

func (h *harness) updateConfigMap(name string, mutate func(*corev1.ConfigMap)) {
	h.t.Helper()
	cm := &corev1.ConfigMap{}
	h.g.Expect(env.Client.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: name}, cm)).To(Succeed())
	mutate(cm)
	h.g.Expect(env.Client.Update(h.ctx, cm)).To(Succeed())
}
