// Command chartgen writes the Helm charts from the kustomize output, so that
// a chart and its kustomize tree cannot drift: hack/release.sh runs it (`make
// charts` for the charts/ tree, `make release` for the packaged copies), and
// test/packaging checks that `helm template` with the default values renders
// exactly the objects of `kustomize build` (after clusterctl's substitution of
// the variables' defaults).
//
//	chartgen provider --out DIR --name NAME --description TEXT --version vX.Y.Z \
//	    --provider-label LABEL --var-prefix PREFIX_ --namespace NS [--literal TEXT=value.path]... \
//	    [--source DIR]... FILE...
//	chartgen umbrella --out DIR --name NAME --description TEXT --version vX.Y.Z --dependency CHART=ALIAS[=disabled]...
//
// A provider chart is the input objects with:
//   - every clusterctl variable ${PREFIX_NAME:=default} turned into the value
//     name (lower camel case) with that default;
//   - the provider namespace (and each --literal) turned into a value;
//   - the manager's image, pull policy, replicas, resources and extra args
//     from values;
//   - CRDs behind crds.enabled (and crds.keep), the namespace behind
//     createNamespace, the webhooks behind webhooks.enabled and the
//     cert-manager objects behind certManager.enabled (else the caBundle
//     comes from webhooks.caBundle).
//
// The umbrella chart depends on the provider charts through symbolic links
// in its charts/ directory, so it needs no `helm dependency build`.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "chartgen:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return errors.New("usage: chartgen provider|umbrella [flags]")
	}
	fs := flag.NewFlagSet("chartgen "+args[0], flag.ContinueOnError)
	out := fs.String("out", "", "chart directory to (re)write")
	name := fs.String("name", "", "chart name")
	description := fs.String("description", "", "chart description")
	version := fs.String("version", "", "release version (vX.Y.Z); the chart version is the same without the v")
	switch args[0] {
	case "provider":
		var spec providerSpec
		var literals, sources multiFlag
		fs.StringVar(&spec.ProviderLabel, "provider-label", "", "the cluster.x-k8s.io/provider label value")
		fs.StringVar(&spec.VarPrefix, "var-prefix", "", "prefix of the provider's clusterctl variables")
		fs.StringVar(&spec.Namespace, "namespace", "", "the provider's namespace")
		fs.Var(&literals, "literal", "TEXT=value.path: TEXT in the objects becomes that value (repeatable)")
		fs.Var(&sources, "source", "kustomize directory the input came from, for the headers (repeatable)")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		spec.Name, spec.Description, spec.Version, spec.Sources = *name, *description, *version, sources
		spec.Literals = map[string]string{}
		for _, l := range literals {
			text, path, ok := strings.Cut(l, "=")
			if !ok || text == "" || path == "" {
				return fmt.Errorf("--literal %q: want TEXT=value.path", l)
			}
			spec.Literals[text] = path
		}
		if err := requireFlags(map[string]string{"out": *out, "name": spec.Name, "description": spec.Description, "version": spec.Version,
			"provider-label": spec.ProviderLabel, "var-prefix": spec.VarPrefix, "namespace": spec.Namespace}); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			return errors.New("no input files (the kustomize output)")
		}
		var docs []*yaml.Node
		for _, f := range fs.Args() {
			d, err := readDocs(f)
			if err != nil {
				return err
			}
			docs = append(docs, d...)
		}
		files, err := buildProviderChart(spec, docs)
		if err != nil {
			return fmt.Errorf("chart %s: %w", spec.Name, err)
		}
		return writeChart(*out, files, nil)
	case "umbrella":
		var deps multiFlag
		fs.Var(&deps, "dependency", "CHART=ALIAS[=disabled] (repeatable)")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if err := requireFlags(map[string]string{"out": *out, "name": *name, "description": *description, "version": *version}); err != nil {
			return err
		}
		var ds []dependency
		for _, d := range deps {
			parts := strings.Split(d, "=")
			if len(parts) < 2 || len(parts) > 3 || (len(parts) == 3 && parts[2] != "disabled") {
				return fmt.Errorf("--dependency %q: want CHART=ALIAS[=disabled]", d)
			}
			ds = append(ds, dependency{Chart: parts[0], Alias: parts[1], Enabled: len(parts) == 2})
		}
		links := map[string]string{}
		for _, d := range ds {
			links["charts/"+d.Chart] = filepath.Join("..", "..", d.Chart)
		}
		return writeChart(*out, umbrellaFiles(*name, *description, *version, ds), links)
	default:
		return fmt.Errorf("unknown subcommand %q: want provider or umbrella", args[0])
	}
}

func requireFlags(flags map[string]string) error {
	var missing []string
	for k, v := range flags {
		if v == "" {
			missing = append(missing, "--"+k)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		return fmt.Errorf("missing %s", strings.Join(missing, ", "))
	}
	return nil
}

// readDocs reads the documents of a multi-document YAML file ("-": stdin).
func readDocs(path string) ([]*yaml.Node, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(os.Stdin)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var docs []*yaml.Node
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(n.Content) == 0 {
			continue // an empty document
		}
		docs = append(docs, &n)
	}
}

// writeChart replaces dir with files and symbolic links (name → target).
func writeChart(dir string, files map[string][]byte, links map[string]string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
	}
	for name, target := range links {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.Symlink(target, p); err != nil {
			return err
		}
	}
	return nil
}
