package osbuild

import (
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"io"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	mcfgv1 "github.com/ocp-capi/ocp-capi/internal/consumed/machineconfiguration/v1"
)

func testInputs() Inputs {
	return Inputs{
		Pool:           "worker",
		RenderedConfig: "rendered-worker-0123456789abcdef0123456789abcdef",
		Builder: BuilderConfig{ConfigMapName: BuilderConfigMapName, BaseImagePullSecret: "pull",
			FinalImagePushSecret: "push", FinalRepository: testRepo},
		Images: OSImages{BaseImage: "quay.io/ocp/rhcos@sha256:" + strings.Repeat("1", 64), ReleaseVersion: "4.15.0"},
	}
}

func testPool() *mcfgv1.MachineConfigPool {
	return &mcfgv1.MachineConfigPool{ObjectMeta: metav1.ObjectMeta{Name: "worker", UID: types.UID("uid-1")}}
}

// TestInputsID: every input changes the ID; the same inputs give the same ID.
func TestInputsID(t *testing.T) {
	base := testInputs()
	if base.ID() != testInputs().ID() || len(base.ID()) != 16 {
		t.Fatalf("ID %q is not stable or not 16 characters", base.ID())
	}
	for name, mutate := range map[string]func(*Inputs){
		"pool":            func(in *Inputs) { in.Pool = "infra" },
		"kernel argument": func(in *Inputs) { in.Image.KernelArguments = []string{"nosmt"} },
		"kernel type":     func(in *Inputs) { in.Image.KernelType = "realtime" },
		"extension":       func(in *Inputs) { in.Image.Extensions = []string{"usbguard"} },
		"os image URL":    func(in *Inputs) { in.Image.OSImageURL = "quay.io/ocp/rhcos:2" },
		"containerfile":   func(in *Inputs) { in.Containerfile = "FROM configs\nRUN true" },
		"base image":      func(in *Inputs) { in.Images.BaseImage = "quay.io/ocp/rhcos:new" },
		"release version": func(in *Inputs) { in.Images.ReleaseVersion = "4.16.0" },
		"repository":      func(in *Inputs) { in.Builder.FinalRepository = "quay.io/other/repo" },
		"pull secret":     func(in *Inputs) { in.Builder.BaseImagePullSecret = "pull2" },
		"push secret":     func(in *Inputs) { in.Builder.FinalImagePushSecret = "push2" },
	} {
		in := testInputs()
		mutate(&in)
		if in.ID() == base.ID() {
			t.Errorf("changing the %s does not change the ID", name)
		}
	}
	// A new rendered config that changes nothing baked into the image
	// keeps the ID: the pool keeps its image (RequiresRebuild).
	in := testInputs()
	in.RenderedConfig = "rendered-worker-2"
	if in.ID() != base.ID() {
		t.Error("a rendered config with the same image fields must keep the ID")
	}
	// The ConfigMap's name (BuilderConfigMapName or its alias) is not an
	// input of the image.
	in = testInputs()
	in.Builder.ConfigMapName = BuilderConfigMapAlias
	if in.ID() != base.ID() {
		t.Error("reading the alias ConfigMap must not change the ID")
	}
}

func TestPushSpecAndImage(t *testing.T) {
	in := testInputs()
	if got, want := in.PushSpec(), testRepo+":"+in.RenderedConfig; got != want {
		t.Errorf("PushSpec = %q, want %q", got, want)
	}
	d := "sha256:" + strings.Repeat("a", 64)
	if got, want := in.ImageWithDigest(d), testRepo+"@"+d; got != want {
		t.Errorf("ImageWithDigest = %q, want %q", got, want)
	}
	in.RenderedConfig = strings.Repeat("r", 200) // too long for a tag
	if got := in.Tag(); got != in.ID() {
		t.Errorf("Tag = %q, want the ID %q", got, in.ID())
	}
}

func TestNewRequest(t *testing.T) {
	in := testInputs()
	mc := []byte(`{"apiVersion":"machineconfiguration.openshift.io/v1","kind":"MachineConfig","metadata":{"name":"` + in.RenderedConfig + `"}}`)
	req, err := NewRequest("mco", in, testPool(), mc)
	if err != nil {
		t.Fatal(err)
	}
	if req.ID != in.ID() || req.Names != NamesFor("worker", in.ID()) || req.Namespace != "mco" {
		t.Errorf("request %+v", req)
	}
	for _, want := range []string{
		"FROM " + in.Images.BaseImage + " AS extract",
		"COPY machineconfig/machineconfig.json.gz /tmp/machineconfig.json.gz",
		"gunzip -c",
		"FROM " + in.Images.BaseImage + " AS configs",
		"ignition --ignore-unsupported",
		"ostree container commit",
		`machineconfig="` + in.RenderedConfig + `"`,
		`machineconfigpool="worker"`,
		`releaseversion="4.15.0"`,
	} {
		if !strings.Contains(req.Containerfile, want) {
			t.Errorf("Containerfile lacks %q:\n%s", want, req.Containerfile)
		}
	}
	zr, err := gzip.NewReader(bytes.NewReader(req.Payload))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(zr)
	if !bytes.Equal(got, mc) {
		t.Errorf("payload decompresses to %q", got)
	}

	cm := req.InputsConfigMap()
	if cm.Name != req.Names.Inputs || cm.Namespace != "mco" || cm.Data[ContainerfileKey] != req.Containerfile || !bytes.Equal(cm.BinaryData[MachineConfigKey], req.Payload) {
		t.Errorf("ConfigMap %+v", cm.ObjectMeta)
	}
	wantLabels := map[string]string{ManagedByLabel: ManagedByValue, PoolLabel: "worker", BuildIDLabel: req.ID, RoleLabel: RoleInputs}
	for k, v := range wantLabels {
		if cm.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, cm.Labels[k], v)
		}
	}
	if cm.Annotations[PoolAnnotation] != "worker" || cm.Annotations[DesiredConfigAnnotation] != in.RenderedConfig {
		t.Errorf("annotations %v", cm.Annotations)
	}
	if len(cm.OwnerReferences) != 1 || cm.OwnerReferences[0].UID != "uid-1" || cm.OwnerReferences[0].Kind != "MachineConfigPool" {
		t.Errorf("owner references %v", cm.OwnerReferences)
	}
}

func TestNewRequestTooLarge(t *testing.T) {
	big := make([]byte, 2<<20) // random: does not compress
	_, _ = rand.Read(big)
	_, err := NewRequest("mco", testInputs(), testPool(), big)
	wantInputError(t, err, ReasonRenderedConfigTooLarge, "rendered-worker-", "exceeds")
}

// BenchmarkNewRequest: rendering and compressing a 500 KiB MachineConfig.
func BenchmarkNewRequest(b *testing.B) {
	mc := bytes.Repeat([]byte(`{"path":"/etc/some/file","contents":{"source":"data:,hello"}},`), 8000)
	in, pool := testInputs(), testPool()
	b.SetBytes(int64(len(mc)))
	for b.Loop() {
		if _, err := NewRequest("mco", in, pool, mc); err != nil {
			b.Fatal(err)
		}
	}
}
