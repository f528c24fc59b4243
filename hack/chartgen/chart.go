package main

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// providerSpec describes one provider's chart. The objects come from the
// provider's kustomize output; everything else is derived from them.
type providerSpec struct {
	Name        string // chart name, e.g. ocp-capi-infrastructure-openstack
	Description string
	Version     string // release version, e.g. v0.1.0 (the chart's appVersion)
	// ProviderLabel is the cluster.x-k8s.io/provider value every object carries.
	ProviderLabel string
	// VarPrefix prefixes every clusterctl variable of the provider, e.g.
	// OCP_CAPI_INFRASTRUCTURE_; each becomes a value (WATCH_FILTER → watchFilter).
	VarPrefix string
	// Namespace is the provider's namespace; it becomes the value namespace.
	Namespace string
	// Literals are other strings that become values, e.g. the add-on's
	// build namespace in its RoleBinding → buildNamespace.
	Literals map[string]string
	// Sources name the kustomize directories, for the generated headers.
	Sources []string
}

const certManagerGroup = "cert-manager.io"

// Conditions of optional parts.
const (
	condCRDs        = ".Values.crds.enabled"
	condNamespace   = ".Values.createNamespace"
	condWebhooks    = ".Values.webhooks.enabled"
	condCertManager = ".Values.certManager.enabled"
	condIssuer      = "and .Values.webhooks.enabled .Values.certManager.enabled"
)

// object is one input document and how it is rendered.
type object struct {
	node       *yaml.Node // the document's mapping node
	kind, name string
	apiVersion string
	cond       string // the whole object is rendered only if cond ("" = always)
}

type providerChart struct {
	spec    providerSpec
	t       *templater
	values  *valueSet
	objects []*object
	// Derived from the objects.
	hasWebhooks     bool
	webhookServices map[string]bool
	certSecret      string
	crds            int    // how many CRDs
	err             error  // the first conflict between values
	deploymentName  string // the manager Deployment's name
}

// buildProviderChart turns the kustomize output (docs) into a chart.
func buildProviderChart(spec providerSpec, docs []*yaml.Node) (map[string][]byte, error) {
	c := &providerChart{spec: spec, t: newTemplater(), values: newValueSet(), webhookServices: map[string]bool{}}
	for _, d := range docs {
		if d.Kind == yaml.DocumentNode && len(d.Content) == 1 {
			d = d.Content[0]
		}
		if d.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("a document is not a YAML mapping")
		}
		normalize(d)
		o := &object{node: d, kind: scalarValue(d, "kind"), name: scalarValue(d, "metadata", "name"), apiVersion: scalarValue(d, "apiVersion")}
		if o.kind == "" || o.name == "" {
			return nil, fmt.Errorf("an object without kind or metadata.name")
		}
		if got := scalarValue(d, "metadata", "labels", "cluster.x-k8s.io/provider"); got != spec.ProviderLabel {
			return nil, fmt.Errorf("%s %s: label cluster.x-k8s.io/provider is %q, want %q", o.kind, o.name, got, spec.ProviderLabel)
		}
		c.objects = append(c.objects, o)
	}
	if err := c.survey(); err != nil {
		return nil, err
	}
	c.addBaseValues()
	for _, o := range c.objects {
		if err := c.transform(o); err != nil {
			return nil, fmt.Errorf("%s %s: %w", o.kind, o.name, err)
		}
	}
	for _, o := range c.objects {
		if err := c.substitute(o.node); err != nil {
			return nil, fmt.Errorf("%s %s: %w", o.kind, o.name, err)
		}
	}
	if c.err != nil {
		return nil, c.err
	}
	return c.files()
}

// survey finds what the transformations depend on: webhooks, their
// Service, the certificate Secret and the manager image.
func (c *providerChart) survey() error {
	for _, o := range c.objects {
		switch o.kind {
		case "CustomResourceDefinition":
			c.crds++
			if get(o.node, "spec", "conversion", "webhook") != nil {
				// A conversion webhook is served by the manager's webhook
				// server, behind the same Service and certificate.
				c.hasWebhooks = true
				if s := scalarValue(o.node, "spec", "conversion", "webhook", "clientConfig", "service", "name"); s != "" {
					c.webhookServices[s] = true
				}
			}
		case "Deployment":
			if c.deploymentName != "" {
				return fmt.Errorf("two Deployments (%s, %s): the chart generator handles one manager per provider", c.deploymentName, o.name)
			}
			c.deploymentName = o.name
		case "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration":
			c.hasWebhooks = true
			for _, w := range seqItems(get(o.node, "webhooks")) {
				if s := scalarValue(w, "clientConfig", "service", "name"); s != "" {
					c.webhookServices[s] = true
				}
			}
		case "Certificate":
			if s := scalarValue(o.node, "spec", "secretName"); s != "" {
				if c.certSecret != "" && c.certSecret != s {
					return fmt.Errorf("more than one cert-manager Certificate Secret (%s, %s)", c.certSecret, s)
				}
				c.certSecret = s
			}
		}
	}
	if c.deploymentName == "" {
		return fmt.Errorf("no Deployment (the manager)")
	}
	if c.certSecret != "" && !c.hasWebhooks {
		return fmt.Errorf("a cert-manager Certificate but no webhook configuration")
	}
	if c.hasWebhooks && c.certSecret == "" {
		return fmt.Errorf("webhook configurations but no cert-manager Certificate")
	}
	return nil
}

// declare adds a value; a conflict is kept in c.err (the first one).
func (c *providerChart) declare(path string, def any, desc string) {
	if _, err := c.values.add(path, def, desc, ""); err != nil && c.err == nil {
		c.err = err
	}
}

func (c *providerChart) addBaseValues() {
	c.declare("namespace", c.spec.Namespace, "Namespace the provider runs in. Every namespaced object of the chart goes there, whatever `helm --namespace` says (that one only holds the release record).")
	c.declare("createNamespace", true, "Create the namespace (and delete it on uninstall). Set to false to use an existing one.")
	if c.crds > 0 {
		c.declare("crds.enabled", true, "Install and upgrade the provider's CRDs with the chart (templates, so that `helm upgrade` updates them, as `clusterctl upgrade` does).")
		c.declare("crds.keep", false, "Annotate the CRDs with `helm.sh/resource-policy: keep`, so that `helm uninstall` leaves them (and every object of those kinds) in place.")
	}
	if c.certSecret != "" {
		c.spec.Literals = withLiteral(c.spec.Literals, c.certSecret, "webhooks.certSecretName")
	}
	c.spec.Literals = withLiteral(c.spec.Literals, c.spec.Namespace, "namespace")
}

func withLiteral(m map[string]string, lit, path string) map[string]string {
	out := map[string]string{lit: path}
	for k, v := range m {
		out[k] = v
	}
	return out
}

func (c *providerChart) transform(o *object) error {
	switch o.kind {
	case "Namespace":
		if o.name == c.spec.Namespace {
			o.cond = condNamespace
		}
	case "CustomResourceDefinition":
		o.cond = condCRDs
		meta := get(o.node, "metadata")
		ann := get(meta, "annotations")
		if get(o.node, "spec", "conversion", "webhook") != nil {
			if err := c.conversionWebhook(o, ann); err != nil {
				return err
			}
		}
		if ann == nil {
			ann = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{scalar("helm.sh/resource-policy"), scalar("keep")}}
			set(meta, "annotations", ann)
			c.t.WrapKey(meta, "annotations", ".Values.crds.keep")
		} else {
			c.t.AddKey(ann, "helm.sh/resource-policy", scalar("keep"), ".Values.crds.keep")
		}
	case "Deployment":
		return c.deployment(o)
	case "Service":
		if c.webhookServices[o.name] {
			o.cond = condWebhooks
		}
	case "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration":
		o.cond = condWebhooks
		return c.webhookConfiguration(o)
	}
	if strings.HasPrefix(o.apiVersion, certManagerGroup+"/") {
		o.cond = condIssuer
	}
	return nil
}

// conversionWebhook makes a CRD's conversion webhook follow the webhook
// values: with webhooks disabled there is no conversion, so the CRD serves
// its storage version only; the CA comes from cert-manager's injector
// (annotation ann) or from webhooks.caBundle.
func (c *providerChart) conversionWebhook(o *object, ann *yaml.Node) error {
	spec := get(o.node, "spec")
	cc := get(spec, "conversion", "webhook", "clientConfig")
	if cc == nil {
		return fmt.Errorf("conversion webhook without clientConfig")
	}
	c.t.AddKey(cc, "caBundle",
		c.t.Inline(`required "webhooks.caBundle is required when certManager.enabled is false" .Values.webhooks.caBundle | quote`),
		"not "+condCertManager)
	c.t.WrapKey(spec, "conversion", condWebhooks)
	if keyIndex(ann, "cert-manager.io/inject-ca-from") >= 0 {
		c.t.WrapKey(ann, "cert-manager.io/inject-ca-from", condIssuer)
	}
	for _, v := range seqItems(get(spec, "versions")) {
		if scalarValue(v, "storage") != "true" {
			set(v, "served", c.t.Inline(".Values.webhooks.enabled"))
		}
	}
	return nil
}

func (c *providerChart) deployment(o *object) error {
	spec := get(o.node, "spec")
	replicas, err := strconv.Atoi(scalarValue(spec, "replicas"))
	if err != nil {
		return fmt.Errorf("spec.replicas: %w", err)
	}
	c.declare("replicas", replicas, "Manager replicas; they elect a leader, so more than one only speeds up fail-over.")
	set(spec, "replicas", c.t.Inline(".Values.replicas"))

	pod := get(spec, "template", "spec")
	var mgr *yaml.Node
	for _, ct := range get(pod, "containers").Content {
		if scalarValue(ct, "name") == "manager" {
			mgr = ct
		}
	}
	if mgr == nil {
		return fmt.Errorf("no container named manager")
	}

	image := scalarValue(mgr, "image")
	repo, tag, ok := splitImage(image)
	if !ok {
		return fmt.Errorf("image %q has no tag", image)
	}
	if tag == c.spec.Version {
		tag = "" // the chart's appVersion
	}
	c.declare("image.repository", repo, "Manager image repository.")
	c.declare("image.tag", tag, "Manager image tag. Empty: the chart's appVersion.")
	c.declare("image.pullPolicy", scalarValue(mgr, "imagePullPolicy"), "Manager image pull policy.")
	set(mgr, "image", c.t.Inline(`printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) | quote`))
	set(mgr, "imagePullPolicy", c.t.Inline(".Values.image.pullPolicy | quote"))

	res := get(mgr, "resources")
	if res == nil {
		return fmt.Errorf("the manager container has no resources")
	}
	var resources any
	if err := res.Decode(&resources); err != nil {
		return err
	}
	c.declare("resources", resources, "Manager container resources.")
	set(mgr, "resources", c.t.Block("toYaml .Values.resources"))

	args := get(mgr, "args")
	if args == nil {
		return fmt.Errorf("the manager container has no args")
	}
	if from, to := webhookArgs(args); c.hasWebhooks && from >= 0 {
		// Without webhooks the manager must not start its webhook server
		// (it would wait for a certificate that nobody writes).
		c.t.WrapItems(args, from, to, condWebhooks, scalar("--webhook-port=0"))
	}
	c.declare("extraArgs", []any{}, "More manager flags, e.g. `--sync-period=30m` or per-controller `--<controller>-concurrency=N`; see the manager's `--help`.")
	args.Content = append(args.Content, c.t.RangeItems(".Values.extraArgs"))

	if !c.hasWebhooks {
		return nil
	}
	c.declare("webhooks.enabled", true, "Serve the admission webhooks (Service, webhook configurations, certificate). Disable only for experiments: invalid objects are then accepted.")
	c.declare("webhooks.caBundle", "", "Base64 PEM of the CA that signed the webhook certificate; required when certManager.enabled is false.")
	c.declare("webhooks.certSecretName", c.certSecret, "Secret (type kubernetes.io/tls) with the webhook serving certificate; cert-manager writes it, or you provide it when certManager.enabled is false.")
	c.declare("certManager.enabled", true, "Issue the webhook certificate with cert-manager (a self-signed Issuer and a Certificate) and let its CA injector fill in the webhook configurations' caBundle.")

	certVolume := ""
	vols := get(pod, "volumes")
	for i, v := range seqItems(vols) {
		if scalarValue(v, "secret", "secretName") == c.certSecret {
			certVolume = scalarValue(v, "name")
			c.t.WrapItems(vols, i, i+1, condWebhooks)
			break
		}
	}
	if certVolume == "" {
		return fmt.Errorf("no volume of the webhook certificate Secret %s", c.certSecret)
	}
	if mounts := get(mgr, "volumeMounts"); mounts != nil {
		wrapNamed(c.t, mounts, certVolume, condWebhooks)
	}
	if ports := get(mgr, "ports"); ports != nil {
		wrapNamed(c.t, ports, "webhook-server", condWebhooks)
	}
	return nil
}

// webhookArgs finds the contiguous --webhook-* flags; -1 when none.
func webhookArgs(args *yaml.Node) (from, to int) {
	from, to = -1, -1
	for i, a := range args.Content {
		if strings.HasPrefix(a.Value, "--webhook-") {
			if from < 0 {
				from = i
			}
			to = i + 1
		}
	}
	return from, to
}

func seqItems(n *yaml.Node) []*yaml.Node {
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil
	}
	return append([]*yaml.Node(nil), n.Content...)
}

func wrapNamed(t *templater, seq *yaml.Node, name, cond string) {
	for i, it := range seq.Content {
		if scalarValue(it, "name") == name {
			t.WrapItems(seq, i, i+1, cond)
			return
		}
	}
}

func (c *providerChart) webhookConfiguration(o *object) error {
	meta := get(o.node, "metadata")
	ann := get(meta, "annotations")
	if keyIndex(ann, "cert-manager.io/inject-ca-from") >= 0 {
		if len(ann.Content) == 2 {
			c.t.WrapKey(meta, "annotations", condCertManager)
		} else {
			c.t.WrapKey(ann, "cert-manager.io/inject-ca-from", condCertManager)
		}
	}
	for _, w := range seqItems(get(o.node, "webhooks")) {
		cc := get(w, "clientConfig")
		if cc == nil {
			return fmt.Errorf("webhook %s has no clientConfig", scalarValue(w, "name"))
		}
		c.t.AddKey(cc, "caBundle",
			c.t.Inline(`required "webhooks.caBundle is required when certManager.enabled is false" .Values.webhooks.caBundle | quote`),
			"not "+condCertManager)
	}
	return nil
}

func scalar(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v} }

// splitImage splits repo[:port]/name:tag at the tag.
func splitImage(image string) (repo, tag string, ok bool) {
	i := strings.LastIndex(image, ":")
	if i < 0 || strings.Contains(image[i:], "/") {
		return "", "", false
	}
	return image[:i], image[i+1:], true
}

// varRE matches a clusterctl variable, ${NAME} or ${NAME:=default}.
var varRE = regexp.MustCompile(`\$\{([A-Za-z0-9_]+)(:=([^}]*))?\}`)

// segment is literal text or a reference to a value.
type segment struct {
	text string
	ref  *valueSpec
}

// substitute rewrites every scalar that holds a clusterctl variable or a
// literal of spec.Literals into a template action reading the value.
func (c *providerChart) substitute(n *yaml.Node) error {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 1; i < len(n.Content); i += 2 {
			if err := c.substitute(n.Content[i]); err != nil {
				return err
			}
		}
		return nil
	case yaml.SequenceNode:
		for _, item := range n.Content {
			if err := c.substitute(item); err != nil {
				return err
			}
		}
		return nil
	case yaml.ScalarNode:
	default:
		return nil
	}
	segs, err := c.segments(n.Value)
	if err != nil {
		return err
	}
	if len(segs) == 1 && segs[0].ref == nil {
		return nil
	}
	*n = *c.t.Inline(expression(segs))
	return nil
}

func (c *providerChart) segments(s string) ([]segment, error) {
	var segs []segment
	last := 0
	for _, m := range varRE.FindAllStringSubmatchIndex(s, -1) {
		segs = append(segs, c.literalSegments(s[last:m[0]])...)
		name := s[m[2]:m[3]]
		if m[4] < 0 {
			return nil, fmt.Errorf("clusterctl variable %s has no default (write ${%s:=<default>})", name, name)
		}
		def := s[m[6]:m[7]]
		if !strings.HasPrefix(name, c.spec.VarPrefix) {
			return nil, fmt.Errorf("clusterctl variable %s does not start with the provider's prefix %s", name, c.spec.VarPrefix)
		}
		ref, err := c.values.add(lowerCamel(strings.TrimPrefix(name, c.spec.VarPrefix)), parseDefault(def), varDescription(name, c.spec.VarPrefix), name)
		if err != nil {
			return nil, err
		}
		segs = append(segs, segment{ref: ref})
		last = m[1]
	}
	segs = append(segs, c.literalSegments(s[last:])...)
	return segs, nil
}

// literalSegments splits s at the literals that stand for values, longest
// literal first.
func (c *providerChart) literalSegments(s string) []segment {
	if s == "" {
		return nil
	}
	lits := make([]string, 0, len(c.spec.Literals))
	for l := range c.spec.Literals {
		lits = append(lits, l)
	}
	sort.Slice(lits, func(i, j int) bool {
		return len(lits[i]) > len(lits[j]) || len(lits[i]) == len(lits[j]) && lits[i] < lits[j]
	})
	for _, l := range lits {
		if i := strings.Index(s, l); i >= 0 {
			ref := c.values.get(c.spec.Literals[l])
			if ref == nil {
				// The literal's value is declared by its first use.
				ref, _ = c.values.add(c.spec.Literals[l], l, "", "")
			}
			var out []segment
			out = append(out, c.literalSegments(s[:i])...)
			out = append(out, segment{ref: ref})
			return append(out, c.literalSegments(s[i+len(l):])...)
		}
	}
	return []segment{{text: s}}
}

// expression is the template action for a scalar made of segs. A scalar
// that is one value keeps the value's type (a number stays a number);
// anything else is a quoted string.
func expression(segs []segment) string {
	if len(segs) == 1 {
		if _, isString := segs[0].ref.Default.(string); isString {
			return ".Values." + segs[0].ref.Path + " | quote"
		}
		return ".Values." + segs[0].ref.Path
	}
	var format strings.Builder
	var args []string
	for _, s := range segs {
		if s.ref == nil {
			format.WriteString(strings.ReplaceAll(s.text, "%", "%%"))
			continue
		}
		format.WriteString("%v")
		args = append(args, ".Values."+s.ref.Path)
	}
	return fmt.Sprintf("printf %s %s | quote", strconv.Quote(format.String()), strings.Join(args, " "))
}

// parseDefault types a clusterctl default as the substituted YAML would:
// `""` is the empty string, digits a number, true/false a boolean.
func parseDefault(def string) any {
	switch def {
	case `""`, `''`:
		return ""
	case "true", "false":
		return def == "true"
	}
	if i, err := strconv.Atoi(def); err == nil {
		return i
	}
	return def
}

// lowerCamel turns WATCH_FILTER into watchFilter.
func lowerCamel(s string) string {
	parts := strings.Split(strings.ToLower(s), "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

// knownVars describe the variables every provider has, by suffix.
var knownVars = map[string]string{
	"WATCH_NAMESPACE":        "Reconcile objects in this namespace only (`--namespace`). Empty: all namespaces.",
	"WATCH_FILTER":           "Reconcile only objects labelled `cluster.x-k8s.io/watch-filter=<value>` (`--watch-filter`). Empty: all objects.",
	"LOG_FORMAT":             "Log format, `text` or `json` (`--log-format`).",
	"VERBOSITY":              "Log verbosity (`-v`): 0 logs what operators need; higher numbers add detail.",
	"BUILD_NAMESPACE":        "Namespace of the BuildController's inputs and builds (`--build-namespace`); the chart binds the build role there.",
	"CAPI_NAMESPACE":         "Namespace where the MachineSet and Secret syncs write the CAPI objects and Secret copies (`--capi-namespace`); the chart binds the Secret sync's role there.",
	"ASSISTED_CA_BUNDLE_B64": "Base64 of a PEM bundle of the CAs that sign assisted-service's certificate, trusted beyond the system roots (`--assisted-ca-bundle`, through a ConfigMap). Empty: the system roots only.",
	"ASSISTED_SERVICE_URL":   "Base URL (`scheme://host[:port]`) that replaces the one InfraEnvs publish when fetching discovery ignitions, e.g. the in-cluster assisted-service (`--assisted-service-url`). Empty: use the published URL.",
}

func varDescription(name, prefix string) string {
	if d, ok := knownVars[strings.TrimPrefix(name, prefix)]; ok {
		return d
	}
	return "See docs/install.md."
}
