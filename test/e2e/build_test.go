//go:build e2e

package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/cluster-api/util"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ocp-capi/ocp-capi/test/e2e/localenv"
)

// Pool annotations and labels of the BuildController (docs/addon/build-controller.md).
const (
	layeringLabel     = "machineconfiguration.openshift.io/layering-enabled"
	desiredImageAnn   = "machineconfiguration.openshift.io/desired-os-image"
	newestConfigAnn   = "machineconfiguration.openshift.io/newestImageEquivalentConfig"
	historyAnn        = "machineconfiguration.openshift.io/os-image-history"
	buildIDAnn        = "machineconfiguration.openshift.io/desired-os-image-build-id"
	managedByLabel    = "app.kubernetes.io/managed-by"
	managedByBuilds   = "ocp-capi-build-controller"
	poolLabel         = "machineconfiguration.openshift.io/targetMachineConfigPool"
	builderImageTag   = "ocp-capi.local/os-builder:v1"
	buildNamespace    = "openshift-machine-config-operator"
	registryPortEnv   = "E2E_REGISTRY_PORT"
	defaultRegistryPt = "16447"
)

// The BuildController building for real: the add-on (installed by
// clusterctl) is switched to --build-backend=job with the project's buildah
// image (make osbuild-images), a real registry runs on the host
// (hack/osbuild/registry.sh: TLS, basic auth) and pods reach it at the node
// IP. The base OS image (busybox) is pushed there; a layered pool's build
// pulls it, layers the rendered MachineConfig and the user's Containerfile
// with buildah in an unprivileged pod and pushes the result, whose digest
// the registry API must confirm.
var _ = Describe("BuildController (add-on), Job backend with buildah and a registry", func() {
	It("builds layered images for real, rebuilds only when the image changes, prunes old images and cleans up on opt-out", func() {
		ctx := suiteCtx
		c := mgmt.GetClient()
		root, err := filepath.Abs("../..")
		Expect(err).NotTo(HaveOccurred())
		images := filepath.Join(*releaseDir, "images", "osbuild")
		Expect(filepath.Join(images, "builder.tar")).To(BeAnExistingFile(), "the builder image: make osbuild-images (make test-e2e builds it)")

		By("Importing the buildah builder image into the management node's containerd")
		importImages(*mgmtKubeconfig, filepath.Join(images, "builder.tar"))

		By("Starting the registry on the host, reachable from pods at the node IP")
		nodes := &corev1.NodeList{}
		Expect(c.List(ctx, nodes)).To(Succeed())
		Expect(nodes.Items).To(HaveLen(1))
		var nodeIP string
		for _, a := range nodes.Items[0].Status.Addresses {
			if a.Type == corev1.NodeInternalIP {
				nodeIP = a.Address
			}
		}
		Expect(nodeIP).NotTo(BeEmpty())
		port := os.Getenv(registryPortEnv)
		if port == "" {
			port = defaultRegistryPt
		}
		regDir := filepath.Join(*artifactFolder, "registry")
		run("bash", filepath.Join(root, "hack/osbuild/registry.sh"), "down", regDir)
		run("bash", filepath.Join(root, "hack/osbuild/registry.sh"), "up", regDir, port, nodeIP)
		DeferCleanup(func() { run("bash", filepath.Join(root, "hack/osbuild/registry.sh"), "down", regDir) })
		user, pass := readTrimmed(filepath.Join(regDir, "user")), readTrimmed(filepath.Join(regDir, "password"))
		// registry.sh down removes them before the suite's scan.
		recordSecrets(localenv.RegistrySecrets("registry", user, pass)...)
		ca := readTrimmed(filepath.Join(regDir, "ca.crt")) + "\n"
		reg := &registryAPI{base: "https://127.0.0.1:" + port, user: user, pass: pass, ca: ca}
		registry := nodeIP + ":" + port

		By("Pushing the base OS image to the registry")
		certDir := GinkgoT().TempDir()
		Expect(os.WriteFile(filepath.Join(certDir, "ca.crt"), []byte(ca), 0o644)).To(Succeed())
		run("skopeo", "copy", "--quiet", "--dest-cert-dir", certDir, "--dest-creds", user+":"+pass,
			"docker-archive:"+filepath.Join(images, "base.tar"), "docker://127.0.0.1:"+port+"/ocp/os-base:v1")

		By("Switching the add-on to --build-backend=job with the buildah image, keeping one image per pool")
		list := &appsv1.DeploymentList{}
		Expect(c.List(ctx, list, client.InNamespace("ocp-capi-addon-system"))).To(Succeed())
		Expect(list.Items).To(HaveLen(1))
		d := &list.Items[0]
		base := d.DeepCopy()
		args := d.Spec.Template.Spec.Containers[0].Args
		for _, a := range []string{"--build-backend=job", "--builder-image=" + builderImageTag, "--build-image-retention=1"} {
			if !containsArg(args, a) {
				args = append(args, a)
			}
		}
		d.Spec.Template.Spec.Containers[0].Args = args
		Expect(c.Patch(ctx, d, client.MergeFrom(base))).To(Succeed())
		Expect(localenv.WaitForRollout(ctx, c, d, 3*time.Minute)).To(Succeed())

		By("Creating a layered pool and its inputs, as the MCO has them, with a Containerfile of the user's")
		pool := "e2e-" + util.RandomString(5)
		repo := registry + "/ocp/os-image"
		auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))
		Expect(mgmt.CreateOrUpdate(ctx, []byte(strings.NewReplacer(
			"POOL", pool, "REPO", repo, "NS", buildNamespace, "REGISTRY_KEY", nodeIP+".."+port,
			"REGISTRY", registry, "AUTH", auth, "CA", indent(ca, "    ")).Replace(buildInputs)))).To(Succeed())
		mcA := createRenderedConfig(pool, "a", []string{"quiet"})
		start := time.Now()
		Expect(mgmt.CreateOrUpdate(ctx, []byte(strings.NewReplacer("POOL", pool, "RENDERED", mcA).Replace(layeredPool)))).To(Succeed())
		jobs := &jobWatch{pool: pool}

		By("Waiting for the pool's image, built by buildah and pushed")
		mcp := &unstructured.Unstructured{}
		mcp.SetAPIVersion("machineconfiguration.openshift.io/v1")
		mcp.SetKind("MachineConfigPool")
		getPool := func(g Gomega) map[string]string {
			g.Expect(c.Get(ctx, client.ObjectKey{Name: pool}, mcp)).To(Succeed())
			return mcp.GetAnnotations()
		}
		var imageA string
		Eventually(func(g Gomega) {
			jobs.poll(g)
			ann := getPool(g)
			conds, _, _ := unstructured.NestedSlice(mcp.Object, "status", "conditions")
			g.Expect(ann).To(HaveKey(desiredImageAnn), "pool conditions: %v", conds)
			imageA = ann[desiredImageAnn]
		}, 10*time.Minute, 2*time.Second).Should(Succeed())
		elapsed := time.Since(start)
		Expect(getPool(Default)).To(HaveKeyWithValue(newestConfigAnn, mcA))
		Expect(imageA).To(HavePrefix(repo + "@sha256:"))
		digestA := strings.TrimPrefix(imageA, repo+"@")

		By("Checking the digest through the registry API: the tag the build pushed names it")
		tagDigest, size := reg.manifest("ocp/os-image", mcA)
		Expect(tagDigest).To(Equal(digestA), "the registry's digest of %s:%s", repo, mcA)
		Expect(jobs.seen()).To(Equal(1), "one build Job")
		AddReportEntry("BuildController figures", fmt.Sprintf("pool change to image pushed: %s; image %s, %d bytes (manifest, config and layers)", elapsed.Round(time.Second), imageA, size))
		fmt.Fprintf(GinkgoWriter, "FIGURE: pool change to image pushed %s, image size %d bytes\n", elapsed.Round(time.Second), size)

		By("A MachineConfig change that does not touch the image: no build, same image")
		mcA2 := createRenderedConfig(pool, "a2", []string{"quiet"})
		patchPoolConfig(pool, mcA2)
		Eventually(func(g Gomega) { g.Expect(getPool(g)).To(HaveKeyWithValue(newestConfigAnn, mcA2)) }, time.Minute, time.Second).Should(Succeed())
		Consistently(func(g Gomega) { jobs.poll(g) }, 10*time.Second, time.Second).Should(Succeed())
		Expect(jobs.seen()).To(Equal(1), "no second build Job")
		Expect(getPool(Default)).To(HaveKeyWithValue(desiredImageAnn, imageA))

		By("A kernel-argument change: one build, a new image")
		mcB := createRenderedConfig(pool, "b", []string{"quiet", "nosmt"})
		startB := time.Now()
		patchPoolConfig(pool, mcB)
		var imageB string
		Eventually(func(g Gomega) {
			jobs.poll(g)
			ann := getPool(g)
			g.Expect(ann).To(HaveKeyWithValue(newestConfigAnn, mcB))
			imageB = ann[desiredImageAnn]
		}, 10*time.Minute, 2*time.Second).Should(Succeed())
		fmt.Fprintf(GinkgoWriter, "FIGURE: kernel-argument change to image pushed %s\n", time.Since(startB).Round(time.Second))
		Expect(imageB).NotTo(Equal(imageA))
		Expect(jobs.seen()).To(Equal(2), "exactly one more build Job")
		tagDigest, _ = reg.manifest("ocp/os-image", mcB)
		Expect(repo + "@" + tagDigest).To(Equal(imageB))

		By("The old image is pruned from the registry (--build-image-retention=1)")
		Eventually(func() int { return reg.status("ocp/os-image", digestA) }, time.Minute, time.Second).Should(Equal(http.StatusNotFound))
		Expect(reg.status("ocp/os-image", strings.TrimPrefix(imageB, repo+"@"))).To(Equal(http.StatusOK))

		By("The finished builds' Jobs, pods and ConfigMaps are gone")
		Eventually(func(g Gomega) { g.Expect(ownedObjects(g, pool)).To(BeEmpty()) }, 2*time.Minute, 2*time.Second).Should(Succeed())

		By("Opting out removes everything the controller made: annotations, conditions, objects, images")
		Eventually(func() error {
			getPool(Default)
			labels := mcp.GetLabels()
			delete(labels, layeringLabel)
			mcp.SetLabels(labels)
			return c.Update(ctx, mcp)
		}, time.Minute, time.Second).Should(Succeed())
		Eventually(func(g Gomega) {
			ann := getPool(g)
			for _, k := range []string{desiredImageAnn, newestConfigAnn, historyAnn, buildIDAnn} {
				g.Expect(ann).NotTo(HaveKey(k))
			}
			conds, _, _ := unstructured.NestedSlice(mcp.Object, "status", "conditions")
			g.Expect(conds).To(BeEmpty())
			g.Expect(ownedObjects(g, pool)).To(BeEmpty())
		}, 2*time.Minute, time.Second).Should(Succeed())
		Eventually(func() int { return reg.status("ocp/os-image", strings.TrimPrefix(imageB, repo+"@")) }, time.Minute, time.Second).Should(Equal(http.StatusNotFound))
		// What the user made is still there.
		for _, cm := range []string{"machine-os-builder-config", "machine-config-osimageurl", "machine-os-builder-registry-ca", "on-cluster-build-custom-dockerfile"} {
			Expect(c.Get(ctx, client.ObjectKey{Namespace: buildNamespace, Name: cm}, &corev1.ConfigMap{})).To(Succeed(), "ConfigMap %s", cm)
		}
		Expect(reg.status("ocp/os-base", "v1")).To(Equal(http.StatusOK), "the base image")

		By("A second pool driven by a MachineOSConfig (no label): a real build, shown by its MachineOSBuild and the MachineOSConfig")
		pool2 := pool + "-mosc"
		repo2 := registry + "/ocp/mosc-image"
		mcM := createRenderedConfig(pool2, "m", []string{"quiet"})
		start2 := time.Now()
		Expect(mgmt.CreateOrUpdate(ctx, []byte(strings.NewReplacer("POOL", pool2, "RENDERED", mcM).Replace(plainPool)))).To(Succeed())
		Expect(mgmt.CreateOrUpdate(ctx, []byte(strings.NewReplacer("POOL", pool2, "PUSHSPEC", repo2+":latest").Replace(machineOSConfig)))).To(Succeed())
		mosc := &unstructured.Unstructured{}
		mosc.SetAPIVersion("machineconfiguration.openshift.io/v1")
		mosc.SetKind("MachineOSConfig")
		var imageM, mosbName string
		Eventually(func(g Gomega) {
			g.Expect(c.Get(ctx, client.ObjectKey{Name: pool2}, mosc)).To(Succeed())
			imageM, _, _ = unstructured.NestedString(mosc.Object, "status", "currentImagePullSpec")
			mosbName, _, _ = unstructured.NestedString(mosc.Object, "status", "machineOSBuild", "name")
			g.Expect(imageM).NotTo(BeEmpty(), "MachineOSConfig status: %v", mosc.Object["status"])
		}, 10*time.Minute, 2*time.Second).Should(Succeed())
		fmt.Fprintf(GinkgoWriter, "FIGURE: MachineOSConfig to image pushed %s\n", time.Since(start2).Round(time.Second))
		Expect(imageM).To(HavePrefix(repo2 + "@sha256:"))
		mosb := &unstructured.Unstructured{}
		mosb.SetAPIVersion("machineconfiguration.openshift.io/v1")
		mosb.SetKind("MachineOSBuild")
		Expect(c.Get(ctx, client.ObjectKey{Name: mosbName}, mosb)).To(Succeed())
		Expect(nestedString(mosb.Object, "status", "digestedImagePushSpec")).To(Equal(imageM))
		Expect(nestedString(mosb.Object, "status", "builder", "imageBuilderType")).To(Equal("Job"))
		Expect(nestedString(mosb.Object, "spec", "renderedImagePushSpec")).To(Equal(repo2 + ":" + mosbName))
		conds, _, _ := unstructured.NestedSlice(mosb.Object, "status", "conditions")
		trueConds := map[string]string{}
		for _, x := range conds {
			m := x.(map[string]any)
			if m["status"] == "True" {
				trueConds[m["type"].(string)] = m["reason"].(string)
			}
		}
		Expect(trueConds).To(Equal(map[string]string{"Succeeded": "Ready"}))
		for _, k := range []string{"buildStart", "buildEnd"} {
			Expect(nestedString(mosb.Object, "status", k)).NotTo(BeEmpty(), k)
		}
		tagDigest, _ = reg.manifest("ocp/mosc-image", mosbName)
		Expect(repo2+"@"+tagDigest).To(Equal(imageM), "the registry's digest of the MachineOSBuild's tag")

		By("Deleting the MachineOSConfig removes its MachineOSBuilds, the pool's annotations and the image")
		Expect(c.Delete(ctx, mosc)).To(Succeed())
		Eventually(func(g Gomega) {
			list := &unstructured.UnstructuredList{}
			list.SetAPIVersion("machineconfiguration.openshift.io/v1")
			list.SetKind("MachineOSBuildList")
			g.Expect(c.List(ctx, list, client.MatchingLabels{"machineconfiguration.openshift.io/target-machine-config-pool": pool2})).To(Succeed())
			g.Expect(list.Items).To(BeEmpty())
			g.Expect(c.Get(ctx, client.ObjectKey{Name: pool2}, mcp)).To(Succeed())
			g.Expect(mcp.GetAnnotations()).NotTo(HaveKey(desiredImageAnn))
			g.Expect(ownedObjects(g, pool2)).To(BeEmpty())
		}, 2*time.Minute, time.Second).Should(Succeed())
		Eventually(func() int { return reg.status("ocp/mosc-image", strings.TrimPrefix(imageM, repo2+"@")) }, time.Minute, time.Second).Should(Equal(http.StatusNotFound))
		Expect(c.Delete(ctx, mcp)).To(Succeed())

		Expect(c.Get(ctx, client.ObjectKey{Name: pool}, mcp)).To(Succeed())
		Expect(c.Delete(ctx, mcp)).To(Succeed())
		for _, mc := range []string{mcA, mcA2, mcB, mcM} {
			o := &unstructured.Unstructured{}
			o.SetAPIVersion("machineconfiguration.openshift.io/v1")
			o.SetKind("MachineConfig")
			o.SetName(mc)
			Expect(c.Delete(ctx, o)).To(Succeed())
		}
		for _, cm := range []string{"machine-os-builder-config", "machine-config-osimageurl", "machine-os-builder-registry-ca", "on-cluster-build-custom-dockerfile"} {
			Expect(c.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: buildNamespace, Name: cm}})).To(Succeed())
		}
		for _, s := range []string{"e2e-pull", "e2e-push"} {
			Expect(c.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: buildNamespace, Name: s}})).To(Succeed())
		}
	})
})

// jobWatch counts the distinct build Jobs of a pool seen while polling (a
// build runs for tens of seconds, far longer than the poll interval).
type jobWatch struct {
	pool string
	uids map[types.UID]bool
}

func (w *jobWatch) poll(g Gomega) {
	list := &batchv1.JobList{}
	g.Expect(mgmt.GetClient().List(suiteCtx, list, client.InNamespace(buildNamespace),
		client.MatchingLabels{managedByLabel: managedByBuilds, poolLabel: w.pool})).To(Succeed())
	if w.uids == nil {
		w.uids = map[types.UID]bool{}
	}
	for _, j := range list.Items {
		w.uids[j.UID] = true
	}
}

func (w *jobWatch) seen() int { return len(w.uids) }

// ownedObjects lists the Jobs, pods and ConfigMaps the controller made for
// pool.
func ownedObjects(g Gomega, pool string) []string {
	c := mgmt.GetClient()
	sel := []client.ListOption{client.InNamespace(buildNamespace), client.MatchingLabels{managedByLabel: managedByBuilds, poolLabel: pool}}
	var out []string
	jobs := &batchv1.JobList{}
	g.Expect(c.List(suiteCtx, jobs, sel...)).To(Succeed())
	for _, j := range jobs.Items {
		out = append(out, "job/"+j.Name)
	}
	pods := &corev1.PodList{}
	g.Expect(c.List(suiteCtx, pods, sel...)).To(Succeed())
	for _, p := range pods.Items {
		out = append(out, "pod/"+p.Name)
	}
	cms := &corev1.ConfigMapList{}
	g.Expect(c.List(suiteCtx, cms, sel...)).To(Succeed())
	for _, cm := range cms.Items {
		out = append(out, "configmap/"+cm.Name)
	}
	return out
}

// createRenderedConfig creates a rendered MachineConfig for pool with the
// given kernel arguments and a file naming suffix; it returns its name.
func createRenderedConfig(pool, suffix string, kargs []string) string {
	name := "rendered-" + pool + "-" + suffix
	kj, _ := json.Marshal(kargs)
	Expect(mgmt.CreateOrUpdate(suiteCtx, []byte(strings.NewReplacer("NAME", name, "KARGS", string(kj), "SUFFIX", suffix).Replace(renderedConfig)))).To(Succeed())
	return name
}

func patchPoolConfig(pool, rendered string) {
	mcp := &unstructured.Unstructured{}
	mcp.SetAPIVersion("machineconfiguration.openshift.io/v1")
	mcp.SetKind("MachineConfigPool")
	mcp.SetName(pool)
	patch := fmt.Sprintf(`{"spec":{"configuration":{"name":%q}}}`, rendered)
	Expect(mgmt.GetClient().Patch(suiteCtx, mcp, client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
}

// registryAPI reads the host's registry through the distribution API.
type registryAPI struct{ base, user, pass, ca string }

func (r *registryAPI) do(method, repo, ref string) *http.Response {
	pool := x509.NewCertPool()
	Expect(pool.AppendCertsFromPEM([]byte(r.ca))).To(BeTrue())
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	req, err := http.NewRequestWithContext(suiteCtx, method, r.base+"/v2/"+repo+"/manifests/"+ref, nil)
	Expect(err).NotTo(HaveOccurred())
	req.SetBasicAuth(r.user, r.pass)
	req.Header.Set("Accept", "application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json")
	resp, err := hc.Do(req)
	Expect(err).NotTo(HaveOccurred())
	return resp
}

// status is the registry's HTTP status for a manifest (200 or 404).
func (r *registryAPI) status(repo, ref string) int {
	resp := r.do(http.MethodHead, repo, ref)
	_ = resp.Body.Close()
	return resp.StatusCode
}

// manifest returns the digest the registry reports for repo:ref and the
// image's size: manifest, config and layers.
func (r *registryAPI) manifest(repo, ref string) (string, int64) {
	resp := r.do(http.MethodGet, repo, ref)
	defer resp.Body.Close()
	Expect(resp.StatusCode).To(Equal(http.StatusOK), "GET manifest %s:%s", repo, ref)
	var m struct {
		Config struct{ Size int64 }   `json:"config"`
		Layers []struct{ Size int64 } `json:"layers"`
	}
	Expect(json.NewDecoder(resp.Body).Decode(&m)).To(Succeed())
	size := resp.ContentLength + m.Config.Size
	for _, l := range m.Layers {
		size += l.Size
	}
	return resp.Header.Get("Docker-Content-Digest"), size
}

// nestedString is the string at path in obj, or "".
func nestedString(obj map[string]any, path ...string) string {
	v, _, _ := unstructured.NestedString(obj, path...)
	return v
}

func containsArg(args []string, a string) bool {
	for _, v := range args {
		if v == a {
			return true
		}
	}
	return false
}

func readTrimmed(path string) string {
	b, err := os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred())
	return strings.TrimSpace(string(b))
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+prefix)
}

// buildInputs are what the MCO and the user keep for a layered pool: the
// builder configuration, the base OS image, the registry's CA, the pull and
// push secrets (real credentials of the registry) and the user's
// Containerfile for the pool.
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
  baseOSContainerImage: REGISTRY/ocp/os-base:v1
  releaseVersion: 4.19.0
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: machine-os-builder-registry-ca
  namespace: NS
data:
  REGISTRY_KEY: |
CA
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: on-cluster-build-custom-dockerfile
  namespace: NS
data:
  POOL: |
    RUN echo "layered by the ocp-capi e2e" > /etc/e2e-layer
---
apiVersion: v1
kind: Secret
metadata:
  name: e2e-pull
  namespace: NS
type: kubernetes.io/dockerconfigjson
stringData:
  .dockerconfigjson: '{"auths":{"REGISTRY":{"auth":"AUTH"}}}'
---
apiVersion: v1
kind: Secret
metadata:
  name: e2e-push
  namespace: NS
type: kubernetes.io/dockerconfigjson
stringData:
  .dockerconfigjson: '{"auths":{"REGISTRY":{"auth":"AUTH"}}}'
`

const renderedConfig = `apiVersion: machineconfiguration.openshift.io/v1
kind: MachineConfig
metadata:
  name: NAME
spec:
  osImageURL: quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:0000000000000000000000000000000000000000000000000000000000000001
  kernelArguments: KARGS
  config:
    ignition:
      version: 3.4.0
    storage:
      files:
      - path: /etc/e2e-layered
        mode: 420
        contents:
          source: data:,SUFFIX
`

// plainPool is a pool without the layering label: a MachineOSConfig opts
// it in.
const plainPool = `apiVersion: machineconfiguration.openshift.io/v1
kind: MachineConfigPool
metadata:
  name: POOL
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

// machineOSConfig is the GA API's opt-in (OpenShift 4.19): named after its
// pool, the registry's secrets, a Containerfile for every architecture.
const machineOSConfig = `apiVersion: machineconfiguration.openshift.io/v1
kind: MachineOSConfig
metadata:
  name: POOL
spec:
  machineConfigPool:
    name: POOL
  imageBuilder:
    imageBuilderType: Job
  baseImagePullSecret:
    name: e2e-pull
  renderedImagePushSecret:
    name: e2e-push
  renderedImagePushSpec: PUSHSPEC
  containerFile:
  - containerfileArch: NoArch
    content: |
      RUN echo "layered through a MachineOSConfig" > /etc/e2e-mosc
`

const layeredPool = `apiVersion: machineconfiguration.openshift.io/v1
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

// importImages imports image tarballs into the containerd of the node of
// the management cluster of kubeconfig (mgmt up keeps its state beside the
// kubeconfig).
func importImages(kubeconfig string, tars ...string) {
	sock := filepath.Join(filepath.Dir(kubeconfig), "run", "containerd", "containerd.sock")
	for _, t := range tars {
		run("ctr", "--address", sock, "-n", "k8s.io", "images", "import", t)
	}
}
