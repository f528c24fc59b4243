package main

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func mapping(kv ...any) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for i := 0; i < len(kv); i += 2 {
		v, ok := kv[i+1].(*yaml.Node)
		if !ok {
			v = &yaml.Node{}
			if err := v.Encode(kv[i+1]); err != nil {
				panic(err)
			}
		}
		m.Content = append(m.Content, scalar(kv[i].(string)), v)
	}
	return m
}

func seq(items ...string) *yaml.Node {
	s := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	for _, it := range items {
		s.Content = append(s.Content, scalar(it))
	}
	return s
}

func TestRender(t *testing.T) {
	tests := []struct {
		name  string
		build func(t *templater) *yaml.Node
		want  string
	}{
		{
			name: "inline",
			build: func(tp *templater) *yaml.Node {
				return mapping("replicas", tp.Inline(".Values.replicas"), "name", "x")
			},
			want: "replicas: {{ .Values.replicas }}\nname: x\n",
		},
		{
			name: "block",
			build: func(tp *templater) *yaml.Node {
				return mapping("spec", mapping("resources", tp.Block("toYaml .Values.resources")))
			},
			want: "spec:\n  resources:\n{{- toYaml .Values.resources | nindent 4 }}\n",
		},
		{
			name: "wrapped items with else and a range",
			build: func(tp *templater) *yaml.Node {
				args := seq("--a", "--webhook-port=9443", "--b")
				tp.WrapItems(args, 1, 2, ".Values.on", scalar("--webhook-port=0"))
				args.Content = append(args.Content, tp.RangeItems(".Values.extra"))
				return mapping("args", args)
			},
			want: "args:\n- --a\n{{- if .Values.on }}\n- --webhook-port=9443\n{{- else }}\n- --webhook-port=0\n{{- end }}\n- --b\n" +
				"{{- range .Values.extra }}\n- {{ . | quote }}\n{{- end }}\n",
		},
		{
			name: "wrapped and added keys",
			build: func(tp *templater) *yaml.Node {
				m := mapping("a", "1", "b", "2")
				tp.WrapKey(m, "a", ".Values.x")
				tp.AddKey(m, "c", scalar("3"), "not .Values.x")
				return m
			},
			want: "{{- if .Values.x }}\na: \"1\"\n{{- end }}\nb: \"2\"\n{{- if not .Values.x }}\nc: \"3\"\n{{- end }}\n",
		},
		{
			name: "content braces are escaped",
			build: func(tp *templater) *yaml.Node {
				return mapping("description", "use {{ .Name }} here")
			},
			want: "description: use {{ \"{{\" }} .Name }} here\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tp := newTemplater()
			got, err := tp.Render(tt.build(tp))
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// FuzzRender: whatever a string holds, the rendered template, with its
// actions evaluated by hand, is YAML that gives the string back.
func FuzzRender(f *testing.F) {
	for _, s := range []string{"plain", "{{ .x }}", "a: b", "- x", "'\"", "multi\nline\n", "__HELM1_1__", "{{", "}}{{-", "#x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !isValidYAMLString(s) {
			t.Skip()
		}
		tp := newTemplater()
		out, err := tp.Render(mapping("a", s, "b", tp.Inline(".Values.x")))
		if err != nil {
			t.Fatal(err)
		}
		// What Helm does: the escape prints "{{"; the action prints X.
		out = strings.ReplaceAll(out, `{{ "{{" }}`, "{{")
		out = strings.ReplaceAll(out, "{{ .Values.x }}", "X")
		var got map[string]string
		if err := yaml.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("%q rendered as invalid YAML %q: %v", s, out, err)
		}
		if got["a"] != s || got["b"] != "X" {
			t.Fatalf("%q rendered as %q, read back %q", s, out, got)
		}
	})
}

// isValidYAMLString: YAML cannot carry every byte sequence (invalid UTF-8,
// most control characters); the encoder refuses those.
func isValidYAMLString(s string) bool {
	n := &yaml.Node{}
	if err := n.Encode(s); err != nil {
		return false
	}
	out, err := yaml.Marshal(n)
	if err != nil {
		return false
	}
	var back string
	return yaml.Unmarshal(out, &back) == nil && back == s
}
