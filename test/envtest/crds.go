package envtest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// CRD is one CustomResourceDefinition and the file it was read from.
type CRD struct {
	Object *apiextensionsv1.CustomResourceDefinition
	Source string
}

// ReadCRDDir reads every CRD in the YAML files of dir (not recursive).
// Other kinds of documents are ignored.
func ReadCRDDir(dir string) ([]CRD, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []CRD
	for _, e := range entries {
		if e.IsDir() || (!strings.HasSuffix(e.Name(), ".yaml") && !strings.HasSuffix(e.Name(), ".yml")) {
			continue
		}
		crds, err := ReadCRDFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, crds...)
	}
	return out, nil
}

// ReadCRDFile reads the CRDs of one (possibly multi-document) YAML file.
func ReadCRDFile(path string) ([]CRD, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []CRD
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		var meta struct {
			Kind string `json:"kind"`
		}
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if meta.Kind != "CustomResourceDefinition" {
			continue
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(doc, crd); err != nil {
			// Upstream files may carry fields newer than our apiextensions
			// types; fall back to a lenient decode rather than refusing them.
			crd = &apiextensionsv1.CustomResourceDefinition{}
			if err := yaml.Unmarshal(doc, crd); err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
		}
		out = append(out, CRD{Object: crd, Source: path})
	}
	return out, nil
}

// preferredVariant decides between two upstream files that define the same
// CRD. OpenShift publishes one file per feature set; the TechPreviewNoUpgrade
// machine-api files carry the MachineAPIMigration fields (authoritativeAPI,
// synchronizedGeneration) that the sync controller needs, so they win.
func preferredVariant(a, b CRD) CRD {
	score := func(c CRD) int {
		base := filepath.Base(c.Source)
		switch {
		case strings.Contains(base, "TechPreviewNoUpgrade"):
			return 2
		case strings.Contains(base, "-Default"):
			return 1
		}
		return 0
	}
	if score(b) > score(a) {
		return b
	}
	return a
}

// ConsumedCRDs returns the CRDs of the APIs we consume but do not serve.
// Each CRD we generate for the test environment (in generatedDir) is replaced
// by the real upstream CRD of the same name when upstreamDir holds one, so
// that the API server validates our objects against upstream's schemas.
// upstreamDir may be empty: then only the generated CRDs are used.
func ConsumedCRDs(generatedDir, upstreamDir string) ([]CRD, error) {
	generated, err := ReadCRDDir(generatedDir)
	if err != nil {
		return nil, fmt.Errorf("reading generated consumed CRDs: %w", err)
	}
	upstream := map[string]CRD{}
	if upstreamDir != "" {
		if err := filepath.WalkDir(upstreamDir, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() || !strings.HasSuffix(path, ".yaml") {
				return nil
			}
			crds, err := ReadCRDFile(path)
			if err != nil {
				return err
			}
			for _, c := range crds {
				if prev, ok := upstream[c.Object.Name]; ok {
					c = preferredVariant(prev, c)
				}
				upstream[c.Object.Name] = c
			}
			return nil
		}); err != nil {
			return nil, fmt.Errorf("reading upstream CRDs in %s: %w", upstreamDir, err)
		}
	}
	out := make([]CRD, 0, len(generated))
	for _, g := range generated {
		if u, ok := upstream[g.Object.Name]; ok {
			out = append(out, u)
			continue
		}
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Object.Name < out[j].Object.Name })
	return out, nil
}
