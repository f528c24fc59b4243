package clients

import (
	"reflect"
	"strings"
	"testing"
)

// secretMarker stands for a credential in the fuzzed clouds.yaml files.
const secretMarker = "s3cr3t"

// FuzzParseIdentity feeds arbitrary clouds.yaml, cloud names, regions and
// CA bundles to parseIdentity: it never panics, gives the same answer
// twice, never turns TLS verification off unless the clouds.yaml says
// `verify: false`, and its message (which becomes a condition and a log
// line) never quotes a credential of the file.
//
//	go test ./internal/openstack/cloud/clients -run '^$' -fuzz '^FuzzParseIdentity$' -fuzztime 60s
func FuzzParseIdentity(f *testing.F) {
	good := "clouds:\n  openstack:\n    auth:\n      auth_url: https://keystone.example:5000/v3\n      username: demo\n      password: " + secretMarker +
		"\n      project_name: demo\n      user_domain_name: Default\n      project_domain_name: Default\n    region_name: RegionOne\n"
	appCred := "clouds:\n  openstack:\n    auth_type: v3applicationcredential\n    auth:\n      auth_url: https://keystone.example:5000/v3\n" +
		"      application_credential_id: id\n      application_credential_secret: " + secretMarker + "\n    verify: false\n"
	for _, seed := range []struct{ clouds, cloud, region, cacert string }{
		{good, "openstack", "", ""},
		{good, "openstack", "RegionTwo", "\n"},
		{appCred, "openstack", "", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"},
		{"clouds:\n  openstack:\n    auth: " + secretMarker + "\n", "openstack", "", ""},
		{"clouds:\n  openstack:\n    auth:\n      password: [" + secretMarker + "]\n", "openstack", "", ""},
		{"clouds:\n  openstack:\n    auth:\n      password: " + secretMarker + "\n    verify: " + secretMarker + "\n", "openstack", "", ""},
		{"clouds:\n  openstack:\n    auth:\n      {" + secretMarker + ": 1}: x\n", "openstack", "", ""},
		{secretMarker, "openstack", "", ""},
		{"", "", "", ""},
	} {
		f.Add([]byte(seed.clouds), seed.cloud, seed.region, []byte(seed.cacert))
	}
	f.Fuzz(func(t *testing.T, clouds []byte, cloud, region string, cacert []byte) {
		id := Identity{Key: "ns/cloud-config", CloudsYAML: clouds, CloudName: cloud, Region: region, CACert: cacert}
		auth1, ep1, tls1, err1 := parseIdentity(id)
		auth2, ep2, tls2, err2 := parseIdentity(id)
		if !reflect.DeepEqual(auth1, auth2) || !reflect.DeepEqual(ep1, ep2) || (err1 == nil) != (err2 == nil) ||
			(err1 != nil && err1.Error() != err2.Error()) || (tls1 == nil) != (tls2 == nil) {
			t.Fatalf("two parses of the same identity differ: %v / %v", err1, err2)
		}
		if err1 != nil {
			if tls1 != nil {
				t.Fatalf("a TLS configuration with an error")
			}
			if strings.Contains(err1.Error(), secretMarker) && !strings.Contains(cloud+region, secretMarker) {
				t.Fatalf("the message quotes the clouds.yaml: %q", err1.Error())
			}
			return
		}
		if tls1 == nil {
			t.Fatalf("no TLS configuration and no error")
		}
		if tls1.InsecureSkipVerify && !strings.Contains(string(clouds), "verify") {
			t.Fatalf("TLS verification off, and the clouds.yaml does not say verify")
		}
		if tls1.MinVersion == 0 || tls1 == tls2 {
			t.Fatalf("MinVersion %d; a shared TLS configuration: %t", tls1.MinVersion, tls1 == tls2)
		}
	})
}

// Regression: a clouds.yaml the decoder refuses made a message (a condition
// and a log line) that quoted the refused value, e.g. a password written
// where a map belongs.
func TestParseIdentityHidesYAMLValues(t *testing.T) {
	for clouds, want := range map[string]string{
		"clouds:\n  openstack:\n    auth: " + secretMarker + "\n":                                   "line 3: cannot unmarshal !!str (value hidden) into clouds.AuthInfo",
		"clouds:\n  openstack:\n    auth:\n      password: x\n    verify: " + secretMarker + "-x\n": "line 5: cannot unmarshal !!str (value hidden) into bool",
		secretMarker: "line 1: cannot unmarshal !!str (value hidden) into clouds.Clouds",
		"clouds:\n  openstack:\n    auth:\n      password: [" + secretMarker + "\n": "did not find expected",
	} {
		_, _, _, err := parseIdentity(Identity{Key: "ns/c", CloudsYAML: []byte(clouds), CloudName: "openstack"})
		if err == nil {
			t.Fatalf("%q parsed", clouds)
		}
		if msg := err.Error(); strings.Contains(msg, secretMarker) || !strings.Contains(msg, want) {
			t.Errorf("message %q: want %q and no %q", msg, want, secretMarker)
		}
	}
	// The parser's own messages keep the cloud's name.
	_, _, _, err := parseIdentity(Identity{Key: "ns/c", CloudsYAML: []byte("clouds: {}\n"), CloudName: "other"})
	if err == nil || !strings.Contains(err.Error(), `cloud "other" not found`) {
		t.Errorf("missing cloud: %v", err)
	}
}

// Regression (found by FuzzParseIdentity): a cloud entry without its auth
// section, or null, made gophercloud's parser panic.
func TestParseIdentityWithoutAuth(t *testing.T) {
	for _, clouds := range []string{
		"clouds:\n openstack:",
		"clouds:\n  openstack:\n    region_name: RegionOne\n",
		"clouds:\n  openstack:\n    auth:\n    region_name: RegionOne\n",
	} {
		_, _, _, err := parseIdentity(Identity{Key: "ns/c", CloudsYAML: []byte(clouds), CloudName: "openstack"})
		if err == nil || !strings.Contains(err.Error(), `cloud "openstack": the cloud has no auth section`) {
			t.Errorf("%q: %v", clouds, err)
		}
	}
}
