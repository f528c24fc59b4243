package main

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func TestLowerCamel(t *testing.T) {
	for in, want := range map[string]string{
		"WATCH_FILTER": "watchFilter", "VERBOSITY": "verbosity", "ASSISTED_SERVICE_URL": "assistedServiceUrl", "A__B": "aB",
	} {
		if got := lowerCamel(in); got != want {
			t.Errorf("lowerCamel(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseDefault(t *testing.T) {
	tests := []struct {
		in   string
		want any
	}{
		{`""`, ""}, {`''`, ""}, {"text", "text"}, {"0", 0}, {"42", 42}, {"true", true}, {"false", false}, {":8443", ":8443"}, {"1.5", "1.5"},
	}
	for _, tt := range tests {
		if got := parseDefault(tt.in); got != tt.want {
			t.Errorf("parseDefault(%q) = %#v, want %#v", tt.in, got, tt.want)
		}
	}
}

func TestSplitImage(t *testing.T) {
	tests := []struct {
		in, repo, tag string
		ok            bool
	}{
		{"ocp-capi.local/infrastructure-manager:v0.1.0", "ocp-capi.local/infrastructure-manager", "v0.1.0", true},
		{"registry:5000/org/mgr:v1", "registry:5000/org/mgr", "v1", true},
		{"registry:5000/org/mgr", "", "", false},
		{"mgr", "", "", false},
	}
	for _, tt := range tests {
		repo, tag, ok := splitImage(tt.in)
		if repo != tt.repo || tag != tt.tag || ok != tt.ok {
			t.Errorf("splitImage(%q) = %q, %q, %v", tt.in, repo, tag, ok)
		}
	}
}

func TestSegmentsAndExpression(t *testing.T) {
	c := &providerChart{
		spec:   providerSpec{VarPrefix: "P_", Namespace: "ns-system", Literals: map[string]string{"ns-system": "namespace", "ns-system-cert": "webhooks.certSecretName"}},
		values: newValueSet(),
	}
	c.values.add("namespace", "ns-system", "", "")
	tests := []struct {
		in, want string
	}{
		{"plain", ""},
		{`${P_WATCH_FILTER:=""}`, ".Values.watchFilter | quote"},
		{"${P_VERBOSITY:=0}", ".Values.verbosity"},
		{"--v=${P_VERBOSITY:=0}", `printf "--v=%v" .Values.verbosity | quote`},
		{"ns-system", ".Values.namespace | quote"},
		{"svc.ns-system.svc", `printf "svc.%v.svc" .Values.namespace | quote`},
		{"ns-system-cert", ".Values.webhooks.certSecretName | quote"},
		{"100%-${P_LOG_FORMAT:=text}/ns-system", `printf "100%%-%v/%v" .Values.logFormat .Values.namespace | quote`},
	}
	for _, tt := range tests {
		segs, err := c.segments(tt.in)
		if err != nil {
			t.Fatalf("%q: %v", tt.in, err)
		}
		got := ""
		if len(segs) != 1 || segs[0].ref != nil {
			got = expression(segs)
		}
		if got != tt.want {
			t.Errorf("%q: got %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := c.values.get("verbosity"); got == nil || got.Default != 0 || got.Var != "P_VERBOSITY" {
		t.Errorf("value verbosity = %+v", got)
	}
	for in, want := range map[string]string{
		"${P_X}":            "has no default",
		"${OTHER_X:=1}":     "prefix P_",
		"${P_VERBOSITY:=1}": "two defaults",
	} {
		if _, err := c.segments(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want one containing %q", in, err, want)
		}
	}
}

const testInput = `apiVersion: v1
kind: Namespace
metadata:
  name: p-system
  labels: {cluster.x-k8s.io/provider: infrastructure-p}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: things.p.io
  labels: {cluster.x-k8s.io/provider: infrastructure-p}
  annotations: {controller-gen.kubebuilder.io/version: v0.21.0}
spec: {group: p.io}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: p-controller-manager
  namespace: p-system
  labels: {cluster.x-k8s.io/provider: infrastructure-p}
spec:
  replicas: 1
  template:
    spec:
      containers:
      - name: manager
        image: reg.local/p-manager:v0.1.0
        imagePullPolicy: IfNotPresent
        args: [--leader-elect, --namespace, '${P_WATCH_NAMESPACE:=""}', '--v=${P_VERBOSITY:=0}', --webhook-port=9443, --webhook-cert-dir=/certs]
        ports: [{name: webhook-server, containerPort: 9443}, {name: healthz, containerPort: 9440}]
        resources: {limits: {cpu: 500m}}
        volumeMounts: [{name: cert, mountPath: /certs}]
      volumes: [{name: cert, secret: {secretName: p-cert}}]
---
apiVersion: v1
kind: Service
metadata:
  name: p-webhook-service
  namespace: p-system
  labels: {cluster.x-k8s.io/provider: infrastructure-p}
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: p-serving-cert
  namespace: p-system
  labels: {cluster.x-k8s.io/provider: infrastructure-p}
spec:
  secretName: p-cert
  dnsNames: [p-webhook-service.p-system.svc]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: p-validating
  labels: {cluster.x-k8s.io/provider: infrastructure-p}
  annotations: {cert-manager.io/inject-ca-from: p-system/p-serving-cert}
webhooks:
- name: v.p.io
  clientConfig: {service: {name: p-webhook-service, namespace: p-system}}
`

func testSpec() providerSpec {
	return providerSpec{Name: "p", Description: "P", Version: "v0.1.0", ProviderLabel: "infrastructure-p", VarPrefix: "P_", Namespace: "p-system"}
}

func decode(t *testing.T, s string) []*yaml.Node {
	t.Helper()
	var docs []*yaml.Node
	dec := yaml.NewDecoder(strings.NewReader(s))
	for {
		var n yaml.Node
		if err := dec.Decode(&n); err != nil {
			return docs
		}
		docs = append(docs, &n)
	}
}

func TestBuildProviderChart(t *testing.T) {
	files, err := buildProviderChart(testSpec(), decode(t, testInput))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"Chart.yaml", "values.yaml", "values.schema.json", "README.md", ".helmignore", "templates/NOTES.txt",
		"templates/namespace.yaml", "templates/crds.yaml", "templates/deployment.yaml", "templates/webhooks.yaml", "templates/certmanager.yaml"} {
		if _, ok := files[f]; !ok {
			t.Errorf("no %s", f)
		}
	}
	contains := map[string][]string{
		"templates/namespace.yaml": {"{{- if .Values.createNamespace }}", "name: {{ .Values.namespace | quote }}"},
		"templates/crds.yaml":      {"{{- if .Values.crds.enabled }}", "{{- if .Values.crds.keep }}\n    helm.sh/resource-policy: keep"},
		"templates/deployment.yaml": {
			"replicas: {{ .Values.replicas }}",
			`image: {{ printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) | quote }}`,
			"- {{ .Values.watchNamespace | quote }}",
			"{{- if .Values.webhooks.enabled }}\n        - --webhook-port=9443\n        - --webhook-cert-dir=/certs\n{{- else }}\n        - --webhook-port=0\n{{- end }}",
			"{{- range .Values.extraArgs }}",
			"secretName: {{ .Values.webhooks.certSecretName | quote }}",
			"{{- toYaml .Values.resources | nindent 10 }}",
		},
		"templates/webhooks.yaml": {
			"{{- if .Values.webhooks.enabled }}",
			"{{- if .Values.certManager.enabled }}\n  annotations:",
			`{{- if not .Values.certManager.enabled }}` + "\n    caBundle: {{ required",
		},
		"templates/certmanager.yaml": {"{{- if and .Values.webhooks.enabled .Values.certManager.enabled }}", `{{ printf "p-webhook-service.%v.svc" .Values.namespace | quote }}`},
		"values.yaml":                {"namespace: p-system", "repository: reg.local/p-manager", `tag: ""`, "watchNamespace: \"\"", "verbosity: 0", "certSecretName: p-cert", "# clusterctl variable: P_VERBOSITY\nverbosity: 0"},
		"Chart.yaml":                 {"version: 0.1.0", "appVersion: v0.1.0"},
	}
	for f, wants := range contains {
		for _, w := range wants {
			if !strings.Contains(string(files[f]), w) {
				t.Errorf("%s does not contain %q:\n%s", f, w, files[f])
			}
		}
	}
}

// TestConversionWebhook: a CRD with a conversion webhook gets it only with
// webhooks enabled (and then serves its other versions), with the CA from
// cert-manager or from the values.
func TestConversionWebhook(t *testing.T) {
	in := strings.Replace(testInput, "spec: {group: p.io}", `spec:
  group: p.io
  versions: [{name: v1, served: true, storage: false}, {name: v2, served: true, storage: true}]
  conversion:
    strategy: Webhook
    webhook:
      conversionReviewVersions: [v1]
      clientConfig: {service: {name: p-webhook-service, namespace: p-system, path: /convert}}`, 1)
	in = strings.Replace(in, "annotations: {controller-gen.kubebuilder.io/version: v0.21.0}",
		"annotations: {controller-gen.kubebuilder.io/version: v0.21.0, cert-manager.io/inject-ca-from: p-system/p-serving-cert}", 1)
	files, err := buildProviderChart(testSpec(), decode(t, in))
	if err != nil {
		t.Fatal(err)
	}
	crds := string(files["templates/crds.yaml"])
	for _, w := range []string{
		"{{- if and .Values.webhooks.enabled .Values.certManager.enabled }}\n    cert-manager.io/inject-ca-from:",
		"{{- if .Values.webhooks.enabled }}\n  conversion:",
		"namespace: {{ .Values.namespace | quote }}",
		"{{- if not .Values.certManager.enabled }}\n        caBundle: {{ required",
		"served: {{ .Values.webhooks.enabled }}\n    storage: false",
		"served: true\n    storage: true",
	} {
		if !strings.Contains(crds, w) {
			t.Errorf("templates/crds.yaml does not contain %q:\n%s", w, crds)
		}
	}
}

func TestBuildProviderChartErrors(t *testing.T) {
	tests := []struct {
		name, from, to, want string
	}{
		{"missing label", "name: p-webhook-service\n  namespace: p-system\n  labels: {cluster.x-k8s.io/provider: infrastructure-p}", "name: p-webhook-service\n  namespace: p-system", "label cluster.x-k8s.io/provider"},
		{"variable without default", `${P_WATCH_NAMESPACE:=""}`, `${P_WATCH_NAMESPACE}`, "has no default"},
		{"no manager", "- name: manager", "- name: other", "no container named manager"},
		{"conversion webhook without clientConfig", "spec: {group: p.io}", "spec: {group: p.io, conversion: {webhook: {}}}", "without clientConfig"},
		{"image without tag", "reg.local/p-manager:v0.1.0", "reg.local/p-manager", "has no tag"},
		{"no Deployment", "kind: Deployment", "kind: DaemonSet", "no Deployment"},
		{"webhooks without certificate", "secretName: p-cert\n  dnsNames", "secretNam: p-cert\n  dnsNames", "no cert-manager Certificate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := strings.Replace(testInput, tt.from, tt.to, 1)
			if in == testInput {
				t.Fatalf("%q not in the input", tt.from)
			}
			_, err := buildProviderChart(testSpec(), decode(t, in))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}
