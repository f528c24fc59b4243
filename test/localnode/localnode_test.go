package localnode

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/ocp-capi/ocp-capi/test/envtest"
)

// The unit tests of the node size's helpers: everything that is decided
// without running anything. The node itself is tested by test/cmd/mgmt's
// TestNodeSize.

func TestInstancesNeverShare(t *testing.T) {
	g := NewWithT(t)
	seen := map[string]int{}
	for idx := 0; idx <= MaxIndex; idx++ {
		i, err := NewInstance(idx, 0)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(i.APIPort).To(Equal(DefaultAPIPortBase + idx))
		g.Expect(i.checkAddrs()).To(Succeed(), "instance %d", idx)
		for _, v := range []string{i.Name(), i.NodeCIDR(), i.NodeIP(), i.PodCIDR(), i.NodeBridge(), i.PodBridge(), i.CgroupRoot()} {
			prev, dup := seen[v]
			g.Expect(dup).To(BeFalse(), "%s of instance %d is also instance %d's", v, idx, prev)
			seen[v] = idx
		}
	}
	_, err := NewInstance(MaxIndex+1, 0)
	g.Expect(err).To(HaveOccurred())
	_, err = NewInstance(-1, 0)
	g.Expect(err).To(HaveOccurred())
	_, err = NewInstance(0, 70000)
	g.Expect(err).To(HaveOccurred())
	i, err := NewInstance(3, 7000)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(i.AdminServer()).To(Equal("https://127.0.0.1:7000"))
}

func TestReconcileInstance(t *testing.T) {
	g := NewWithT(t)
	rec := State{Instance: Instance{Index: 1, APIPort: 7001}}
	req := Instance{Index: 1, APIPort: 6444}
	// A cold start takes what is asked.
	g.Expect(ReconcileInstance(req, false, State{}, false)).To(Equal(req))
	// A warm start keeps the recorded port unless one is given.
	g.Expect(ReconcileInstance(req, false, rec, true)).To(Equal(rec.Instance))
	g.Expect(ReconcileInstance(req, true, rec, true)).To(Equal(req))
	// Another index on the same state would serve certificates for the
	// wrong node IP.
	_, err := ReconcileInstance(Instance{Index: 2, APIPort: 6445}, false, rec, true)
	g.Expect(err).To(MatchError(ContainSubstring("holds instance 1, not 2")))
}

func TestStateRoundTrip(t *testing.T) {
	g := NewWithT(t)
	l := Layout{Dir: filepath.Join(t.TempDir(), "s")}
	_, ok, err := LoadState(l)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ok).To(BeFalse())
	g.Expect(IsNode(l.Dir)).To(BeFalse())
	want := State{Instance: Instance{Index: 4, APIPort: 6447}, NetNSInode: 42, Kubeconfig: "/k", HostPorts: []int{5000}}
	g.Expect(SaveState(l, want)).To(Succeed())
	got, ok, err := LoadState(l)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ok).To(BeTrue())
	g.Expect(got).To(Equal(want))
	g.Expect(IsNode(l.Dir)).To(BeTrue())
	g.Expect(os.WriteFile(l.StateFile(), []byte("{"), 0o600)).To(Succeed())
	_, _, err = LoadState(l)
	g.Expect(err).To(HaveOccurred())
}

func TestPorts(t *testing.T) {
	g := NewWithT(t)
	g.Expect(ParsePorts("8774, 5000,5000,")).To(Equal([]int{5000, 8774}))
	g.Expect(ParsePorts("")).To(BeEmpty())
	for _, bad := range []string{"x", "0", "65536", "5000;8774"} {
		_, err := ParsePorts(bad)
		g.Expect(err).To(HaveOccurred(), bad)
	}
	g.Expect(CheckHostPorts([]int{5000, 8774})).To(Succeed())
	g.Expect(CheckHostPorts([]int{5000, 10250})).To(MatchError(ContainSubstring("kubelet listens on it")))

	clouds := filepath.Join(t.TempDir(), "clouds.yaml")
	g.Expect(os.WriteFile(clouds, []byte(`clouds:
  local: {auth: {auth_url: "http://127.0.0.1:5000/v3"}}
  other-port: {auth: {auth_url: "http://localhost:35357/v3"}}
  tls: {auth: {auth_url: "https://127.0.0.1/identity"}}
  remote: {auth: {auth_url: "https://keystone.example.com:5001/v3"}}
`), 0o600)).To(Succeed())
	g.Expect(ResolveHostPorts("default", clouds)).To(Equal([]int{443, 5000, 8774, 8776, 8778, 9292, 9696, 9876, 35357}))
	// No clouds.yaml: the local OpenStack's ports.
	g.Expect(ResolveHostPorts("", filepath.Join(t.TempDir(), "none.yaml"))).To(Equal(OpenStackPorts))
	g.Expect(ResolveHostPorts("none", clouds)).To(BeEmpty())
	g.Expect(ResolveHostPorts("18080,5000", clouds)).To(Equal([]int{5000, 18080}))
	_, err := ResolveHostPorts("2379", clouds)
	g.Expect(err).To(MatchError(ContainSubstring("etcd")))
	g.Expect(DefaultHostPorts([]byte("not: [yaml"))).To(Equal(OpenStackPorts))
}

func TestMountsUnder(t *testing.T) {
	g := NewWithT(t)
	mountinfo := strings.Join([]string{
		`22 1 8:1 / / rw - ext4 /dev/root rw`,
		`40 22 0:4 net:[4026532290] /s/run/netns rw - nsfs nsfs rw`,
		`41 22 0:50 / /s/data/kubelet/pods/u/volumes/kubernetes.io~projected/kube-api-access-x rw - tmpfs tmpfs rw`,
		`42 22 0:51 / /s/run/containerd/io.containerd.runtime.v2.task/k8s.io/abc/rootfs rw - overlay overlay rw`,
		`43 22 0:52 / /s/with\040space rw - tmpfs tmpfs rw`,
		`44 22 0:53 / /sibling rw - tmpfs tmpfs rw`,
		`45 22 0:54 / /s2/run rw - tmpfs tmpfs rw`,
		`46 22 0:55 / /s rw - tmpfs tmpfs rw`,
	}, "\n")
	got := MountsUnder(mountinfo, "/s/")
	g.Expect(got).To(ConsistOf(
		"/s/run/netns",
		"/s/data/kubelet/pods/u/volumes/kubernetes.io~projected/kube-api-access-x",
		"/s/run/containerd/io.containerd.runtime.v2.task/k8s.io/abc/rootfs",
		"/s/with space",
		"/s",
	), "/s2 and /sibling are not under /s")
	for k := 1; k < len(got); k++ {
		g.Expect(len(got[k-1])).To(BeNumerically(">=", len(got[k])), "deepest first: %v", got)
	}
	g.Expect(got[len(got)-1]).To(Equal("/s"))
	g.Expect(MountsUnder("", "/s")).To(BeEmpty())
}

func TestIsInstanceProcess(t *testing.T) {
	const dir = "/work/.mgmt"
	for _, tc := range []struct {
		argv []string
		want bool
	}{
		{[]string{"/work/bin/kubelet", "--config=/work/.mgmt/etc/kubelet.yaml"}, true},
		{[]string{"containerd", "--config", "/work/.mgmt/etc/containerd.toml"}, true},
		{[]string{"/usr/bin/containerd-shim-runc-v2", "-namespace", "k8s.io", "-address", "/work/.mgmt/run/containerd/containerd.sock"}, true},
		{[]string{"socat", "UNIX-LISTEN:/work/.mgmt/run/fwd/api.sock,fork", "TCP:127.0.0.1:6443"}, true},
		{[]string{"/work/bin/mgmt", "serve", "--state-dir", "/work/.mgmt"}, true},
		// Another instance whose dir shares the prefix.
		{[]string{"/work/bin/kubelet", "--config=/work/.mgmt-1/etc/kubelet.yaml"}, false},
		// A person's shell or editor in the directory.
		{[]string{"vim", "/work/.mgmt/etc/kubelet.yaml"}, false},
		{[]string{"/work/bin/mgmt", "down", "--state-dir", "/work/.mgmt"}, false},
		{[]string{"/work/bin/kubelet"}, false},
		{nil, false},
	} {
		if got := IsInstanceProcess(tc.argv, dir); got != tc.want {
			t.Errorf("IsInstanceProcess(%q) = %v, want %v", tc.argv, got, tc.want)
		}
	}
}

func TestCNICacheEntries(t *testing.T) {
	g := NewWithT(t)
	cache := t.TempDir()
	entry := func(sandbox string) string {
		b, err := json.Marshal(map[string]any{"kind": "cniCacheV1", "networkName": "cni-loopback",
			"result": map[string]any{"interfaces": []map[string]string{{"name": "lo", "sandbox": sandbox}}}})
		g.Expect(err).NotTo(HaveOccurred())
		return string(b)
	}
	files := map[string]string{
		"ocp-capi-mgmt-1-aaa-eth0":  "{}",
		"ocp-capi-mgmt-10-bbb-eth0": "{}",
		"cni-loopback-aaa-lo":       entry("/w/.mgmt-1/run/containerd/io.containerd.grpc.v1.cri/netns/cni-1"),
		"cni-loopback-ccc-lo":       entry("/w/.mgmt-10/run/containerd/io.containerd.grpc.v1.cri/netns/cni-2"),
		"cni-loopback-ddd-lo":       entry("/var/run/netns/cni-3"),
		"garbage":                   "not json",
	}
	for n, c := range files {
		g.Expect(os.WriteFile(filepath.Join(cache, n), []byte(c), 0o600)).To(Succeed())
	}
	g.Expect(cniCacheEntriesIn(cache, "ocp-capi-mgmt-1", "/w/.mgmt-1")).To(ConsistOf(
		filepath.Join(cache, "ocp-capi-mgmt-1-aaa-eth0"),
		filepath.Join(cache, "cni-loopback-aaa-lo"),
	))
	g.Expect(cniCacheEntriesIn(filepath.Join(cache, "missing"), "x", "/w")).To(BeEmpty())
}

func TestShimSocket(t *testing.T) {
	// containerd 1.6 (runtime/v2/shim.SocketAddress): sha256 of
	// filepath.Join(address, namespace, id) under /run/containerd/s.
	sum := sha256.Sum256([]byte("/s/run/containerd/containerd.sock/k8s.io/abc"))
	NewWithT(t).Expect(ShimSocket("/s/run/containerd/containerd.sock", "k8s.io", "abc")).To(Equal(
		"/run/containerd/s/" + hex.EncodeToString(sum[:])))
}

func TestSocketPaths(t *testing.T) {
	g := NewWithT(t)
	g.Expect(Layout{Dir: "/work/main/.mgmt"}.checkSocketPaths()).To(Succeed())
	deep := Layout{Dir: "/" + strings.Repeat("d", 60)}
	g.Expect(deep.checkSocketPaths()).To(MatchError(ContainSubstring("use a shorter --state-dir")))
}

func TestContainerdConfig(t *testing.T) {
	g := NewWithT(t)
	l := Layout{Dir: `/state dir/"q"`}
	b, err := ContainerdConfig(l, "ocp-capi.local/pause:v1")
	g.Expect(err).NotTo(HaveOccurred())
	s := string(b)
	for _, want := range []string{
		// The trap: no CAP_SYS_RESOURCE in the sandbox.
		"restrict_oom_score_adj = true",
		"netns_mounts_under_state_dir = true",
		`sandbox_image = "ocp-capi.local/pause:v1"`,
		`root = "/state dir/\"q\"/data/containerd"`,
		`address = "/state dir/\"q\"/run/containerd/containerd.sock"`,
		`Root = "/state dir/\"q\"/run/runc"`,
		`bin_dir = "/usr/lib/cni"`,
		"SystemdCgroup = false",
	} {
		g.Expect(s).To(ContainSubstring(want))
	}
	// Every path of the config is the state dir's, except the CNI plugins.
	for _, m := range regexp.MustCompile(`"(/[^"\\]*(?:\\.[^"\\]*)*)"`).FindAllStringSubmatch(s, -1) {
		if m[1] != CNIBinDir {
			g.Expect(m[1]).To(HavePrefix(`/state dir/\"q\"/`))
		}
	}
}

func TestKubeletAndKubeProxyConfig(t *testing.T) {
	g := NewWithT(t)
	i, _ := NewInstance(2, 0)
	l := Layout{Dir: "/s"}
	b, err := KubeletConfig(i, l)
	g.Expect(err).NotTo(HaveOccurred())
	var kc map[string]any
	g.Expect(yaml.Unmarshal(b, &kc)).To(Succeed())
	g.Expect(kc).To(HaveKeyWithValue("kind", "KubeletConfiguration"))
	g.Expect(kc).To(HaveKeyWithValue("address", "172.30.2.2"))
	g.Expect(kc).To(HaveKeyWithValue("cgroupRoot", "/ocp-capi-mgmt-2"))
	g.Expect(kc).To(HaveKeyWithValue("cgroupDriver", "cgroupfs"))
	g.Expect(kc).To(HaveKeyWithValue("failCgroupV1", false))
	g.Expect(kc).To(HaveKeyWithValue("containerRuntimeEndpoint", "unix:///s/run/containerd/containerd.sock"))
	g.Expect(kc).To(HaveKeyWithValue("clusterDNS", []any{DNSServiceIP}))
	g.Expect(kc).To(HaveKeyWithValue("podLogsDir", "/s/data/pod-logs"))
	g.Expect(kc).To(HaveKeyWithValue("volumePluginDir", "/s/data/kubelet/volume-plugins"))
	g.Expect(kc).To(HaveKeyWithValue("imageGCHighThresholdPercent", float64(100)))

	b, err = KubeProxyConfig(i, l)
	g.Expect(err).NotTo(HaveOccurred())
	var pc map[string]any
	g.Expect(yaml.Unmarshal(b, &pc)).To(Succeed())
	g.Expect(pc).To(HaveKeyWithValue("mode", "iptables"))
	g.Expect(pc).To(HaveKeyWithValue("clusterCIDR", "10.244.2.0/24"))
	g.Expect(pc).To(HaveKeyWithValue("conntrack", HaveKeyWithValue("maxPerCore", float64(0))))
}

func TestCNIConfig(t *testing.T) {
	g := NewWithT(t)
	i, _ := NewInstance(5, 0)
	b, err := CNIConfig(i, Layout{Dir: "/s"})
	g.Expect(err).NotTo(HaveOccurred())
	var c struct {
		Name    string `json:"name"`
		Plugins []struct {
			Type   string `json:"type"`
			Bridge string `json:"bridge"`
			IPAM   struct {
				Ranges  [][]map[string]string `json:"ranges"`
				DataDir string                `json:"dataDir"`
			} `json:"ipam"`
		} `json:"plugins"`
	}
	g.Expect(json.Unmarshal(b, &c)).To(Succeed())
	g.Expect(c.Name).To(Equal("ocp-capi-mgmt-5"))
	g.Expect(c.Plugins).To(HaveLen(2))
	g.Expect(c.Plugins[0].Type).To(Equal("bridge"))
	g.Expect(c.Plugins[0].Bridge).To(Equal("mgmt5pods"))
	g.Expect(c.Plugins[0].IPAM.Ranges).To(Equal([][]map[string]string{{{"subnet": "10.244.5.0/24", "gateway": "10.244.5.1"}}}))
	g.Expect(c.Plugins[0].IPAM.DataDir).To(Equal("/s/run/ipam"))
	g.Expect(string(ResolvConf())).To(HavePrefix("nameserver 10.96.0.10\n"))
}

func TestComponentsAndForwards(t *testing.T) {
	g := NewWithT(t)
	i, _ := NewInstance(1, 0)
	l := Layout{Dir: "/s"}
	comps := Components(i, l, "/bin")
	var names []string
	for _, c := range comps {
		names = append(names, c.Name)
		// Every component lives in the node's namespace; only the
		// forwards' outer halves are in the host's.
		g.Expect(c.InNode).To(BeTrue(), c.Name)
	}
	g.Expect(names).To(Equal([]string{"containerd", "etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet", "kube-proxy"}))
	g.Expect(comps[2].Args).To(ContainElements("--advertise-address=172.30.1.2", "--enable-aggregator-routing=true"))

	api := APIForward(i, l)
	g.Expect(api).To(HaveLen(2))
	g.Expect(api[1].InNode).To(BeFalse())
	g.Expect(api[1].Args[0]).To(Equal("TCP-LISTEN:6444,bind=127.0.0.1,reuseaddr,fork"), "the host side listens on loopback only")
	g.Expect(api[0].Args[1]).To(Equal("TCP:127.0.0.1:6443"))

	fw := HostPortForwards(l, []int{5000})
	g.Expect(fw).To(HaveLen(2))
	g.Expect(fw[0].InNode).To(BeFalse())
	g.Expect(fw[0].Args[1]).To(Equal("TCP:127.0.0.1:5000"), "the host side dials the host's loopback")
	g.Expect(fw[1].InNode).To(BeTrue())
	g.Expect(fw[1].Args[0]).To(HavePrefix("TCP-LISTEN:5000,bind=0.0.0.0,"), "every address of the node: 127.0.0.1, node IP, pod gateway")
	g.Expect(fw[0].Args[0]).To(ContainSubstring(l.HostPortSocket(5000)))
	g.Expect(fw[1].Args[1]).To(Equal("UNIX-CONNECT:" + l.HostPortSocket(5000)))
}

func TestCoreDNSObjects(t *testing.T) {
	g := NewWithT(t)
	objs := CoreDNSObjects("ocp-capi.local/coredns:v1")
	var dep *appsv1.Deployment
	var svc *corev1.Service
	var cm *corev1.ConfigMap
	for _, o := range objs {
		switch v := o.(type) {
		case *appsv1.Deployment:
			dep = v
		case *corev1.Service:
			svc = v
		case *corev1.ConfigMap:
			cm = v
		}
	}
	g.Expect(dep).NotTo(BeNil())
	c := dep.Spec.Template.Spec.Containers[0]
	g.Expect(c.Image).To(Equal("ocp-capi.local/coredns:v1"))
	g.Expect(c.ImagePullPolicy).To(Equal(corev1.PullNever), "imported, never pulled")
	g.Expect(dep.Spec.Template.Spec.DNSPolicy).To(Equal(corev1.DNSDefault))
	g.Expect(svc.Spec.ClusterIP).To(Equal(DNSServiceIP))
	g.Expect(svc.Spec.Selector).To(Equal(dep.Spec.Template.Labels))
	g.Expect(cm.Data["Corefile"]).To(And(ContainSubstring("kubernetes cluster.local"), Not(ContainSubstring("forward"))))
}

func TestPKIAndKubeconfig(t *testing.T) {
	g := NewWithT(t)
	i, _ := NewInstance(3, 0)
	dir := t.TempDir()
	p, err := EnsurePKI(i, dir, time.Now())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(p.Verify(i)).To(Succeed())
	apiserver, err := parseCert(p.Certs["apiserver"].CertPEM)
	g.Expect(err).NotTo(HaveOccurred())
	for _, host := range []string{"127.0.0.1", "172.30.3.2", APIServiceIP, "kubernetes.default.svc"} {
		g.Expect(apiserver.VerifyHostname(host)).To(Succeed(), host)
	}
	g.Expect(apiserver.ExtKeyUsage).To(Equal([]x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}))

	// A warm start loads the same PKI.
	again, err := EnsurePKI(i, dir, time.Now())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again.CA.CertPEM).To(Equal(p.CA.CertPEM))
	// Another instance's node IP is not in these certificates.
	other, _ := NewInstance(4, 0)
	_, err = EnsurePKI(other, dir, time.Now())
	g.Expect(err).To(MatchError(ContainSubstring("does not fit this instance")))

	kc, err := Kubeconfig(i, p, "admin", i.AdminServer())
	g.Expect(err).NotTo(HaveOccurred())
	cfg, err := clientcmd.Load(kc)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.CurrentContext).To(Equal("ocp-capi-mgmt-3"))
	g.Expect(cfg.Clusters["ocp-capi-mgmt-3"].Server).To(Equal("https://127.0.0.1:6446"))
	g.Expect(cfg.AuthInfos["ocp-capi-mgmt-3-admin"].ClientCertificateData).To(Equal(p.Certs["admin"].CertPEM))
	_, err = Kubeconfig(i, p, "nobody", i.AdminServer())
	g.Expect(err).To(HaveOccurred())
	for name, v := range componentKubeconfigs(i) {
		_, ok := p.Certs[v[0]]
		g.Expect(ok).To(BeTrue(), "%s's certificate %s", name, v[0])
	}
}

// dockerArchive writes a docker-archive tarball (what bin/imgbuild and
// `docker save` write) with one image.
func dockerArchive(t *testing.T, tags []string, config string) string {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	add := func(name string, data []byte) {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	manifest, _ := json.Marshal([]map[string]any{{"Config": "sha256-config.json", "RepoTags": tags, "Layers": []string{}}})
	add("manifest.json", manifest)
	add("sha256-config.json", []byte(config))
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "image.tar")
	if err := os.WriteFile(p, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadImageTarball(t *testing.T) {
	g := NewWithT(t)
	cfg := `{"architecture":"amd64","os":"linux"}`
	sum := sha256.Sum256([]byte(cfg))
	img, err := ReadImageTarball(dockerArchive(t, []string{"ocp-capi.local/pause:v1", "pause"}, cfg))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(img.Tags).To(Equal([]string{"ocp-capi.local/pause:v1", "docker.io/library/pause:latest"}))
	g.Expect(img.ConfigID).To(Equal("sha256:" + hex.EncodeToString(sum[:])))

	_, err = ReadImageTarball(dockerArchive(t, nil, cfg))
	g.Expect(err).To(MatchError(ContainSubstring("no tag")))
	_, err = ReadImageTarball(filepath.Join(t.TempDir(), "missing.tar"))
	g.Expect(errors.Is(err, os.ErrNotExist)).To(BeTrue())

	for ref, want := range map[string]string{
		"nginx":                       "docker.io/library/nginx:latest",
		"nginx:1":                     "docker.io/library/nginx:1",
		"jetstack/cert-manager:v1":    "docker.io/jetstack/cert-manager:v1",
		"quay.io/jetstack/cm:v1.9.2":  "quay.io/jetstack/cm:v1.9.2",
		"localhost/x":                 "localhost/x:latest",
		"reg:5000/x@sha256:abc":       "reg:5000/x@sha256:abc",
		"ocp-capi.local/coredns:v1.1": "ocp-capi.local/coredns:v1.1",
	} {
		g.Expect(NormalizeImageRef(ref)).To(Equal(want), ref)
	}

	list := "REF TYPE DIGEST SIZE PLATFORMS LABELS\n" +
		"ocp-capi.local/pause:v1 application/vnd.docker.distribution.manifest.v2+json sha256:aa 700.0 KiB linux/amd64 io.cri-containerd.image=managed\n" +
		"sha256:bb application/vnd.docker.distribution.manifest.v2+json sha256:bb 700.0 KiB linux/amd64 -\n"
	g.Expect(parseImageList([]byte(list))).To(Equal(map[string]string{
		"ocp-capi.local/pause:v1": "sha256:aa", "sha256:bb": "sha256:bb",
	}))

	dir := t.TempDir()
	for _, f := range []string{"b.tar", "a.tar", "notes.txt"} {
		g.Expect(os.WriteFile(filepath.Join(dir, f), nil, 0o600)).To(Succeed())
	}
	g.Expect(TarballsIn(dir)).To(Equal([]string{filepath.Join(dir, "a.tar"), filepath.Join(dir, "b.tar")}))
	g.Expect(TarballsIn("")).To(BeEmpty())
}

func TestMissingPackages(t *testing.T) {
	g := NewWithT(t)
	all := func(string) (string, error) { return "/usr/bin/x", nil }
	g.Expect(MissingPackages(all, func(string) bool { return true })).To(BeEmpty())
	noSocat := func(c string) (string, error) {
		if c == "socat" || c == "runc" {
			return "", errors.New("not found")
		}
		return "/usr/bin/" + c, nil
	}
	noCNI := func(p string) bool { return !strings.HasPrefix(p, CNIBinDir) }
	g.Expect(MissingPackages(noSocat, noCNI)).To(Equal([]string{
		"containernetworking-plugins (/usr/lib/cni/bridge, /usr/lib/cni/host-local, /usr/lib/cni/loopback, /usr/lib/cni/portmap)",
		"runc (runc)",
		"socat (socat)",
	}))
	// Every package a requirement names is one `make node-deps` installs.
	for _, r := range requirements {
		g.Expect(DebianPackages).To(ContainElement(r.pkg))
	}
}

// TestMakefilePackages keeps hack/make/node.mk's package list equal to
// DebianPackages: `make node-deps` installs what the prerequisite check
// asks for.
func TestMakefilePackages(t *testing.T) {
	g := NewWithT(t)
	root, err := envtest.FindRepoRoot()
	g.Expect(err).NotTo(HaveOccurred())
	mk, err := os.ReadFile(filepath.Join(root, "hack", "make", "node.mk"))
	g.Expect(err).NotTo(HaveOccurred())
	m := regexp.MustCompile(`(?m)^NODE_DEB_PACKAGES := (.*)$`).FindSubmatch(mk)
	g.Expect(m).NotTo(BeNil(), "NODE_DEB_PACKAGES in node.mk")
	g.Expect(strings.Fields(string(m[1]))).To(Equal(DebianPackages))
}

func TestWantedInotifyInstances(t *testing.T) {
	g := NewWithT(t)
	g.Expect(wantedInotifyInstances(128)).To(Equal(512), "the kernel default is raised")
	g.Expect(wantedInotifyInstances(8192)).To(Equal(8192), "a higher limit is never lowered")
}
