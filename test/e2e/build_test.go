//go:build e2e

package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cluster-api/util"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ocp-capi/ocp-capi/test/e2e/localenv"
)

// The BuildController through the Job backend: the add-on (installed by
// clusterctl) is switched to --build-backend=job with a builder image made
// here, whose "buildah" (test/e2e/cmd/fake-buildah) checks the mounted
// inputs and reports sha256(<push tag>) as its termination message, as a
// real build reports its pushed digest. A layered pool must end with
// desired-os-image = <repository>@<that digest>; opting out removes it.
var _ = Describe("BuildController (add-on), Job backend", func() {
	It("builds a layered pool's image through a Job and writes its pullspec by digest to the pool", func() {
		ctx := suiteCtx
		c := mgmt.GetClient()
		const ns, image = "openshift-machine-config-operator", "ocp-capi.local/e2e-fake-buildah:v1"

		By("Building the builder image and importing it into the management node's containerd")
		dir := GinkgoT().TempDir()
		build := exec.Command("go", "build", "-o", filepath.Join(dir, "bash"), "./cmd/fake-buildah")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		out, err := build.CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "%s", out)
		imgbuild := filepath.Join(filepath.Dir(*clusterctlBin), "imgbuild")
		run(imgbuild, "--out", filepath.Join(dir, "builder.tar"), "--tag", image, "--entrypoint", "/bin/bash",
			"--user", "1000:1000", "--file", filepath.Join(dir, "bash")+":/bin/bash:0755")
		sock := filepath.Join(filepath.Dir(*mgmtKubeconfig), "run", "containerd", "containerd.sock")
		run("ctr", "--address", sock, "-n", "k8s.io", "images", "import", filepath.Join(dir, "builder.tar"))

		By("Switching the add-on to --build-backend=job --builder-image=" + image)
		list := &appsv1.DeploymentList{}
		Expect(c.List(ctx, list, client.InNamespace("ocp-capi-addon-system"))).To(Succeed())
		Expect(list.Items).To(HaveLen(1))
		d := &list.Items[0]
		base := d.DeepCopy()
		args := d.Spec.Template.Spec.Containers[0].Args
		for _, a := range []string{"--build-backend=job", "--builder-image=" + image} {
			if !containsArg(args, a) {
				args = append(args, a)
			}
		}
		d.Spec.Template.Spec.Containers[0].Args = args
		Expect(c.Patch(ctx, d, client.MergeFrom(base))).To(Succeed())
		Expect(localenv.WaitForRollout(ctx, c, d, 3*time.Minute)).To(Succeed())

		By("Creating a layered pool and its inputs, as the MCO has them")
		pool, rendered := "e2e-"+util.RandomString(5), "rendered-e2e-"+util.RandomString(8)
		repo := "registry.e2e.invalid/ocp/os-image"
		Expect(mgmt.CreateOrUpdate(ctx, []byte(strings.NewReplacer("POOL", pool, "RENDERED", rendered, "REPO", repo, "NS", ns).Replace(buildInputs)))).To(Succeed())

		sum := sha256.Sum256([]byte(repo + ":" + rendered))
		want := repo + "@sha256:" + hex.EncodeToString(sum[:])
		By("Waiting for desired-os-image = " + want)
		mcp := &unstructured.Unstructured{}
		mcp.SetAPIVersion("machineconfiguration.openshift.io/v1")
		mcp.SetKind("MachineConfigPool")
		Eventually(func(g Gomega) {
			g.Expect(c.Get(ctx, client.ObjectKey{Name: pool}, mcp)).To(Succeed())
			conds, _, _ := unstructured.NestedSlice(mcp.Object, "status", "conditions")
			g.Expect(mcp.GetAnnotations()).To(HaveKeyWithValue("machineconfiguration.openshift.io/desired-os-image", want), "pool conditions: %v", conds)
			g.Expect(mcp.GetAnnotations()).To(HaveKeyWithValue("machineconfiguration.openshift.io/newestImageEquivalentConfig", rendered))
		}, 3*time.Minute, 2*time.Second).Should(Succeed())

		By("Opting out: the annotations go")
		labels := mcp.GetLabels()
		delete(labels, "machineconfiguration.openshift.io/layering-enabled")
		mcp.SetLabels(labels)
		Expect(c.Update(ctx, mcp)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(c.Get(ctx, client.ObjectKey{Name: pool}, mcp)).To(Succeed())
			g.Expect(mcp.GetAnnotations()).NotTo(HaveKey("machineconfiguration.openshift.io/desired-os-image"))
		}, time.Minute, time.Second).Should(Succeed())
		Expect(c.Delete(ctx, mcp)).To(Succeed())
		mc := &unstructured.Unstructured{}
		mc.SetAPIVersion("machineconfiguration.openshift.io/v1")
		mc.SetKind("MachineConfig")
		mc.SetName(rendered)
		Expect(c.Delete(ctx, mc)).To(Succeed())
		for _, cm := range []string{"machine-os-builder-config", "machine-config-osimageurl"} {
			Expect(c.Delete(ctx, &corev1.ConfigMap{ObjectMeta: objMeta(ns, cm)})).To(Succeed())
		}
	})
})

func containsArg(args []string, a string) bool {
	for _, v := range args {
		if v == a {
			return true
		}
	}
	return false
}

// buildInputs are what the MCO keeps for a layered pool: the builder
// configuration, the base OS image, the pull and push secrets, the rendered
// MachineConfig and the pool.
const buildInputs = `apiVersion: v1
kind: ConfigMap
metadata:
  name: machine-os-builder-config
  namespace: NS
data:
  baseImagePullSecretName: e2e-pull
  finalImagePushSecretName: e2e-push
  finalImagePullspec: REPO:latest
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: machine-config-osimageurl
  namespace: NS
data:
  baseOSContainerImage: quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:0000000000000000000000000000000000000000000000000000000000000001
  releaseVersion: 4.19.0
---
apiVersion: v1
kind: Secret
metadata:
  name: e2e-pull
  namespace: NS
type: kubernetes.io/dockerconfigjson
stringData:
  .dockerconfigjson: '{"auths":{"quay.io":{"auth":"ZTJlOmUyZQ=="}}}'
---
apiVersion: v1
kind: Secret
metadata:
  name: e2e-push
  namespace: NS
type: kubernetes.io/dockerconfigjson
stringData:
  .dockerconfigjson: '{"auths":{"registry.e2e.invalid":{"auth":"ZTJlOmUyZQ=="}}}'
---
apiVersion: machineconfiguration.openshift.io/v1
kind: MachineConfig
metadata:
  name: RENDERED
spec:
  osImageURL: quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:0000000000000000000000000000000000000000000000000000000000000001
  config:
    ignition:
      version: 3.4.0
    storage:
      files:
      - path: /etc/e2e-layered
        mode: 420
        contents:
          source: data:,layered
---
apiVersion: machineconfiguration.openshift.io/v1
kind: MachineConfigPool
metadata:
  name: POOL
  labels:
    machineconfiguration.openshift.io/layering-enabled: ""
spec:
  machineConfigSelector:
    matchLabels:
      machineconfiguration.openshift.io/role: POOL
  nodeSelector:
    matchLabels:
      node-role.kubernetes.io/POOL: ""
  paused: false
  configuration:
    name: RENDERED
`

func objMeta(namespace, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: namespace, Name: name}
}
