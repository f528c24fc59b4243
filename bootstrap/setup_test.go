package bootstrap

import (
	"testing"

	"github.com/spf13/pflag"
)

// TLS verification of assisted-service is on unless the flag says
// otherwise.
func TestInsecureSkipTLSVerifyIsOptIn(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{nil, false},
		{[]string{"--assisted-insecure-skip-tls-verify"}, true},
	} {
		var o Options
		fs := pflag.NewFlagSet("bootstrap", pflag.ContinueOnError)
		o.AddFlags(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		if o.InsecureSkipTLSVerify != tc.want {
			t.Errorf("%v: InsecureSkipTLSVerify = %t, want %t", tc.args, o.InsecureSkipTLSVerify, tc.want)
		}
	}
}
