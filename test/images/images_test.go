//go:build images

package images

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/ocp-capi/ocp-capi/test/envtest"
)

// TestReleaseImages checks out/images (make images) against out/ (make
// release): every container of the clusterctl components, of cert-manager's
// manifest and of the umbrella chart with every provider runs an image that
// out/images holds under exactly that tag, for linux/amd64, as a non-root
// user who may execute what the container runs, and none would be pulled;
// images.txt lists every tarball with its image ID. Run by make test-images.
func TestReleaseImages(t *testing.T) {
	g := NewWithT(t)
	root, err := envtest.FindRepoRoot()
	g.Expect(err).NotTo(HaveOccurred())
	out := filepath.Join(root, "out")

	// The images, by tag.
	tars, err := filepath.Glob(filepath.Join(out, "images", "*.tar"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(tars).NotTo(BeEmpty(), "no out/images/*.tar: run make images")
	byTag := map[string]Image{}
	idOf := map[string]string{}
	for _, f := range tars {
		imgs, err := ReadArchiveFile(f)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(imgs).To(HaveLen(1), "%s holds one image", f)
		img := imgs[0]
		g.Expect(img.Tags).To(HaveLen(1), "%s: one tag", f)
		g.Expect(byTag).NotTo(HaveKey(img.Tags[0]), "%s: tag %s in two tarballs", f, img.Tags[0])
		byTag[img.Tags[0]] = img
		idOf[img.Tags[0]] = img.ID
		g.Expect(img.Config.OS).To(Equal("linux"), "%s", f)
		g.Expect(img.Config.Architecture).To(Equal("amd64"), "%s", f)
	}
	list, err := os.ReadFile(filepath.Join(out, "images", "images.txt"))
	g.Expect(err).NotTo(HaveOccurred())
	entries, err := ParseImageList(list)
	g.Expect(err).NotTo(HaveOccurred())
	listed := map[string]string{}
	for _, e := range entries {
		listed[e.Tag] = e.ID
	}
	g.Expect(listed).To(Equal(idOf), "images.txt lists every tarball's tag and image ID")

	// The containers of everything the release installs.
	var manifests []string
	for _, pattern := range []string{"*/*/*-components.yaml", "cert-manager/*/cert-manager.yaml"} {
		m, err := filepath.Glob(filepath.Join(out, pattern))
		g.Expect(err).NotTo(HaveOccurred())
		manifests = append(manifests, m...)
	}
	g.Expect(manifests).NotTo(BeEmpty(), "no components in out/: run make release")
	var containers []Container
	for _, m := range manifests {
		data, err := os.ReadFile(m)
		g.Expect(err).NotTo(HaveOccurred())
		cs, err := ManifestContainers(data)
		g.Expect(err).NotTo(HaveOccurred(), "%s", m)
		containers = append(containers, cs...)
	}
	charts, err := filepath.Glob(filepath.Join(out, "charts", "ocp-capi-[0-9]*.tgz"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(charts).To(HaveLen(1), "one umbrella chart in out/charts")
	rendered, err := exec.Command(filepath.Join(root, "bin", "helm"), "template", "ocp-capi", charts[0], "--set", "addon.enabled=true").Output()
	g.Expect(err).NotTo(HaveOccurred(), "helm template %s", charts[0])
	cs, err := ManifestContainers(rendered)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cs).NotTo(BeEmpty())
	containers = append(containers, cs...)

	for _, c := range containers {
		g.Expect(PullsFromRegistry(c)).To(BeFalse(), "%s would pull %s", c, c.Image)
		img, ok := byTag[c.Image]
		g.Expect(ok).To(BeTrue(), "%s runs %s, which out/images does not hold", c, c.Image)
		if !ok {
			continue
		}
		uid, gid, err := ParseUser(img.Config.Config.User)
		g.Expect(err).NotTo(HaveOccurred(), "%s", c.Image)
		g.Expect(uid).NotTo(BeZero(), "%s runs as root", c.Image)
		prog, err := Executed(c, img.Config)
		g.Expect(err).NotTo(HaveOccurred(), "%s", c)
		g.Expect(Executable(img.Files, prog, uid, gid)).To(Succeed(), "%s", c)
		if solver, ok := ACMESolverImage(c); ok && strings.Contains(c.Image, "cert-manager-controller") {
			g.Expect(byTag).To(HaveKey(solver), "the ACME solver image %s that %s starts", solver, c)
		}
	}
}
