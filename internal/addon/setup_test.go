package addon

import (
	"errors"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/ocp-capi/ocp-capi/internal/manager"
)

func TestOptionsFlags(t *testing.T) {
	o := NewOptions()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if o.MAPINamespace != "openshift-machine-api" || o.CAPINamespace != "openshift-cluster-api" || o.ClusterName != "" ||
		o.Build.Namespace != "openshift-machine-config-operator" {
		t.Errorf("defaults %+v", o)
	}
	if err := fs.Parse([]string{"--mapi-namespace=m", "--capi-namespace=c", "--cluster-name=ocp-1", "--build-namespace=b"}); err != nil {
		t.Fatal(err)
	}
	if o.MAPINamespace != "m" || o.CAPINamespace != "c" || o.ClusterName != "ocp-1" || o.Build.Namespace != "b" {
		t.Errorf("parsed %+v", o)
	}
}

func TestOptionsValidate(t *testing.T) {
	for _, tt := range []struct {
		name     string
		o        Options
		mgrNS    string
		wantFlag string
	}{
		{name: "defaults", o: *NewOptions()},
		{name: "one namespace for both", o: Options{MAPINamespace: "x", CAPINamespace: "x"}, mgrNS: "x"},
		{name: "bad MAPI namespace", o: Options{MAPINamespace: "Bad_NS", CAPINamespace: "c"}, wantFlag: "--mapi-namespace"},
		{name: "bad CAPI namespace", o: Options{MAPINamespace: "m", CAPINamespace: ""}, wantFlag: "--capi-namespace"},
		{name: "bad cluster name", o: Options{MAPINamespace: "m", CAPINamespace: "c", ClusterName: "a b"}, wantFlag: "--cluster-name"},
		{name: "--namespace hides one", o: *NewOptions(), mgrNS: "openshift-machine-api", wantFlag: "--namespace"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.o.Validate(tt.mgrNS)
			if tt.wantFlag == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var usage *manager.UsageError
			if !errors.As(err, &usage) || !strings.Contains(err.Error(), tt.wantFlag) {
				t.Errorf("error %v, want a usage error naming %s", err, tt.wantFlag)
			}
		})
	}
}

func TestControllers(t *testing.T) {
	var names []string
	for _, c := range Controllers(NewOptions()) {
		if c.Setup == nil {
			t.Errorf("controller %s has no setup", c.Name)
		}
		names = append(names, c.Name)
	}
	if want := []string{"machinesetsync", "machinesync", "secretsync", "machinesetmigration", "machinemigration", "build"}; strings.Join(names, ",") != strings.Join(want, ",") {
		t.Errorf("controllers %v, want %v", names, want)
	}
}
