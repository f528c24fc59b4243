// Package assisted holds the checks of an OpenshiftAssistedConfigSpec that
// both providers apply: the bootstrap provider's webhook to configs and
// their templates, the control-plane provider's webhook to the spec it
// embeds (spec.openshiftAssistedConfigSpec). It also holds the syntax of the
// host variables those checks accept, with their resolution, so that what
// the webhooks admit and what the bootstrap provider resolves when it binds
// an Agent cannot drift apart. It is pure: no client, no I/O.
package assisted

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Host variables that nodeRegistration values may name. CAPOA, the
// provider this one replaces, resolved them on the host from the config
// drive's metadata; the bootstrap provider knows the host when it binds the
// Agent, and resolves them there (docs/bootstrap.md, "Host variables").
const (
	VarUUID            = "METADATA_UUID"
	VarName            = "METADATA_NAME"
	VarHostname        = "METADATA_HOSTNAME"
	VarLocalHostname   = "METADATA_LOCAL_HOSTNAME"
	VarMetal3Name      = "METADATA_METAL3_NAME"
	VarMetal3Namespace = "METADATA_METAL3_NAMESPACE"
)

// KnownVars are the variables the webhooks accept.
var KnownVars = []string{VarUUID, VarName, VarHostname, VarLocalHostname, VarMetal3Name, VarMetal3Namespace}

// Vars are the values of the host variables of one machine. A variable
// that does not apply to the host (a Metal3 name on OpenStack) is absent.
type Vars map[string]string

// References returns the variable names s refers to, as $NAME or ${NAME}
// (NAME: letters, digits and underscores, not starting with a digit), or an
// error for a malformed reference.
func References(s string) ([]string, error) {
	var out []string
	for i := 0; i < len(s); i++ {
		if s[i] != '$' {
			continue
		}
		name, end, err := parseRef(s, i)
		if err != nil {
			return nil, err
		}
		out = append(out, name)
		i = end - 1
	}
	return out, nil
}

// parseRef parses the reference starting at s[i] == '$' and returns the
// name and the index after it.
func parseRef(s string, i int) (string, int, error) {
	j := i + 1
	braced := j < len(s) && s[j] == '{'
	if braced {
		j++
	}
	start := j
	for j < len(s) && isNameByte(s[j], j == start) {
		j++
	}
	name := s[start:j]
	if name == "" {
		return "", 0, fmt.Errorf("%q: '$' at offset %d starts no variable name (write $NAME or ${NAME})", s, i)
	}
	if braced {
		if j >= len(s) || s[j] != '}' {
			return "", 0, fmt.Errorf("%q: ${%s is not closed with '}'", s, name)
		}
		j++
	}
	return name, j, nil
}

func isNameByte(b byte, first bool) bool {
	switch {
	case b == '_', b >= 'A' && b <= 'Z', b >= 'a' && b <= 'z':
		return true
	case b >= '0' && b <= '9':
		return !first
	}
	return false
}

// ValidateVars checks that s refers only to known variables.
func ValidateVars(s string) error {
	refs, err := References(s)
	if err != nil {
		return err
	}
	for _, r := range refs {
		if !slices.Contains(KnownVars, r) {
			return fmt.Errorf("unknown host variable $%s; known: $%s", r, strings.Join(KnownVars, ", $"))
		}
	}
	return nil
}

// Resolve replaces the variable references of s with their values. Double
// quotes are dropped, as the host's shell dropped them in CAPOA (whose
// example is openstack://"$METADATA_UUID"); none of the values these strings
// make (hostnames, label values, provider IDs) can hold one.
func (v Vars) Resolve(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"':
			continue
		case '$':
			name, end, err := parseRef(s, i)
			if err != nil {
				return "", err
			}
			value, ok := v[name]
			if !ok {
				return "", fmt.Errorf("host variable $%s has no value for this machine's host", name)
			}
			b.WriteString(value)
			i = end - 1
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String(), nil
}

// ParseLabel splits a kubeletExtraLabels entry key=value and checks the key.
func ParseLabel(l string) (string, string, error) {
	key, value, ok := strings.Cut(l, "=")
	if !ok {
		return "", "", fmt.Errorf("%q is not key=value", l)
	}
	if errs := validation.IsQualifiedName(key); len(errs) > 0 {
		return "", "", fmt.Errorf("key %q: %s", key, strings.Join(errs, "; "))
	}
	return key, value, nil
}
