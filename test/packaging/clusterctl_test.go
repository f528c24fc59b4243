package packaging

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/yaml"
)

// capiVersion is CAPI core's version in the release (its directory name).
func capiVersion(t testing.TB) string {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(outDir, "cluster-api", "v*"))
	if len(dirs) != 1 {
		t.Fatalf("want one CAPI core version in %s, got %q", outDir, dirs)
	}
	return filepath.Base(dirs[0])
}

// releaseSeries is one series of clusterctl's metadata.yaml.
type releaseSeries struct {
	Major, Minor int
	Contract     string
}

// metadata is clusterctl's metadata.yaml.
type metadata struct {
	APIVersion    string          `json:"apiVersion"`
	Kind          string          `json:"kind"`
	ReleaseSeries []releaseSeries `json:"releaseSeries"`
}

func readMetadata(t *testing.T, path string) metadata {
	t.Helper()
	var md metadata
	if err := yaml.UnmarshalStrict(readFile(t, path), &md); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return md
}

// TestRepositoryLayout: the release is a clusterctl local repository, and
// clusterctl.yaml points at it.
func TestRepositoryLayout(t *testing.T) {
	g := NewWithT(t)
	var cfg struct {
		Providers []struct {
			Name, Type, URL string
		} `json:"providers"`
	}
	g.Expect(yaml.Unmarshal(readFile(t, filepath.Join(outDir, "clusterctl.yaml")), &cfg)).To(Succeed())
	type entry struct{ Name, Type, URL string }
	var got []entry
	for _, p := range cfg.Providers {
		got = append(got, entry(p))
	}
	want := []entry{{"cluster-api", "CoreProvider", "file://" + filepath.Join(outDir, "cluster-api", capiVersion(t), "core-components.yaml")}}
	types := map[string]string{"--infrastructure": "InfrastructureProvider", "--bootstrap": "BootstrapProvider",
		"--control-plane": "ControlPlaneProvider", "--addon": "AddonProvider"}
	for _, p := range providers {
		want = append(want, entry{p.clusterctlName, types[p.clusterctlFlag], "file://" + p.releasedComponents()})
	}
	g.Expect(got).To(ConsistOf(want))
	for _, e := range want {
		g.Expect(strings.TrimPrefix(e.URL, "file://")).To(BeAnExistingFile())
	}

	// Every provider's metadata lists every series recorded in the root
	// metadata.yaml, then the released version's new series (v0.9).
	recorded := readMetadata(t, filepath.Join(root, "metadata.yaml"))
	g.Expect(recorded.ReleaseSeries).NotTo(BeEmpty())
	g.Expect(recorded.ReleaseSeries).NotTo(ContainElement(HaveField("Minor", 9)), "the test releases a series not recorded yet")
	want09 := slices.Concat(recorded.ReleaseSeries, []releaseSeries{{0, 9, "v1beta2"}})
	for _, p := range providers {
		md := readMetadata(t, filepath.Join(outDir, p.label, releaseVersion, "metadata.yaml"))
		g.Expect(md.APIVersion).To(Equal("clusterctl.cluster.x-k8s.io/v1alpha3"))
		g.Expect(md.Kind).To(Equal("Metadata"))
		g.Expect(md.ReleaseSeries).To(Equal(want09), p.label)
	}
	g.Expect(filepath.Join(outDir, "cluster-api", capiVersion(t), "metadata.yaml")).To(BeAnExistingFile())
	g.Expect(filepath.Join(outDir, "charts", "index.yaml")).To(BeAnExistingFile())
}

// TestClusterctlReadsRepository: clusterctl finds every provider in the
// local repository, in its namespace, with its variables and the image the
// release names. (It needs no cluster for this; `clusterctl init` needs a
// cluster with cert-manager, which the local management cluster provides.)
func TestClusterctlReadsRepository(t *testing.T) {
	cfg := filepath.Join(outDir, "clusterctl.yaml")
	describe := func(t *testing.T, flag, ref string) string {
		return string(run(t, "clusterctl", "generate", "provider", flag, ref, "--config", cfg, "--describe"))
	}
	for _, p := range providers {
		t.Run(p.key, func(t *testing.T) {
			g := NewWithT(t)
			out := describe(t, p.clusterctlFlag, p.clusterctlName+":"+releaseVersion)
			g.Expect(out).To(MatchRegexp(`TargetNamespace:\s+` + p.namespace))
			g.Expect(out).To(ContainSubstring(releaseRegistry + "/" + p.image + ":" + releaseTag))
			for _, v := range []string{"WATCH_NAMESPACE", "WATCH_FILTER", "LOG_FORMAT", "VERBOSITY"} {
				g.Expect(out).To(ContainSubstring(p.varPrefix + v))
			}
			// With variables set, as a user would.
			objs := parseObjects(t, runWithEnv(t, []string{p.varPrefix + "WATCH_NAMESPACE=team-a", p.varPrefix + "VERBOSITY=3"},
				"clusterctl", "generate", "provider", p.clusterctlFlag, p.clusterctlName+":"+releaseVersion, "--config", cfg,
				"--target-namespace", "elsewhere"))
			c := managerContainer(t, objs)
			args := strings.Join(stringList(c["args"]), " ")
			g.Expect(args).To(ContainSubstring("--namespace team-a"))
			g.Expect(args).To(ContainSubstring("--v=3"))
			for _, o := range objs {
				if !clusterScoped[o.kind()] {
					g.Expect(o.namespace()).To(Equal("elsewhere"), o.key())
				}
			}
		})
	}
	t.Run("cluster-api", func(t *testing.T) {
		out := describe(t, "--core", "cluster-api:"+capiVersion(t))
		g := NewWithT(t)
		g.Expect(out).To(MatchRegexp(`TargetNamespace:\s+capi-system`))
		g.Expect(out).To(ContainSubstring(releaseRegistry + "/cluster-api-controller:" + capiVersion(t)))
		comps := string(readFile(t, filepath.Join(outDir, "cluster-api", capiVersion(t), "core-components.yaml")))
		g.Expect(comps).NotTo(ContainSubstring("imagePullPolicy: Always"))
	})
}

func runWithEnv(t testing.TB, env []string, name string, args ...string) []byte {
	t.Helper()
	out, err := runEnv(env, name, args...)
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return out
}
