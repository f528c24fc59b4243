package packaging

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/yaml"
)

// TestChartsRenderKustomize: each chart of charts/, with its default
// values, renders exactly the objects that clusterctl installs from the
// provider's kustomize trees (variables at their defaults).
func TestChartsRenderKustomize(t *testing.T) {
	byKey := map[string][]obj{}
	for _, p := range providers {
		t.Run(p.chart, func(t *testing.T) {
			want := kustomizeObjects(t, p)
			byKey[p.key] = want
			got := helmTemplate(t, filepath.Join("charts", p.chart))
			if d := diffObjects(want, got); d != "" {
				t.Errorf("helm template charts/%s differs from kustomize build %v (after changing a kustomize tree or a generated CRD, RBAC or webhook file, run `make charts`, i.e. hack/release.sh charts):\n%s", p.chart, p.dirs, d)
			}
		})
	}
	t.Run("ocp-capi", func(t *testing.T) {
		var defaults, all []obj
		for _, p := range providers {
			if byKey[p.key] == nil {
				t.Fatalf("no objects of %s (its subtest failed)", p.chart)
			}
			all = append(all, byKey[p.key]...)
			if p.inUmbrella {
				defaults = append(defaults, byKey[p.key]...)
			}
		}
		if d := diffObjects(defaults, helmTemplate(t, "charts/ocp-capi")); d != "" {
			t.Errorf("the umbrella chart with default values differs from its default providers:\n%s", d)
		}
		var set []string
		for _, p := range providers {
			set = append(set, p.umbrellaAlias+".enabled=true")
		}
		if d := diffObjects(all, helmTemplate(t, "charts/ocp-capi", set...)); d != "" {
			t.Errorf("the umbrella chart with every provider differs from the providers:\n%s", d)
		}
	})
}

// TestReleaseChartsRenderComponents: the charts packaged by a release (with
// its version and image settings) render that release's components.
func TestReleaseChartsRenderComponents(t *testing.T) {
	for _, p := range providers {
		t.Run(p.chart, func(t *testing.T) {
			g := NewWithT(t)
			want := parseObjects(t, substitute(t, readFile(t, p.releasedComponents())))
			for _, d := range p.dirs[1:] {
				want = append(want, parseObjects(t, substitute(t, readFile(t, filepath.Join(outDir, p.label, releaseVersion, filepath.Base(d)+".yaml"))))...)
			}
			chart := filepath.Join(outDir, "charts", fmt.Sprintf("%s-%s.tgz", p.chart, strings.TrimPrefix(releaseVersion, "v")))
			if d := diffObjects(want, helmTemplate(t, chart)); d != "" {
				t.Errorf("%s differs from %s:\n%s", chart, p.releasedComponents(), d)
			}
			dep := only(t, want, "Deployment")
			g.Expect(dep.get("spec", "template", "spec", "containers").([]any)[0].(map[string]any)["image"]).
				To(Equal(releaseRegistry + "/" + p.image + ":" + releaseTag))
		})
	}
	t.Run("ocp-capi", func(t *testing.T) {
		out := run(t, "helm", "show", "chart", filepath.Join(outDir, "charts", "ocp-capi-"+strings.TrimPrefix(releaseVersion, "v")+".tgz"))
		NewWithT(t).Expect(string(out)).To(ContainSubstring("appVersion: " + releaseVersion))
	})
}

func only(t testing.TB, objs []obj, kind string) obj {
	t.Helper()
	var found []obj
	for _, o := range objs {
		if o.kind() == kind {
			found = append(found, o)
		}
	}
	if len(found) != 1 {
		t.Fatalf("want exactly one %s, got %d", kind, len(found))
	}
	return found[0]
}

func kinds(objs []obj) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.kind())
	}
	return out
}

func managerContainer(t testing.TB, objs []obj) map[string]any {
	t.Helper()
	for _, c := range only(t, objs, "Deployment").get("spec", "template", "spec", "containers").([]any) {
		if c.(map[string]any)["name"] == "manager" {
			return c.(map[string]any)
		}
	}
	t.Fatal("no container manager")
	return nil
}

func stringList(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, fmt.Sprint(x))
	}
	return out
}

// TestChartValues: the values do what values.yaml says.
func TestChartValues(t *testing.T) {
	infra := "charts/ocp-capi-infrastructure-openstack"

	t.Run("webhooks off", func(t *testing.T) {
		g := NewWithT(t)
		objs := helmTemplate(t, infra, "webhooks.enabled=false")
		g.Expect(kinds(objs)).NotTo(ContainElements("ValidatingWebhookConfiguration", "Service", "Issuer", "Certificate"))
		c := managerContainer(t, objs)
		g.Expect(stringList(c["args"])).To(ContainElement("--webhook-port=0"))
		g.Expect(fmt.Sprint(c["volumeMounts"], c["ports"])).NotTo(ContainSubstring("cert"))
		g.Expect(fmt.Sprint(c["ports"])).NotTo(ContainSubstring("webhook-server"))
	})

	t.Run("cert-manager off", func(t *testing.T) {
		g := NewWithT(t)
		_, err := helmTemplateErr(infra, "certManager.enabled=false")
		g.Expect(err).To(MatchError(ContainSubstring("webhooks.caBundle is required")))
		objs := helmTemplate(t, infra, "certManager.enabled=false", "webhooks.caBundle=Q0E=", "webhooks.certSecretName=my-cert")
		g.Expect(kinds(objs)).NotTo(ContainElements("Issuer", "Certificate"))
		vwc := only(t, objs, "ValidatingWebhookConfiguration")
		g.Expect(vwc.get("metadata", "annotations")).To(BeNil())
		for _, w := range vwc.get("webhooks").([]any) {
			g.Expect(w.(map[string]any)["clientConfig"].(map[string]any)["caBundle"]).To(Equal("Q0E="))
		}
		g.Expect(fmt.Sprint(only(t, objs, "Deployment").get("spec", "template", "spec", "volumes"))).To(ContainSubstring("secretName:my-cert"))
	})

	t.Run("namespace", func(t *testing.T) {
		g := NewWithT(t)
		objs := helmTemplate(t, infra, "namespace=elsewhere")
		for _, o := range objs {
			if !clusterScoped[o.kind()] {
				g.Expect(o.namespace()).To(Equal("elsewhere"), o.key())
			}
		}
		g.Expect(only(t, objs, "Namespace").name()).To(Equal("elsewhere"))
		g.Expect(only(t, objs, "ClusterRoleBinding").get("subjects").([]any)[0].(map[string]any)["namespace"]).To(Equal("elsewhere"))
		vwc := only(t, objs, "ValidatingWebhookConfiguration")
		g.Expect(vwc.str("metadata", "annotations", "cert-manager.io/inject-ca-from")).To(Equal("elsewhere/ocp-capi-infrastructure-serving-cert"))
		g.Expect(vwc.get("webhooks").([]any)[0].(map[string]any)["clientConfig"].(map[string]any)["service"].(map[string]any)["namespace"]).To(Equal("elsewhere"))
		g.Expect(stringList(only(t, objs, "Certificate").get("spec", "dnsNames"))).To(ContainElement("ocp-capi-infrastructure-webhook-service.elsewhere.svc"))

		g.Expect(kinds(helmTemplate(t, infra, "createNamespace=false"))).NotTo(ContainElement("Namespace"))
	})

	t.Run("CRDs", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(kinds(helmTemplate(t, infra, "crds.enabled=false"))).NotTo(ContainElement("CustomResourceDefinition"))
		for _, o := range helmTemplate(t, infra, "crds.keep=true") {
			if o.kind() == "CustomResourceDefinition" {
				g.Expect(o.str("metadata", "annotations", "helm.sh/resource-policy")).To(Equal("keep"), o.name())
			}
		}
	})

	t.Run("manager", func(t *testing.T) {
		g := NewWithT(t)
		objs := helmTemplate(t, infra, "image.repository=example.test/mgr", "image.tag=v9", "image.pullPolicy=Always",
			"replicas=3", "resources.limits.memory=1Gi", "watchNamespace=team-a", "watchFilter=blue", "logFormat=json",
			"verbosity=4", "extraArgs={--sync-period=1m,--openstackmachine-concurrency=2}")
		c := managerContainer(t, objs)
		g.Expect(c["image"]).To(Equal("example.test/mgr:v9"))
		g.Expect(c["imagePullPolicy"]).To(Equal("Always"))
		g.Expect(only(t, objs, "Deployment").get("spec", "replicas")).To(BeEquivalentTo(3))
		g.Expect(c["resources"].(map[string]any)["limits"].(map[string]any)["memory"]).To(Equal("1Gi"))
		args := stringList(c["args"])
		g.Expect(args).To(ContainElements("--log-format=json", "--v=4", "--sync-period=1m", "--openstackmachine-concurrency=2"))
		g.Expect(strings.Join(args, " ")).To(ContainSubstring("--namespace team-a --watch-filter blue"))
		g.Expect(args[len(args)-1]).To(Equal("--openstackmachine-concurrency=2"), "extra args come last, so they win")
	})

	t.Run("schema", func(t *testing.T) {
		_, err := helmTemplateErr(infra, "replica=2")
		NewWithT(t).Expect(err).To(MatchError(ContainSubstring("replica")))
	})

	t.Run("add-on build namespace", func(t *testing.T) {
		g := NewWithT(t)
		objs := helmTemplate(t, "charts/ocp-capi-addon", "buildNamespace=builds")
		g.Expect(stringList(managerContainer(t, objs)["args"])).To(ContainElement("--build-namespace=builds"))
		var found bool
		for _, o := range objs {
			if o.kind() == "RoleBinding" && o.name() == "ocp-capi-addon-build-rolebinding" {
				found = true
				g.Expect(o.namespace()).To(Equal("builds"))
			}
		}
		g.Expect(found).To(BeTrue(), "the build RoleBinding")
	})
}

// TestChartsLint: helm lint --strict passes for every chart.
func TestChartsLint(t *testing.T) {
	charts := []string{"ocp-capi"}
	for _, p := range providers {
		charts = append(charts, p.chart)
	}
	for _, c := range charts {
		t.Run(c, func(t *testing.T) {
			out := run(t, "helm", "lint", "--strict", filepath.Join("charts", c))
			if !strings.Contains(string(out), "0 chart(s) failed") {
				t.Errorf("helm lint:\n%s", out)
			}
			for _, l := range strings.Split(string(out), "\n") {
				if strings.HasPrefix(l, "[WARNING]") || strings.HasPrefix(l, "[ERROR]") {
					t.Errorf("helm lint: %s", l)
				}
			}
		})
	}
}

// TestChartsUpToDate: charts/ and the kustomize CRD lists are what
// `make charts` generates (the release script refuses to release otherwise).
func TestChartsUpToDate(t *testing.T) {
	if _, err := runErr("hack/release.sh", "check"); err != nil {
		t.Fatalf("hack/release.sh check: %v", err)
	}
}

// TestDocsCoverValues: docs/install.md names every chart value.
func TestDocsCoverValues(t *testing.T) {
	docs := string(readFile(t, filepath.Join(root, "docs", "install.md")))
	charts := []string{"ocp-capi"}
	for _, p := range providers {
		charts = append(charts, p.chart)
	}
	for _, c := range charts {
		t.Run(c, func(t *testing.T) {
			var values map[string]any
			if err := yaml.Unmarshal(readFile(t, filepath.Join(root, "charts", c, "values.yaml")), &values); err != nil {
				t.Fatal(err)
			}
			for _, path := range leafPaths("", values) {
				if !strings.Contains(docs, "`"+path+"`") {
					t.Errorf("docs/install.md does not document the value `%s` of %s", path, c)
				}
			}
		})
	}
}

// leafPaths lists the dotted paths of a values tree; resources is one value.
func leafPaths(prefix string, m map[string]any) []string {
	var out []string
	for k, v := range m {
		p := prefix + k
		if sub, ok := v.(map[string]any); ok && k != "resources" {
			out = append(out, leafPaths(p+".", sub)...)
			continue
		}
		out = append(out, p)
	}
	return out
}

// TestWholeProductTree: config/, the one kustomize tree of the whole
// product, renders exactly the four providers' default trees.
func TestWholeProductTree(t *testing.T) {
	var want []obj
	for _, p := range providers {
		want = append(want, parseObjects(t, substitute(t, kustomize(t, p.dirs[0])))...)
	}
	got := parseObjects(t, substitute(t, kustomize(t, "config")))
	if d := diffObjects(want, got); d != "" {
		t.Errorf("kustomize build config differs from the providers' default trees:\n%s", d)
	}
}
