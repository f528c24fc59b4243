package localenv

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const planted = "Pl4nted-s3cret-Value_0123"

func TestScannerFindsPlantedSecret(t *testing.T) {
	s := NewScanner([]Secret{{Name: "cloud password", Value: planted}, {Name: "bmc password", Value: "e2e"}})
	if got := s.Skipped(); len(got) != 1 || got[0] != "bmc password" {
		t.Errorf("Skipped() = %v, want [bmc password]: a 3-byte value cannot be told from a word", got)
	}
	if s.Secrets() != 1 {
		t.Errorf("Secrets() = %d, want 1", s.Secrets())
	}
	cloudsYAML := "clouds:\n  local:\n    auth:\n      password: " + planted + "\n"
	cases := map[string]string{
		"plain log line":      `{"level":"info","msg":"authenticating","password":"` + planted + `"}`,
		"base64 alone":        base64.StdEncoding.EncodeToString([]byte(planted)),
		"base64url alone":     base64.URLEncoding.EncodeToString([]byte(planted)),
		"inside a long line":  strings.Repeat("x", 200000) + planted,
		"docker auth, user a": `{"auths":{"r":{"auth":"` + base64.StdEncoding.EncodeToString([]byte("a:"+planted)) + `"}}}`,
	}
	// The secret inside an encoded clouds.yaml, at each of the three alignments.
	for pad := range 3 {
		cases["encoded clouds.yaml, pad "+string(rune('0'+pad))] = "OPENSTACK_CLOUD_YAML_B64=" +
			base64.StdEncoding.EncodeToString([]byte(strings.Repeat("#", pad)+cloudsYAML))
		cases["base64url inside, pad "+string(rune('0'+pad))] = base64.RawURLEncoding.EncodeToString([]byte(strings.Repeat("#", pad) + cloudsYAML))
	}
	for name, text := range cases {
		t.Run(name, func(t *testing.T) {
			log := "first line\n" + text + "\nlast line"
			lines, findings, err := s.Scan("pod/p", strings.NewReader(log))
			if err != nil {
				t.Fatal(err)
			}
			if lines != 3 {
				t.Errorf("lines = %d, want 3", lines)
			}
			if len(findings) == 0 {
				t.Fatalf("the planted secret in %q was not found", text[:min(len(text), 120)])
			}
			for _, f := range findings {
				if f.Line != 2 || f.Where != "pod/p" || f.Secret != "cloud password" {
					t.Errorf("finding %v, want line 2 of pod/p, cloud password", f)
				}
				if strings.Contains(f.String(), planted) {
					t.Errorf("the finding quotes the secret: %s", f)
				}
			}
		})
	}
}

func TestScannerCleanText(t *testing.T) {
	s := NewScanner([]Secret{{Name: "cloud password", Value: planted}})
	// Near misses: part of the value, and the encoding of another value.
	clean := strings.Join([]string{
		"password: ********",
		planted[:len(planted)-1],
		base64.StdEncoding.EncodeToString([]byte("Pl4nted-s3cret-Valu3_0123")),
		"e2e demo admin",
	}, "\n")
	lines, findings, err := s.Scan("events", strings.NewReader(clean))
	if err != nil {
		t.Fatal(err)
	}
	if lines != 4 || len(findings) != 0 {
		t.Errorf("lines %d findings %v, want 4 lines and no finding", lines, findings)
	}
}

func TestEmbeddedBase64(t *testing.T) {
	// Every fragment, for every prefix length, is found in the encoding of
	// prefix+value+suffix, and is at least 4/3 of the value less the edges.
	value := []byte(planted)
	for k := range 3 {
		frag := embeddedBase64(base64.RawStdEncoding, value, k)
		if len(frag) < len(value)*4/3-2 {
			t.Errorf("offset %d: fragment %d characters for a %d-byte value", k, len(frag), len(value))
		}
		for prefix := k; prefix < 12; prefix += 3 {
			for suffix := range 3 {
				text := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("p", prefix) + planted + strings.Repeat("s", suffix)))
				if !strings.Contains(text, frag) {
					t.Errorf("offset %d, prefix %d, suffix %d: fragment not in the encoding", k, prefix, suffix)
				}
			}
		}
	}
}

// TestScanLogFiles: log files are scanned, other files (a rendered cluster
// template holds the identity Secret by design) are not, and a missing
// directory has nothing.
func TestScanLogFiles(t *testing.T) {
	s := NewScanner([]Secret{{Name: "cloud password", Value: planted}})
	dir := t.TempDir()
	write := func(name, content string) {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	encoded := base64.StdEncoding.EncodeToString([]byte("clouds:\n  c:\n    auth:\n      password: " + planted + "\n"))
	write("mgmt/logs/ns/pod/manager.log", "one\ntwo "+encoded+"\n")
	write("mgmt/logs/ns/pod/manager-log-metadata.json", planted)
	write("qs/qs-cluster-template.yaml", "  clouds.yaml: "+encoded+"\n")
	files, lines, findings, err := s.ScanLogFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	if files != 1 || lines != 2 || len(findings) == 0 {
		t.Fatalf("files %d lines %d findings %v, want the one log file, 2 lines, the secret found", files, lines, findings)
	}
	for _, f := range findings {
		if !strings.HasSuffix(f.Where, "manager.log") || f.Line != 2 {
			t.Errorf("finding %v, want line 2 of manager.log", f)
		}
	}
	if files, _, _, err := s.ScanLogFiles(filepath.Join(dir, "missing")); err != nil || files != 0 {
		t.Errorf("missing directory: %d files, %v", files, err)
	}
}

// TestScannerFindsRegistryAuth: the build registry's credentials are found
// in the forms a pull or push Secret takes: the docker config in a log
// line, the Secret itself dumped (its data is base64 of that config, so the
// auth field is encoded twice), and the password alone.
func TestScannerFindsRegistryAuth(t *testing.T) {
	const user, pass = "ocp-capi", "0123456789abcdef0123456789abcdef"
	s := NewScanner(RegistrySecrets("registry", user, pass))
	if len(s.Skipped()) != 0 || s.Secrets() != 3 {
		t.Fatalf("Secrets() = %d, Skipped() = %v, want 3 and none", s.Secrets(), s.Skipped())
	}
	config := `{"auths":{"10.0.0.1:5000":{"auth":"` + base64.StdEncoding.EncodeToString([]byte(user+":"+pass)) + `"}}}`
	for pad := range 3 {
		cfg := strings.Repeat(" ", pad) + config
		for name, text := range map[string]string{
			"docker config":         cfg,
			"Secret as JSON":        `{"kind":"Secret","type":"kubernetes.io/dockerconfigjson","data":{".dockerconfigjson":"` + base64.StdEncoding.EncodeToString([]byte(cfg)) + `"}}`,
			"password in a message": "login to registry with password " + pass + " failed",
		} {
			_, findings, err := s.Scan("pod/p", strings.NewReader(text))
			if err != nil {
				t.Fatal(err)
			}
			if len(findings) == 0 {
				t.Errorf("%s (pad %d): the registry credentials were not found", name, pad)
			}
			for _, f := range findings {
				if strings.Contains(f.String(), pass) {
					t.Errorf("the finding quotes the password: %s", f)
				}
			}
		}
	}
	// Without the auth field as a secret of its own, the dumped Secret
	// (auth encoded twice) is not found: that form is why it is one.
	s2 := NewScanner(RegistrySecrets("registry", user, pass)[:2])
	dumped := base64.StdEncoding.EncodeToString([]byte(config))
	if _, findings, _ := s2.Scan("pod/p", strings.NewReader(dumped)); len(findings) != 0 {
		t.Errorf("found the twice-encoded auth without the auth field secret: %v", findings)
	}
}
