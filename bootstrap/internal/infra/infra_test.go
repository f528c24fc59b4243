package infra

import (
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/ocp-capi/ocp-capi/api/bootstrap/v1alpha2"
)

func obj(apiVersion, kind string, fields map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind}}
	for k, v := range fields {
		u.Object[k] = v
	}
	return u
}

func m3m(version string, image map[string]any) *unstructured.Unstructured {
	spec := map[string]any{}
	if image != nil {
		spec["image"] = image
	}
	return obj(Group+"/"+version, Metal3MachineKind, map[string]any{"spec": spec})
}

func TestResolveBootMode(t *testing.T) {
	osm := obj(Group+"/v1beta2", OpenStackMachineKind, nil)
	other := obj("infrastructure.cluster.x-k8s.io/v1beta1", "AWSMachine", nil)
	for _, tc := range []struct {
		name      string
		requested bootstrapv1.BootMode
		obj       *unstructured.Unstructured
		want      bootstrapv1.BootMode
	}{
		{"metal3 without image: the live ISO", "", m3m("v1beta2", nil), bootstrapv1.BootModeLiveISO},
		{"metal3 with a live-iso image", "", m3m("v1beta2", map[string]any{"url": "https://iso", "diskFormat": "live-iso"}), bootstrapv1.BootModeLiveISO},
		{"metal3 v1beta1 live-iso", "", m3m("v1beta1", map[string]any{"url": "https://iso", "format": "live-iso"}), bootstrapv1.BootModeLiveISO},
		{"metal3 with a disk image: CAPOA's raw-image flow", "", m3m("v1beta2", map[string]any{"url": "https://rhcos.qcow2", "diskFormat": "qcow2"}), bootstrapv1.BootModeDiscoveryIgnition},
		{"metal3 v1beta2 object read with v1beta1 format field is a disk image", "", m3m("v1beta2", map[string]any{"url": "https://x", "format": "live-iso"}), bootstrapv1.BootModeDiscoveryIgnition},
		{"openstack", "", osm, bootstrapv1.BootModeDiscoveryIgnition},
		{"other providers", "", other, bootstrapv1.BootModeDiscoveryIgnition},
		{"explicit wins", bootstrapv1.BootModeDiscoveryIgnition, m3m("v1beta2", nil), bootstrapv1.BootModeDiscoveryIgnition},
		{"explicit LiveISO on openstack is kept (and refused by CheckBootMode)", bootstrapv1.BootModeLiveISO, osm, bootstrapv1.BootModeLiveISO},
	} {
		t.Run(tc.name, func(t *testing.T) {
			NewWithT(t).Expect(ResolveBootMode(tc.requested, tc.obj)).To(Equal(tc.want))
		})
	}
}

func TestCheckBootMode(t *testing.T) {
	g := NewWithT(t)
	m3 := schema.GroupKind{Group: Group, Kind: Metal3MachineKind}
	os := schema.GroupKind{Group: Group, Kind: OpenStackMachineKind}
	g.Expect(CheckBootMode(bootstrapv1.BootModeLiveISO, m3)).To(Succeed())
	g.Expect(CheckBootMode(bootstrapv1.BootModeDiscoveryIgnition, os)).To(Succeed())
	g.Expect(CheckBootMode(bootstrapv1.BootModeLiveISO, os)).To(MatchError(ContainSubstring("DiscoveryIgnition")))
}

func TestSetLiveISO(t *testing.T) {
	g := NewWithT(t)
	m := m3m("v1beta2", map[string]any{"url": "https://rhcos.qcow2", "diskFormat": "qcow2", "checksum": "abc", "checksumType": "sha256"})
	changed, err := SetLiveISO(m, "https://iso")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeTrue())
	g.Expect(m.Object["spec"]).To(Equal(map[string]any{"image": map[string]any{"url": "https://iso", "diskFormat": "live-iso"}}))
	changed, err = SetLiveISO(m, "https://iso")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeFalse(), "no change the second time")

	v1 := m3m("v1beta1", nil)
	_, _ = SetLiveISO(v1, "https://iso")
	url, format, found := Metal3Image(v1)
	g.Expect([]any{url, format, found}).To(Equal([]any{"https://iso", "live-iso", true}))
	g.Expect(v1.Object["spec"].(map[string]any)["image"]).To(HaveKey("format"))

	tmpl := obj(Group+"/v1beta2", Metal3MachineTemplateKind, map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{}}}})
	changed, err = SetLiveISO(tmpl, "https://iso")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeTrue())
	url, format, _ = Metal3Image(tmpl)
	g.Expect(url + " " + format).To(Equal("https://iso live-iso"))

	bad := obj(Group+"/v1beta2", Metal3MachineKind, map[string]any{"spec": "not a map"})
	_, err = SetLiveISO(bad, "https://iso")
	g.Expect(err).To(HaveOccurred(), "no panic on odd objects")
}

func TestClonedFrom(t *testing.T) {
	g := NewWithT(t)
	m := m3m("v1beta2", nil)
	_, _, ok := ClonedFrom(m)
	g.Expect(ok).To(BeFalse())
	m.SetAnnotations(map[string]string{
		"cluster.x-k8s.io/cloned-from-name":      "workers",
		"cluster.x-k8s.io/cloned-from-groupkind": "Metal3MachineTemplate.infrastructure.cluster.x-k8s.io",
	})
	gk, name, ok := ClonedFrom(m)
	g.Expect(ok).To(BeTrue())
	g.Expect(name).To(Equal("workers"))
	g.Expect(gk).To(Equal(schema.GroupKind{Group: Group, Kind: Metal3MachineTemplateKind}))
}

// FuzzSetLiveISO: odd objects (any JSON) never panic, and a successful set
// reads back.
func FuzzSetLiveISO(f *testing.F) {
	f.Add(`{"apiVersion":"infrastructure.cluster.x-k8s.io/v1beta2","kind":"Metal3Machine","spec":{"image":{"url":"x"}}}`, "https://iso")
	f.Add(`{"apiVersion":"infrastructure.cluster.x-k8s.io/v1beta1","kind":"Metal3MachineTemplate","spec":{"template":7}}`, "u")
	f.Add(`{"kind":"Metal3Machine","spec":null}`, "")
	f.Fuzz(func(t *testing.T, doc, iso string) {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON([]byte(doc)); err != nil {
			return
		}
		if _, err := SetLiveISO(u, iso); err != nil {
			return
		}
		url, format, found := Metal3Image(u)
		if !found || url != iso || format != LiveISOFormat {
			t.Fatalf("set %q, read %q %q %v", iso, url, format, found)
		}
		_ = ResolveBootMode("", u)
		_, _, _ = ClonedFrom(u)
	})
}

// TestTrimForCache: the cache keeps of an infrastructure machine what the
// provider reads, and every read and the live-ISO patch give on the trimmed
// machine what they give on the whole one.
func TestTrimForCache(t *testing.T) {
	g := NewWithT(t)
	meta := map[string]any{"name": "m-0", "namespace": "ns", "resourceVersion": "7",
		"annotations": map[string]any{Metal3HostAnnotation: "ns/host-0",
			clusterv1.TemplateClonedFromNameAnnotation: "tmpl", clusterv1.TemplateClonedFromGroupKindAnnotation: "Metal3MachineTemplate." + Group},
		"ownerReferences": []any{map[string]any{"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Machine", "name": "m-0", "uid": "u"}}}
	for _, version := range []string{"v1beta1", "v1beta2"} {
		format := formatField(Group + "/" + version)
		whole := obj(Group+"/"+version, Metal3MachineKind, map[string]any{"metadata": meta,
			"spec": map[string]any{"image": map[string]any{"url": "https://rhcos.qcow2", format: "qcow2", "checksum": "abc"},
				"hostSelector": map[string]any{"matchLabels": map[string]any{"rack": "1"}}, "providerID": "metal3://x"},
			"status": map[string]any{"ready": true, "addresses": []any{map[string]any{"type": "InternalIP", "address": "10.0.0.1"}}}})
		got, err := TrimForCache(whole.DeepCopy())
		g.Expect(err).NotTo(HaveOccurred())
		trimmed := got.(*unstructured.Unstructured)
		g.Expect(trimmed.Object).To(Equal(map[string]any{"apiVersion": Group + "/" + version, "kind": Metal3MachineKind, "metadata": meta,
			"spec": map[string]any{"image": map[string]any{"url": "https://rhcos.qcow2", format: "qcow2", "checksum": "abc"}}}), version)
		g.Expect(ResolveBootMode("", trimmed)).To(Equal(ResolveBootMode("", whole)))
		gk, name, ok := ClonedFrom(trimmed)
		g.Expect([]any{gk.Kind, name, ok}).To(Equal([]any{Metal3MachineTemplateKind, "tmpl", true}))

		// The live ISO is written as a merge patch of what changed: the same
		// patch from the trimmed machine as from the whole one, so the
		// fields the cache dropped are not touched.
		patchOf := func(m *unstructured.Unstructured) string {
			base := m.DeepCopy()
			changed, err := SetLiveISO(m, "https://iso")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(changed).To(BeTrue())
			data, err := client.MergeFrom(base).Data(m)
			g.Expect(err).NotTo(HaveOccurred())
			return string(data)
		}
		g.Expect(patchOf(trimmed)).To(Equal(patchOf(whole.DeepCopy())), version)
	}

	osm := obj(Group+"/v1beta2", OpenStackMachineKind, map[string]any{"metadata": meta,
		"spec":   map[string]any{"providerID": "openstack:///id-1", "flavor": map[string]any{"filter": map[string]any{"name": "m1.small"}}},
		"status": map[string]any{"instanceID": "id-1", "addresses": []any{"x"}, "conditions": []any{"y"}}})
	got, err := TrimForCache(osm)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got.(*unstructured.Unstructured).Object).To(Equal(map[string]any{"apiVersion": Group + "/v1beta2", "kind": OpenStackMachineKind,
		"metadata": meta, "spec": map[string]any{"providerID": "openstack:///id-1"}, "status": map[string]any{"instanceID": "id-1"}}))
	bare := obj(Group+"/v1beta1", OpenStackMachineKind, nil)
	got, err = TrimForCache(bare)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got.(*unstructured.Unstructured).Object).To(Equal(map[string]any{"apiVersion": Group + "/v1beta1", "kind": OpenStackMachineKind}),
		"a machine without the fields stays without them")

	// Templates, other kinds and typed objects pass unchanged.
	for _, o := range []any{
		obj(Group+"/v1beta2", Metal3MachineTemplateKind, map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"x": "y"}}}}),
		obj(Group+"/v1beta2", "AWSMachine", map[string]any{"spec": map[string]any{"x": "y"}}),
		obj("example.com/v1", OpenStackMachineKind, map[string]any{"spec": map[string]any{"x": "y"}}),
		&bootstrapv1.OpenshiftAssistedConfig{},
	} {
		before := fmt.Sprint(o)
		got, err := TrimForCache(o)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(fmt.Sprint(got)).To(Equal(before))
	}
}
