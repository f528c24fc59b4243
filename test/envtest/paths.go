package envtest

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
)

// ModulePath is this project's Go module.
const ModulePath = "github.com/ocp-capi/ocp-capi"

// FindRepoRoot walks up from the working directory (go test runs in the
// package's directory) to the go.mod of this module.
func FindRepoRoot() (string, error) {
	if r := os.Getenv("OCP_CAPI_ROOT"); r != "" {
		return r, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if isRoot(dir) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("cannot find the ocp-capi repository root above the working directory; set OCP_CAPI_ROOT")
		}
		dir = parent
	}
}

func isRoot(dir string) bool {
	f, err := os.Open(filepath.Join(dir, "go.mod"))
	if err != nil {
		return false
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); strings.HasPrefix(line, "module ") {
			return strings.TrimSpace(strings.TrimPrefix(line, "module ")) == ModulePath
		}
	}
	return false
}

// capiModule is the CAPI module whose core CRDs we install.
const capiModule = "sigs.k8s.io/cluster-api"

// CAPICoreCRDDir returns core/config/crd/bases inside the cluster-api module
// in the module cache, at the version go.mod pins. $OCP_CAPI_CAPI_CRDS
// overrides it. A built binary knows the version from its build info; a test
// binary carries no dependency list, so then `go mod download -json` in the
// repository root answers (and fetches the module from the proxy if the
// cache lacks it).
func CAPICoreCRDDir(root string) (string, error) {
	if d := os.Getenv("OCP_CAPI_CAPI_CRDS"); d != "" {
		return d, nil
	}
	var moduleDir string
	if version := capiVersionFromBuildInfo(); version != "" {
		cache, err := modCache()
		if err != nil {
			return "", err
		}
		moduleDir = filepath.Join(cache, escapeModulePath(capiModule)+"@"+version)
	}
	if !isDir(moduleDir) {
		cmd := exec.Command("go", "mod", "download", "-json", capiModule)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("locating %s with `go mod download` in %s: %w", capiModule, root, err)
		}
		var m struct{ Dir, Error string }
		if err := json.Unmarshal(out, &m); err != nil {
			return "", fmt.Errorf("parsing `go mod download -json` output: %w", err)
		}
		if m.Error != "" {
			return "", fmt.Errorf("go mod download %s: %s", capiModule, m.Error)
		}
		moduleDir = m.Dir
	}
	dir := filepath.Join(moduleDir, "core", "config", "crd", "bases")
	if !isDir(dir) {
		return "", fmt.Errorf("CAPI core CRDs not found at %s", dir)
	}
	return dir, nil
}

// capiVersionFromBuildInfo reads the cluster-api version from the binary's
// build info, or "" when it is not there. The api module is released in
// lockstep with the main module, so either tells the version.
func capiVersionFromBuildInfo() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var apiVersion string
	for _, d := range info.Deps {
		m := d
		if m.Replace != nil {
			m = m.Replace
		}
		switch d.Path {
		case capiModule:
			return m.Version
		case capiModule + "/api":
			apiVersion = m.Version
		}
	}
	return apiVersion
}

func modCache() (string, error) {
	if c := os.Getenv("GOMODCACHE"); c != "" {
		return c, nil
	}
	if out, err := exec.Command("go", "env", "GOMODCACHE").Output(); err == nil {
		if c := strings.TrimSpace(string(out)); c != "" {
			return c, nil
		}
	}
	if gp := os.Getenv("GOPATH"); gp != "" {
		return filepath.Join(strings.Split(gp, string(os.PathListSeparator))[0], "pkg", "mod"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, "go", "pkg", "mod"), nil
}

// escapeModulePath applies the module cache's case encoding: each upper-case
// letter becomes '!' followed by its lower-case form.
func escapeModulePath(p string) string {
	var b strings.Builder
	for _, r := range p {
		if r >= 'A' && r <= 'Z' {
			b.WriteByte('!')
			b.WriteRune(r + ('a' - 'A'))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
