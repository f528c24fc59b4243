package main

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// valueSpec is one chart value: its dotted path, default and documentation.
type valueSpec struct {
	Path        string
	Default     any
	Description string
	Var         string // the clusterctl variable it mirrors, if any
}

// valueSet is the chart's values in the order they were declared.
type valueSet struct {
	list   []*valueSpec
	byPath map[string]*valueSpec
}

func newValueSet() *valueSet { return &valueSet{byPath: map[string]*valueSpec{}} }

func (v *valueSet) get(path string) *valueSpec { return v.byPath[path] }

// add declares a value. Declaring it again with the same default fills in
// what was missing; a different default is an error (two sources disagree).
func (v *valueSet) add(path string, def any, desc, varName string) (*valueSpec, error) {
	if old, ok := v.byPath[path]; ok {
		if !reflect.DeepEqual(old.Default, def) {
			return nil, fmt.Errorf("value %s has two defaults: %#v and %#v", path, old.Default, def)
		}
		if old.Description == "" {
			old.Description = desc
		}
		if old.Var == "" {
			old.Var = varName
		}
		return old, nil
	}
	s := &valueSpec{Path: path, Default: def, Description: desc, Var: varName}
	v.list = append(v.list, s)
	v.byPath[path] = s
	return s, nil
}

// topOrder is the order of the top-level keys in values.yaml; keys not
// listed (the clusterctl variables) come after resources.
var topOrder = []string{"namespace", "createNamespace", "image", "replicas", "resources", "", "extraArgs", "webhooks", "certManager", "crds"}

func rank(path string) int {
	top := strings.SplitN(path, ".", 2)[0]
	for i, k := range topOrder {
		if k == top {
			return i
		}
	}
	for i, k := range topOrder {
		if k == "" {
			return i
		}
	}
	return len(topOrder)
}

// sorted returns the values in values.yaml order (stable within a rank).
func (v *valueSet) sorted() []*valueSpec {
	out := append([]*valueSpec(nil), v.list...)
	sort.SliceStable(out, func(i, j int) bool { return rank(out[i].Path) < rank(out[j].Path) })
	return out
}

// valuesYAML renders values.yaml with each value's documentation.
func (v *valueSet) valuesYAML(header string) ([]byte, error) {
	root := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for _, s := range v.sorted() {
		parts := strings.Split(s.Path, ".")
		m := root
		for _, p := range parts[:len(parts)-1] {
			next := get(m, p)
			if next == nil {
				next = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
				set(m, p, next)
			}
			m = next
		}
		val := &yaml.Node{}
		if err := val.Encode(s.Default); err != nil {
			return nil, err
		}
		comment := wrap(s.Description, 100)
		if s.Var != "" {
			comment += "\nclusterctl variable: " + s.Var
		}
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: parts[len(parts)-1], HeadComment: comment}, val)
	}
	doc := &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{root}, HeadComment: header}
	var b strings.Builder
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	enc.CompactSeqIndent()
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return []byte(b.String()), enc.Close()
}

// wrap breaks text into lines of at most width characters, at spaces.
func wrap(text string, width int) string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(text) {
		if line != "" && len(line)+1+len(w) > width {
			lines = append(lines, line)
			line = w
			continue
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	if line != "" {
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

// schema is values.schema.json: Helm rejects misspelled or mistyped values
// with it. "enabled" and "global" are allowed because the umbrella chart
// passes them down.
func (v *valueSet) schema() ([]byte, error) {
	root := map[string]any{
		"$schema":              "http://json-schema.org/draft-07/schema#",
		"type":                 "object",
		"additionalProperties": false,
		"properties": map[string]any{
			"enabled": map[string]any{"type": "boolean", "description": "Set by the umbrella chart ocp-capi (its dependency condition)."},
			"global":  map[string]any{"type": "object"},
		},
	}
	for _, s := range v.list {
		parts := strings.Split(s.Path, ".")
		obj := root
		for _, p := range parts[:len(parts)-1] {
			props := obj["properties"].(map[string]any)
			next, ok := props[p].(map[string]any)
			if !ok {
				next = map[string]any{"type": "object", "additionalProperties": false, "properties": map[string]any{}}
				props[p] = next
			}
			obj = next
		}
		leaf := map[string]any{"description": s.Description}
		switch s.Default.(type) {
		case string:
			leaf["type"] = "string"
		case bool:
			leaf["type"] = "boolean"
		case int:
			leaf["type"] = "integer"
		case []any:
			leaf["type"] = "array"
			leaf["items"] = map[string]any{"type": "string"}
		case map[string]any:
			leaf["type"] = "object"
		default:
			return nil, fmt.Errorf("value %s: no schema type for %T", s.Path, s.Default)
		}
		obj["properties"].(map[string]any)[parts[len(parts)-1]] = leaf
	}
	out, err := json.MarshalIndent(root, "", "  ")
	return append(out, '\n'), err
}

// readmeTable is the Markdown table of the values.
func (v *valueSet) readmeTable() string {
	var b strings.Builder
	b.WriteString("| Value | Default | clusterctl variable | Description |\n|---|---|---|---|\n")
	for _, s := range v.sorted() {
		def, _ := json.Marshal(s.Default)
		varName := ""
		if s.Var != "" {
			varName = "`" + s.Var + "`"
		}
		fmt.Fprintf(&b, "| `%s` | `%s` | %s | %s |\n", s.Path, def, varName, strings.ReplaceAll(s.Description, "|", `\|`))
	}
	return b.String()
}
