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

func TestSame(t *testing.T) {
	type s struct {
		L []string          `json:"l"`
		M map[string]string `json:"m"`
		N int               `json:"n"`
		O []string          `json:"o,omitempty"`
	}
	for _, c := range []struct {
		name string
		a, b any
		want bool
	}{
		{"nil and empty are the same where both are omitted", s{}, s{O: []string{}}, true},
		{"null and [] are not", s{}, s{L: []string{}}, false},
		{"equal", s{L: []string{"a"}, N: 1}, s{L: []string{"a"}, N: 1}, true},
		{"a changed value", s{N: 1}, s{N: 2}, false},
		{"a changed map", s{M: map[string]string{"k": "v"}}, s{M: map[string]string{"k": "w"}}, false},
	} {
		got, err := Same(c.a, c.b)
		if err != nil || got != c.want {
			t.Errorf("%s: Same = %v, %v; want %v", c.name, got, err, c.want)
		}
	}
	if _, err := Same(func() {}, 1); err == nil {
		t.Error("a value JSON cannot encode is an error")
	}
}
