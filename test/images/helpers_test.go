package images

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"

	. "github.com/onsi/gomega"
)

type tarEntry struct {
	name     string
	typ      byte
	mode     int64
	uid, gid int
	body     []byte
	link     string
}

func tarBytes(t testing.TB, entries []tarEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		typ := e.typ
		if typ == 0 {
			typ = tar.TypeReg
		}
		hdr := &tar.Header{Name: e.name, Typeflag: typ, Mode: e.mode, Uid: e.uid, Gid: e.gid, Size: int64(len(e.body)), Linkname: e.link}
		if typ != tar.TypeReg {
			hdr.Size = 0
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if typ == tar.TypeReg {
			if _, err := tw.Write(e.body); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func gz(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// dockerArchive builds an archive of one image with the given layers (as
// imgbuild writes it: config named by its digest, gzipped layers).
func dockerArchive(t testing.TB, tags []string, config string, layers ...[]byte) ([]byte, string) {
	t.Helper()
	sum := sha256.Sum256([]byte(config))
	cfgName := "sha256:" + hex.EncodeToString(sum[:])
	entries := []tarEntry{{name: cfgName, mode: 0o644, body: []byte(config)}}
	m := manifestEntry{Config: cfgName, RepoTags: tags}
	for i, l := range layers {
		name := string(rune('a'+i)) + ".tar.gz"
		entries = append(entries, tarEntry{name: name, mode: 0o644, body: l})
		m.Layers = append(m.Layers, name)
	}
	mj, err := json.Marshal([]manifestEntry{m})
	if err != nil {
		t.Fatal(err)
	}
	entries = append(entries, tarEntry{name: "manifest.json", mode: 0o644, body: mj})
	return tarBytes(t, entries), cfgName
}

const testConfig = `{"architecture":"amd64","os":"linux","config":{"User":"65532:65532","Entrypoint":["/manager"],"WorkingDir":"/"}}`

func TestReadArchive(t *testing.T) {
	g := NewWithT(t)
	base := gz(t, tarBytes(t, []tarEntry{
		{name: "tmp/", typ: tar.TypeDir, mode: 0o1777},
		{name: "manager", mode: 0o755, body: []byte("binary")},
		{name: "etc/", typ: tar.TypeDir, mode: 0o755},
		{name: "etc/old", mode: 0o644, body: []byte("x")},
		{name: "opaque/", typ: tar.TypeDir, mode: 0o755},
		{name: "opaque/a", mode: 0o644},
	}))
	// The second layer is not compressed, deletes etc/old and empties opaque/.
	top := tarBytes(t, []tarEntry{
		{name: "etc/.wh.old", mode: 0o644},
		{name: "opaque/.wh..wh..opq", mode: 0o644},
		{name: "bin/", typ: tar.TypeDir, mode: 0o755},
		{name: "bin/run", typ: tar.TypeSymlink, link: "../manager"},
	})
	archive, id := dockerArchive(t, []string{"ocp-capi.local/x:v1"}, testConfig, base, top)
	imgs, err := ReadArchive(bytes.NewReader(archive))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(imgs).To(HaveLen(1))
	img := imgs[0]
	g.Expect(img.Tags).To(Equal([]string{"ocp-capi.local/x:v1"}))
	g.Expect(img.ID).To(Equal(id))
	g.Expect(img.Config.OS).To(Equal("linux"))
	g.Expect(img.Config.Architecture).To(Equal("amd64"))
	g.Expect(img.Config.Config.User).To(Equal("65532:65532"))
	g.Expect(img.Config.Config.Entrypoint).To(Equal([]string{"/manager"}))
	g.Expect(img.Files).To(HaveKey("/manager"))
	g.Expect(img.Files["/manager"].Mode).To(Equal(int64(0o755)))
	g.Expect(img.Files["/manager"].Size).To(Equal(int64(6)))
	g.Expect(img.Files["/tmp"].Mode).To(Equal(int64(0o1777)))
	g.Expect(img.Files).NotTo(HaveKey("/etc/old"))
	g.Expect(img.Files).To(HaveKey("/etc"))
	g.Expect(img.Files).NotTo(HaveKey("/opaque/a"))
	g.Expect(img.Files).To(HaveKey("/bin/run"))
	g.Expect(Executable(img.Files, "/bin/run", 65532, 65532)).To(Succeed())
}

func TestReadArchiveErrors(t *testing.T) {
	cases := map[string]struct {
		archive []byte
		want    string
	}{
		"not a docker archive": {tarBytes(t, []tarEntry{{name: "x", mode: 0o644}}), "no manifest.json"},
		"empty manifest":       {tarBytes(t, []tarEntry{{name: "manifest.json", mode: 0o644, body: []byte("[]")}}), "lists no image"},
		"missing config": {tarBytes(t, []tarEntry{{name: "manifest.json", mode: 0o644,
			body: []byte(`[{"Config":"c.json","RepoTags":["a:b"],"Layers":[]}]`)}}), `config "c.json" not in the archive`},
		"missing layer": {tarBytes(t, []tarEntry{{name: "c", mode: 0o644, body: []byte(testConfig)},
			{name: "manifest.json", mode: 0o644, body: []byte(`[{"Config":"c","Layers":["l.tar.gz"]}]`)}}), `layer "l.tar.gz" not in the archive`},
		"not a tar": {[]byte("hello"), "reading archive"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := ReadArchive(bytes.NewReader(tc.archive))
			NewWithT(t).Expect(err).To(MatchError(ContainSubstring(tc.want)))
		})
	}
}

func TestParseUser(t *testing.T) {
	cases := []struct {
		user     string
		uid, gid int
		err      bool
	}{
		{"", 0, 0, false},
		{"0", 0, 0, false},
		{"65532:65532", 65532, 65532, false},
		{"1000", 1000, 1000, false},
		{"1000:0", 1000, 0, false},
		{"root", 0, 0, true},
		{"nonroot:nonroot", 0, 0, true},
		{"1000:staff", 0, 0, true},
		{"-1", 0, 0, true},
	}
	for _, tc := range cases {
		t.Run(tc.user, func(t *testing.T) {
			g := NewWithT(t)
			uid, gid, err := ParseUser(tc.user)
			if tc.err {
				g.Expect(err).To(HaveOccurred())
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect([]int{uid, gid}).To(Equal([]int{tc.uid, tc.gid}))
		})
	}
}

func TestExecutable(t *testing.T) {
	files := map[string]File{
		"/root-only":  {Type: tar.TypeReg, Mode: 0o700},
		"/group-only": {Type: tar.TypeReg, Mode: 0o750, GID: 65532},
		"/world":      {Type: tar.TypeReg, Mode: 0o755},
		"/mine":       {Type: tar.TypeReg, Mode: 0o700, UID: 1000, GID: 1000},
		"/data":       {Type: tar.TypeReg, Mode: 0o644},
		"/dir":        {Type: tar.TypeDir, Mode: 0o755},
		"/link":       {Type: tar.TypeSymlink, Linkname: "world"},
		"/loop":       {Type: tar.TypeSymlink, Linkname: "/loop"},
		"/dangling":   {Type: tar.TypeSymlink, Linkname: "/nowhere"},
	}
	cases := []struct {
		path     string
		uid, gid int
		ok       bool
	}{
		{"/world", 65532, 65532, true},
		{"/root-only", 65532, 65532, false},
		{"/root-only", 0, 0, true},
		{"/group-only", 65532, 65532, true},
		{"/group-only", 1000, 1000, false},
		{"/mine", 1000, 1000, true},
		{"/mine", 65532, 65532, false},
		{"/data", 0, 0, false},
		{"/dir", 0, 0, false},
		{"/missing", 0, 0, false},
		{"/link", 65532, 65532, true},
		{"/loop", 0, 0, false},
		{"/dangling", 0, 0, false},
	}
	for _, tc := range cases {
		err := Executable(files, tc.path, tc.uid, tc.gid)
		if tc.ok {
			NewWithT(t).Expect(err).NotTo(HaveOccurred(), "%s by %d:%d", tc.path, tc.uid, tc.gid)
		} else {
			NewWithT(t).Expect(err).To(HaveOccurred(), "%s by %d:%d", tc.path, tc.uid, tc.gid)
		}
	}
}

const testManifest = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: things.example.com
spec:
  versions:
  - schema:
      openAPIV3Schema:
        properties:
          containers:
            type: array
            items:
              properties:
                image: {type: string}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: manager
  namespace: system
spec:
  template:
    spec:
      initContainers:
      - name: init
        image: ocp-capi.local/init:v1
      containers:
      - name: manager
        image: ocp-capi.local/manager:v1
        imagePullPolicy: IfNotPresent
        command: [/manager]
        args: [--leader-elect, --v=2]
---
# only a comment
---
apiVersion: batch/v1
kind: CronJob
metadata:
  name: job
  namespace: other
spec:
  jobTemplate:
    spec:
      template:
        spec:
          containers:
          - name: run
            image: quay.io/x/y:latest
---
apiVersion: v1
kind: Namespace
metadata:
  name: empty
`

func TestManifestContainers(t *testing.T) {
	g := NewWithT(t)
	cs, err := ManifestContainers([]byte(testManifest))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cs).To(ConsistOf(
		Container{Object: "Deployment system/manager", Name: "init", Image: "ocp-capi.local/init:v1"},
		Container{Object: "Deployment system/manager", Name: "manager", Image: "ocp-capi.local/manager:v1",
			PullPolicy: "IfNotPresent", Command: []string{"/manager"}, Args: []string{"--leader-elect", "--v=2"}},
		Container{Object: "CronJob other/job", Name: "run", Image: "quay.io/x/y:latest"},
	))
	g.Expect(Refs(cs)).To(Equal([]string{"ocp-capi.local/init:v1", "ocp-capi.local/manager:v1", "quay.io/x/y:latest"}))

	_, err = ManifestContainers([]byte("a: [b\n"))
	g.Expect(err).To(HaveOccurred())
}

func TestPullsFromRegistry(t *testing.T) {
	cases := []struct {
		image, policy string
		pulls         bool
	}{
		{"ocp-capi.local/m:v1", "IfNotPresent", false},
		{"ocp-capi.local/m:v1", "Never", false},
		{"ocp-capi.local/m:v1", "Always", true},
		{"ocp-capi.local/m:v1", "", false},
		{"ocp-capi.local/m:latest", "", true},
		{"ocp-capi.local/m", "", true},
		{"localhost:5000/m", "", true},
		{"localhost:5000/m:v1", "", false},
		{"m@sha256:abc", "", false},
		{"ocp-capi.local/m:latest", "IfNotPresent", false},
	}
	for _, tc := range cases {
		NewWithT(t).Expect(PullsFromRegistry(Container{Image: tc.image, PullPolicy: tc.policy})).To(Equal(tc.pulls), "%s %q", tc.image, tc.policy)
	}
}

func TestExecuted(t *testing.T) {
	var img Config
	img.Config.Entrypoint = []string{"/app/cmd/controller/controller"}
	img.Config.Cmd = []string{"--help"}
	cases := []struct {
		c    Container
		img  Config
		want string
		err  bool
	}{
		{Container{Command: []string{"/manager"}}, img, "/manager", false},
		{Container{Args: []string{"--v=2"}}, img, "/app/cmd/controller/controller", false},
		{Container{Args: []string{"/bin/x"}}, Config{}, "/bin/x", false},
		{Container{}, Config{}, "", true},
	}
	for _, tc := range cases {
		got, err := Executed(tc.c, tc.img)
		g := NewWithT(t)
		if tc.err {
			g.Expect(err).To(HaveOccurred())
			continue
		}
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got).To(Equal(tc.want))
	}
}

func TestACMESolverImage(t *testing.T) {
	cases := []struct {
		c    Container
		want string
		ok   bool
	}{
		{Container{Image: "quay.io/jetstack/cert-manager-controller:v1.9.2"}, "quay.io/jetstack/cert-manager-acmesolver:v1.9.2", true},
		{Container{Image: "quay.io/jetstack/cert-manager-controller:v1.9.2", Args: []string{"--acme-http01-solver-image=r/s:1"}}, "r/s:1", true},
		{Container{Image: "quay.io/jetstack/cert-manager-controller:v1.9.2", Args: []string{"--acme-http01-solver-image", "r/s:2"}}, "r/s:2", true},
		{Container{Image: "quay.io/jetstack/cert-manager-controller"}, "", false},
		{Container{Image: "ocp-capi.local/manager:v1"}, "", false},
	}
	for _, tc := range cases {
		got, ok := ACMESolverImage(tc.c)
		NewWithT(t).Expect([]any{got, ok}).To(Equal([]any{tc.want, tc.ok}), "%+v", tc.c)
	}
}

func TestParseImageList(t *testing.T) {
	g := NewWithT(t)
	id := "sha256:" + hex.EncodeToString(make([]byte, 32))
	got, err := ParseImageList([]byte("# tag image-id size\nocp-capi.local/m:v1 " + id + " 123\n\n"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(Equal([]ListEntry{{Tag: "ocp-capi.local/m:v1", ID: id, Size: 123}}))
	for _, bad := range []string{"a b", "a " + id + " -1", "a sha256:12 1", "a " + id + " x", "a " + id + " 1 extra"} {
		_, err := ParseImageList([]byte(bad))
		g.Expect(err).To(HaveOccurred(), bad)
	}
}

// The parsers must not panic on whatever a broken build leaves behind.
func FuzzReadArchive(f *testing.F) {
	a, _ := dockerArchive(f, []string{"a:b"}, testConfig, gz(f, tarBytes(f, []tarEntry{{name: "manager", mode: 0o755, body: []byte("x")}})))
	f.Add(a)
	f.Add([]byte("not a tar"))
	f.Fuzz(func(t *testing.T, b []byte) {
		imgs, err := ReadArchive(bytes.NewReader(b))
		if err == nil && len(imgs) == 0 {
			t.Fatal("no error and no image")
		}
	})
}

func FuzzManifestContainers(f *testing.F) {
	f.Add([]byte(testManifest))
	f.Add([]byte("containers: [{image: 1}, 2, {image: x}]"))
	f.Fuzz(func(t *testing.T, b []byte) {
		cs, err := ManifestContainers(b)
		if err != nil {
			return
		}
		for _, c := range cs {
			_, _ = ACMESolverImage(c)
			_ = PullsFromRegistry(c)
		}
	})
}
