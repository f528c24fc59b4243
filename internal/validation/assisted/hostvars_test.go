package assisted

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

func TestReferencesAndValidateVars(t *testing.T) {
	for _, tc := range []struct {
		in   string
		refs []string
		err  string
	}{
		{"plain", nil, ""},
		{"$METADATA_UUID", []string{"METADATA_UUID"}, ""},
		{`openstack://"$METADATA_UUID"`, []string{"METADATA_UUID"}, ""},
		{"a-${METADATA_NAME}-b$METADATA_HOSTNAME", []string{"METADATA_NAME", "METADATA_HOSTNAME"}, ""},
		{"$", nil, "starts no variable"},
		{"${METADATA_NAME", nil, "not closed"},
		{"$1X", nil, "starts no variable"},
		{"$HOME", []string{"HOME"}, "unknown host variable $HOME"},
	} {
		refs, err := References(tc.in)
		if err == nil {
			err = ValidateVars(tc.in)
		}
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%q: %v", tc.in, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%q: error %v, want %q", tc.in, err, tc.err)
		case tc.err == "" && strings.Join(refs, ",") != strings.Join(tc.refs, ","):
			t.Errorf("%q: refs %v, want %v", tc.in, refs, tc.refs)
		}
	}
}

func TestResolve(t *testing.T) {
	g := NewWithT(t)
	v := Vars{VarUUID: "u-1", VarName: "host-a"}
	got, err := v.Resolve(`openstack://"$METADATA_UUID"`)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(Equal("openstack://u-1"))
	got, err = v.Resolve("${METADATA_NAME}.lab")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(Equal("host-a.lab"))
	_, err = v.Resolve("$METADATA_METAL3_NAME")
	g.Expect(err).To(MatchError(ContainSubstring("no value")))
}

func FuzzResolve(f *testing.F) {
	f.Add("openstack:///$METADATA_UUID")
	f.Add("${")
	f.Add("$$${A}")
	f.Fuzz(func(t *testing.T, s string) {
		v := Vars{VarUUID: "u"}
		out, err := v.Resolve(s)
		if err == nil && strings.Contains(out, `"`) {
			t.Fatalf("%q resolved to %q with a quote", s, out)
		}
		if _, err := References(s); err == nil {
			_ = ValidateVars(s)
		}
	})
}
