package main

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// templater turns YAML nodes into Helm template text. Where a value or a
// line must become template code, the node tree gets a unique placeholder
// token (a plain scalar or mapping key that YAML emits verbatim); render
// encodes the tree and then swaps every token for its template text. So the
// YAML encoder does the layout, and the template code never has to survive
// a YAML round trip.
type templater struct {
	// prefix starts every token; it is random, so that no content can
	// be mistaken for a token.
	prefix string
	n      int
	// inline maps a token to the text that replaces the token itself.
	inline map[string]string
	// lines maps a token to a function that rewrites the whole line that
	// holds it, given that line.
	lines map[string]func(line string) string
}

func newTemplater() *templater {
	var nonce [8]byte
	_, _ = rand.Read(nonce[:]) // never fails (crypto/rand panics instead)
	return &templater{prefix: fmt.Sprintf("__HELM%x_", nonce), inline: map[string]string{}, lines: map[string]func(string) string{}}
}

func (t *templater) token() string {
	t.n++
	return fmt.Sprintf("%s%d__", t.prefix, t.n)
}

// Inline returns a scalar node that renders as the template action expr,
// e.g. Inline(".Values.replicas") renders `{{ .Values.replicas }}`.
func (t *templater) Inline(expr string) *yaml.Node {
	tok := t.token()
	t.inline[tok] = "{{ " + expr + " }}"
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: tok}
}

// lineToken registers a whole-line replacement and returns its token.
func (t *templater) lineToken(f func(line string) string) string {
	tok := t.token()
	t.lines[tok] = f
	return tok
}

// Control returns a line that renders as the template action expr alone
// (e.g. `{{- if .Values.x }}`), as a sequence item or as a mapping key
// (with an empty value), whichever the parent node needs.
func (t *templater) Control(expr string) string {
	return t.lineToken(func(string) string { return "{{- " + expr + " }}" })
}

// Block returns a mapping value that renders as the YAML of expr, indented
// under its key: `key:` then `{{- toYaml .Values.x | nindent N }}`.
func (t *templater) Block(expr string) *yaml.Node {
	var tok string
	tok = t.lineToken(func(line string) string {
		key := strings.TrimRight(strings.Replace(line, tok, "", 1), " ")
		return fmt.Sprintf("%s\n{{- %s | nindent %d }}", key, expr, indentOf(line)+2)
	})
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: tok}
}

// RangeItems returns a sequence item that renders as one quoted item per
// element of the list expr (e.g. .Values.extraArgs), at the item's indent.
func (t *templater) RangeItems(expr string) *yaml.Node {
	tok := t.lineToken(func(line string) string {
		ind := strings.Repeat(" ", indentOf(line))
		return fmt.Sprintf("{{- range %s }}\n%s- {{ . | quote }}\n{{- end }}", expr, ind)
	})
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: tok}
}

func indentOf(line string) int { return len(line) - len(strings.TrimLeft(line, " ")) }

// WrapItems makes the items seq.Content[from:to] conditional on cond; when
// elseItems is not empty they are rendered instead when cond is false.
func (t *templater) WrapItems(seq *yaml.Node, from, to int, cond string, elseItems ...*yaml.Node) {
	scalar := func(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v} }
	var out []*yaml.Node
	out = append(out, seq.Content[:from]...)
	out = append(out, scalar(t.Control("if "+cond)))
	out = append(out, seq.Content[from:to]...)
	if len(elseItems) > 0 {
		out = append(out, scalar(t.Control("else")))
		out = append(out, elseItems...)
	}
	out = append(out, scalar(t.Control("end")))
	out = append(out, seq.Content[to:]...)
	seq.Content = out
}

// WrapKey makes the entry key of mapping m conditional on cond (if m has
// that key).
func (t *templater) WrapKey(m *yaml.Node, key, cond string) {
	if i := keyIndex(m, key); i >= 0 {
		t.insertCond(m, i, i+2, cond)
	}
}

// AddKey appends the entry key: value to mapping m, conditional on cond.
func (t *templater) AddKey(m *yaml.Node, key string, value *yaml.Node, cond string) {
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, value)
	t.insertCond(m, len(m.Content)-2, len(m.Content), cond)
}

func (t *templater) insertCond(m *yaml.Node, from, to int, cond string) {
	pair := func(tok string) []*yaml.Node {
		return []*yaml.Node{
			{Kind: yaml.ScalarNode, Tag: "!!str", Value: tok},
			{Kind: yaml.ScalarNode, Tag: "!!str", Value: ""},
		}
	}
	var out []*yaml.Node
	out = append(out, m.Content[:from]...)
	out = append(out, pair(t.Control("if "+cond))...)
	out = append(out, m.Content[from:to]...)
	out = append(out, pair(t.Control("end"))...)
	out = append(out, m.Content[to:]...)
	m.Content = out
}

// Render encodes node as YAML and replaces the tokens. Any `{{` that the
// content itself holds is escaped first, so Helm prints it verbatim.
func (t *templater) Render(node *yaml.Node) (string, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	enc.CompactSeqIndent()
	if err := enc.Encode(node); err != nil {
		return "", err
	}
	if err := enc.Close(); err != nil {
		return "", err
	}
	text := strings.ReplaceAll(buf.String(), "{{", `{{ "{{" }}`)
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		if !strings.Contains(line, t.prefix) {
			continue
		}
		for tok, f := range t.lines {
			if strings.Contains(line, tok) {
				line = f(line)
				break
			}
		}
		for tok, repl := range t.inline {
			if strings.Contains(line, tok) {
				line = strings.ReplaceAll(line, tok, repl)
			}
		}
		lines[i] = line
	}
	out := strings.Join(lines, "\n")
	if strings.Contains(out, t.prefix) {
		return "", fmt.Errorf("internal error: a placeholder was not replaced (the YAML encoder quoted or split it)")
	}
	return out, nil
}

// Mapping helpers.

func keyIndex(m *yaml.Node, key string) int {
	if m == nil || m.Kind != yaml.MappingNode {
		return -1
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return i
		}
	}
	return -1
}

// get follows a path of mapping keys; nil when any is missing.
func get(n *yaml.Node, path ...string) *yaml.Node {
	for _, k := range path {
		i := keyIndex(n, k)
		if i < 0 {
			return nil
		}
		n = n.Content[i+1]
	}
	return n
}

func set(m *yaml.Node, key string, v *yaml.Node) {
	if i := keyIndex(m, key); i >= 0 {
		m.Content[i+1] = v
		return
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
}

func scalarValue(n *yaml.Node, path ...string) string {
	v := get(n, path...)
	if v == nil || v.Kind != yaml.ScalarNode {
		return ""
	}
	return v.Value
}

// normalize removes every comment (kustomize keeps some, and they would
// land next to placeholders in odd places) and makes every collection block
// style (template lines cannot go inside a flow collection).
func normalize(n *yaml.Node) {
	n.HeadComment, n.LineComment, n.FootComment = "", "", ""
	if n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode {
		n.Style &^= yaml.FlowStyle
	}
	for _, c := range n.Content {
		normalize(c)
	}
}
