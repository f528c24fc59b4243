package packaging

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// shipped is every object a provider ships, from each source: its kustomize
// trees, its released components (and extra files), and its chart.
func shipped(t *testing.T, p provider) map[string][]obj {
	t.Helper()
	out := map[string][]obj{
		"kustomize":  kustomizeObjects(t, p),
		"components": parseObjects(t, substitute(t, readFile(t, p.releasedComponents()))),
		"chart":      helmTemplate(t, filepath.Join("charts", p.chart)),
	}
	for _, d := range p.dirs[1:] {
		f := filepath.Join(outDir, p.label, releaseVersion, filepath.Base(d)+".yaml")
		out["release "+filepath.Base(f)] = parseObjects(t, substitute(t, readFile(t, f)))
	}
	return out
}

func convert(t testing.TB, o obj, into any) {
	t.Helper()
	data, err := yaml.Marshal(map[string]any(o))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(data, into); err != nil {
		t.Fatalf("%s: %v", o.key(), err)
	}
}

// allowedClusterSecretWrites are the cluster-wide Secret writes a provider
// cannot do without, by provider label and verb, each with its reason.
// Every other write verb on Secrets in a ClusterRole that a
// ClusterRoleBinding binds (or that nothing binds) fails the test.
var allowedClusterSecretWrites = map[string]map[string]string{
	"bootstrap-openshift-agent": {
		// CAPI's bootstrap contract: the provider writes the bootstrap data
		// Secret (status.dataSecretName) in each Machine's namespace, which
		// may be any namespace. Create only: it cannot change or delete
		// anyone else's Secret.
		"create": "bootstrap data Secret in the Machine's namespace (CAPI bootstrap contract)",
	},
	"control-plane-openshift-agent": {
		// CAPI's control-plane contract: the provider writes
		// <cluster>-kubeconfig in the cluster's namespace, which may be any
		// namespace, and (unless spec.config.pullSecretRef names one) the
		// placeholder pull secret <control plane>-pull-secret of OKD
		// installs. No update and no delete: both Secrets are owned by the
		// control plane and garbage-collected with it.
		"create": "<cluster>-kubeconfig (CAPI control-plane contract) and the placeholder pull secret, in the cluster's namespace",
		// Patch only, never update: <cluster>-kubeconfig follows the
		// AgentClusterInstall's admin kubeconfig when it changes, and that
		// source Secret gets the cluster-name label so the provider's
		// label-filtered Secret cache (not every Secret of the management
		// cluster) sees it change.
		"patch": "refresh <cluster>-kubeconfig from the admin kubeconfig, and label that source Secret with its cluster for the filtered Secret cache",
	},
}

var writeVerbs = []string{"create", "update", "patch", "delete", "deletecollection"}

// TestRBACLeastPrivilege parses every rendered RBAC rule.
func TestRBACLeastPrivilege(t *testing.T) {
	for _, p := range providers {
		sources := shipped(t, p)
		roles := map[string]bool{} // kind/name of the roles the provider defines
		// How each ClusterRole is bound, over all sources (the components
		// and the extra files bind the same roles).
		clusterBound, namespaceBound := map[string]bool{}, map[string]bool{}
		for _, objs := range sources {
			for _, o := range objs {
				switch o.kind() {
				case "Role", "ClusterRole":
					roles[o.kind()+"/"+o.name()] = true
				case "ClusterRoleBinding", "RoleBinding":
					var b rbacv1.ClusterRoleBinding
					convert(t, o, &b)
					if b.RoleRef.Kind == "ClusterRole" {
						if o.kind() == "ClusterRoleBinding" {
							clusterBound[b.RoleRef.Name] = true
						} else {
							namespaceBound[b.RoleRef.Name] = true
						}
					}
				}
			}
		}
		for source, objs := range sources {
			t.Run(p.key+"/"+source, func(t *testing.T) {
				for _, o := range objs {
					switch o.kind() {
					case "Role", "ClusterRole":
						var r rbacv1.ClusterRole // a Role has the same rules field
						convert(t, o, &r)
						if r.AggregationRule != nil {
							t.Errorf("%s: aggregation rules widen a role beyond what this file shows", o.key())
						}
						// A ClusterRole that only RoleBindings bind grants
						// its rules in their namespaces; one bound by
						// nothing is taken as cluster-wide, as anyone
						// could bind it so.
						clusterWide := o.kind() == "ClusterRole" && (clusterBound[o.name()] || !namespaceBound[o.name()])
						for _, rule := range r.Rules {
							for _, e := range checkRule(rule, clusterWide, allowedClusterSecretWrites[p.label]) {
								t.Errorf("%s: %s", o.key(), e)
							}
						}
					case "RoleBinding", "ClusterRoleBinding":
						var b rbacv1.ClusterRoleBinding
						convert(t, o, &b)
						if !roles[b.RoleRef.Kind+"/"+b.RoleRef.Name] {
							t.Errorf("%s binds %s %s, which the provider does not define (no built-in roles)", o.key(), b.RoleRef.Kind, b.RoleRef.Name)
						}
					}
				}
			})
		}
	}
}

// checkRule returns what is wrong with one rule.
func checkRule(r rbacv1.PolicyRule, clusterWide bool, allowedSecretWrites map[string]string) []string {
	var errs []string
	for field, list := range map[string][]string{"verbs": r.Verbs, "apiGroups": r.APIGroups, "resources": r.Resources,
		"resourceNames": r.ResourceNames, "nonResourceURLs": r.NonResourceURLs} {
		for _, v := range list {
			if strings.Contains(v, "*") {
				errs = append(errs, fmt.Sprintf("wildcard %q in %s", v, field))
			}
		}
	}
	for _, v := range r.Verbs {
		if v == "escalate" || v == "bind" || v == "impersonate" {
			errs = append(errs, fmt.Sprintf("verb %q grants more than the role shows", v))
		}
	}
	if clusterWide && slices.Contains(r.APIGroups, "") && slices.Contains(r.Resources, "secrets") {
		for _, v := range r.Verbs {
			if slices.Contains(writeVerbs, v) && allowedSecretWrites[v] == "" {
				errs = append(errs, fmt.Sprintf("cluster-wide %q on Secrets", v))
			}
		}
	}
	return errs
}

func TestCheckRule(t *testing.T) {
	tests := []struct {
		name        string
		rule        rbacv1.PolicyRule
		clusterWide bool
		allowed     map[string]string
		want        int
	}{
		{"plain", rbacv1.PolicyRule{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"get"}}, true, nil, 0},
		{"wildcard verb", rbacv1.PolicyRule{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"*"}}, true, nil, 1},
		{"wildcard resource", rbacv1.PolicyRule{APIGroups: []string{"apps"}, Resources: []string{"*/status"}, Verbs: []string{"get"}}, false, nil, 1},
		{"wildcard group", rbacv1.PolicyRule{APIGroups: []string{"*"}, Resources: []string{"pods"}, Verbs: []string{"get"}}, false, nil, 1},
		{"non-resource", rbacv1.PolicyRule{NonResourceURLs: []string{"/metrics*"}, Verbs: []string{"get"}}, true, nil, 1},
		{"secret read", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list", "watch"}}, true, nil, 0},
		{"secret writes", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"create", "patch", "delete"}}, true, nil, 3},
		{"secret writes in a Role", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"create", "patch"}}, false, nil, 0},
		{"allowed secret create", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"create", "update"}}, true, map[string]string{"create": "why"}, 1},
		{"escalate", rbacv1.PolicyRule{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"clusterroles"}, Verbs: []string{"escalate"}}, false, nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := checkRule(tt.rule, tt.clusterWide, tt.allowed); len(got) != tt.want {
				t.Errorf("got %d problems %q, want %d", len(got), got, tt.want)
			}
		})
	}
}

// TestLabelsAndNamespaces: every object carries the provider label, and
// namespaced ones sit in the provider namespace (clusterctl requires that
// of components: it moves them all into the target namespace).
func TestLabelsAndNamespaces(t *testing.T) {
	for _, p := range providers {
		for source, objs := range shipped(t, p) {
			t.Run(p.key+"/"+source, func(t *testing.T) {
				allowedNS := []string{p.namespace}
				if source != "components" {
					allowedNS = append(allowedNS, p.extraNamespaces...)
				}
				var namespaces []string
				for _, o := range objs {
					if got := o.label("cluster.x-k8s.io/provider"); got != p.label {
						t.Errorf("%s: label cluster.x-k8s.io/provider=%q, want %q", o.key(), got, p.label)
					}
					switch {
					case o.kind() == "Namespace":
						namespaces = append(namespaces, o.name())
					case clusterScoped[o.kind()]:
						if o.namespace() != "" {
							t.Errorf("%s: cluster-scoped but has a namespace", o.key())
						}
					case !slices.Contains(allowedNS, o.namespace()):
						t.Errorf("%s: namespace %q, want one of %q", o.key(), o.namespace(), allowedNS)
					}
				}
				if source != "release build-rbac.yaml" && !slices.Equal(namespaces, []string{p.namespace}) {
					t.Errorf("Namespace objects %q, want exactly [%s]", namespaces, p.namespace)
				}
			})
		}
	}
}

// TestDeployments: the manager Deployment of every release artifact.
func TestDeployments(t *testing.T) {
	for _, p := range providers {
		for source, objs := range shipped(t, p) {
			if strings.HasPrefix(source, "release ") {
				continue
			}
			t.Run(p.key+"/"+source, func(t *testing.T) {
				var dep appsv1.Deployment
				convert(t, only(t, objs, "Deployment"), &dep)
				checkDeployment(t, p, dep)
			})
		}
	}
}

func checkDeployment(t *testing.T, p provider, dep appsv1.Deployment) {
	g := NewWithT(t)
	pod := dep.Spec.Template.Spec
	g.Expect(pod.Containers).To(HaveLen(1), "one container")
	c := pod.Containers[0]
	g.Expect(c.Name).To(Equal("manager"))
	g.Expect(c.ImagePullPolicy).To(Equal(corev1.PullIfNotPresent), "images are loaded into the node, not pulled")
	g.Expect(c.Image).To(HaveSuffix("/" + p.image + ":" + strings.SplitN(c.Image, ":", 2)[1]))
	g.Expect(pod.ServiceAccountName).NotTo(BeEmpty())
	g.Expect(pod.AutomountServiceAccountToken).To(Or(BeNil(), HaveValue(BeTrue())))

	// Hardening: the container's settings, else the pod's.
	psc, csc := pod.SecurityContext, c.SecurityContext
	g.Expect(psc).NotTo(BeNil())
	g.Expect(csc).NotTo(BeNil())
	g.Expect(csc.RunAsNonRoot != nil && *csc.RunAsNonRoot || psc.RunAsNonRoot != nil && *psc.RunAsNonRoot).To(BeTrue(), "runAsNonRoot")
	if csc.RunAsUser != nil {
		g.Expect(*csc.RunAsUser).NotTo(BeZero())
	}
	g.Expect(csc.ReadOnlyRootFilesystem).To(HaveValue(BeTrue()), "readOnlyRootFilesystem")
	g.Expect(csc.AllowPrivilegeEscalation).To(HaveValue(BeFalse()), "allowPrivilegeEscalation")
	g.Expect(csc.Privileged).To(Or(BeNil(), HaveValue(BeFalse())), "privileged")
	g.Expect(csc.Capabilities).NotTo(BeNil())
	g.Expect(csc.Capabilities.Drop).To(ContainElement(corev1.Capability("ALL")))
	g.Expect(csc.Capabilities.Add).To(BeEmpty())
	seccomp := psc.SeccompProfile
	if csc.SeccompProfile != nil {
		seccomp = csc.SeccompProfile
	}
	g.Expect(seccomp).NotTo(BeNil())
	g.Expect(seccomp.Type).To(Equal(corev1.SeccompProfileTypeRuntimeDefault))
	g.Expect(pod.HostNetwork || pod.HostPID || pod.HostIPC).To(BeFalse())
	for _, v := range pod.Volumes {
		g.Expect(v.HostPath).To(BeNil(), "hostPath volume %s", v.Name)
	}

	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		g.Expect(c.Resources.Requests).To(HaveKey(r), "requests")
		g.Expect(c.Resources.Limits).To(HaveKey(r), "limits")
	}

	// Probes on the health port the manager is told to serve.
	g.Expect(c.Args).To(ContainElement("--health-probe-bind-address=:9440"))
	var healthPort string
	for _, port := range c.Ports {
		if port.ContainerPort == 9440 {
			healthPort = port.Name
		}
	}
	g.Expect(healthPort).NotTo(BeEmpty(), "a named container port 9440")
	for name, probe := range map[string]*corev1.Probe{"liveness": c.LivenessProbe, "readiness": c.ReadinessProbe} {
		g.Expect(probe).NotTo(BeNil(), name)
		g.Expect(probe.HTTPGet).NotTo(BeNil(), name)
		g.Expect(probe.HTTPGet.Port.String()).To(Or(Equal(healthPort), Equal("9440")), name)
	}
	g.Expect(c.LivenessProbe.HTTPGet.Path).To(Equal("/healthz"))
	g.Expect(c.ReadinessProbe.HTTPGet.Path).To(Equal("/readyz"))

	args := strings.Join(c.Args, " ")
	g.Expect(c.Args).To(ContainElement("--leader-elect"))
	g.Expect(args).To(ContainSubstring("--namespace "), "--namespace passed through")
	g.Expect(args).To(ContainSubstring("--watch-filter "), "--watch-filter passed through")

	// Webhooks: served on 9443 with the certificate mounted, or off.
	if slices.Contains(c.Args, "--webhook-port=9443") {
		var mounted bool
		for _, m := range c.VolumeMounts {
			mounted = mounted || m.MountPath == "/tmp/k8s-webhook-server/serving-certs" && m.ReadOnly
		}
		g.Expect(mounted).To(BeTrue(), "the webhook certificate is mounted read-only")
	}
}

// TestComponentsVariables: every clusterctl variable of our components has
// a default, the provider's prefix and a line in docs/install.md; CAPI
// core's all have defaults.
func TestComponentsVariables(t *testing.T) {
	docs := string(readFile(t, filepath.Join(root, "docs", "install.md")))
	varRE := regexp.MustCompile(`\$\{\s*([A-Za-z0-9_]+)\s*(:=[^}]*)?\}`)
	check := func(t *testing.T, file, prefix string) {
		g := NewWithT(t)
		for _, m := range varRE.FindAllStringSubmatch(string(readFile(t, file)), -1) {
			g.Expect(m[2]).NotTo(BeEmpty(), "%s: ${%s} has no default", file, m[1])
			if prefix != "" {
				g.Expect(m[1]).To(HavePrefix(prefix))
				g.Expect(docs).To(ContainSubstring("`"+m[1]+"`"), "docs/install.md documents %s", m[1])
			}
		}
	}
	for _, p := range providers {
		t.Run(p.key, func(t *testing.T) { check(t, p.releasedComponents(), p.varPrefix) })
	}
	t.Run("cluster-api", func(t *testing.T) {
		files, _ := filepath.Glob(filepath.Join(outDir, "cluster-api", "*", "core-components.yaml"))
		if len(files) != 1 {
			t.Fatalf("core components: %q", files)
		}
		check(t, files[0], "")
	})
}

// TestCRDContractLabels: our CRDs carry the v1beta2 contract label that
// metadata.yaml promises.
func TestCRDContractLabels(t *testing.T) {
	for _, p := range providers {
		t.Run(p.key, func(t *testing.T) {
			for _, o := range parseObjects(t, readFile(t, p.releasedComponents())) {
				if o.kind() == "CustomResourceDefinition" {
					NewWithT(t).Expect(o.label("cluster.x-k8s.io/v1beta2")).NotTo(BeEmpty(), o.name())
				}
			}
		})
	}
}
