package jsonfields

import (
	"slices"
	"testing"
)

type inner struct {
	A string `json:"a,omitempty"`
}

type spec struct {
	Name   string            `json:"name"`
	Flag   bool              `json:"flag"`
	List   []string          `json:"list"`
	Labels map[string]string `json:"labels"`
	Inner  *inner            `json:"inner"`
	Count  int               `json:"count"`
}

func TestChanged(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b spec
		want []string
	}{
		{"absent, null and empty are equal", spec{}, spec{List: []string{}, Labels: map[string]string{}, Inner: &inner{}}, nil},
		{"false is empty", spec{Flag: false}, spec{}, nil},
		{"a set field", spec{}, spec{Name: "x"}, []string{"name"}},
		{"a cleared field", spec{Flag: true, Count: 2}, spec{}, []string{"count", "flag"}},
		{"a nested change", spec{Inner: &inner{A: "1"}}, spec{Inner: &inner{A: "2"}}, []string{"inner"}},
		{"zero is not empty", spec{Count: 0}, spec{Count: 1}, []string{"count"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Changed(&tc.a, &tc.b); !slices.Equal(got, tc.want) {
				t.Errorf("Changed = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestDiffSeesKeysOnEitherSide(t *testing.T) {
	got := Diff(map[string]any{"a": 1.0, "b": "x"}, map[string]any{"b": "x", "c": true})
	if !slices.Equal(got, []string{"a", "c"}) {
		t.Errorf("Diff = %v, want [a c]", got)
	}
	if got := Of(42); got != nil {
		t.Errorf("Of(42) = %v, want nil", got)
	}
}
