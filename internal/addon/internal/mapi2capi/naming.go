package mapi2capi

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strings"
)

// maxNameLength is the longest DNS subdomain name, which object names are.
const maxNameLength = 253

// maxLabelValueLength is the longest label value.
const maxLabelValueLength = 63

// hashSuffixLength is "-" plus 8 hex digits.
const hashSuffixLength = 9

// TemplateName names the infrastructure machine template of MachineSet
// msName whose spec is spec: msName, a dash, and the FNV-1a 32-bit hash of
// json.Marshal(spec) as 8 lower-case hex digits. encoding/json writes struct
// fields in declaration order and map keys sorted, so the name depends on
// the spec's content only. A name too long for a hash suffix is shortened.
func TemplateName(msName string, spec any) (string, error) {
	raw, err := json.Marshal(spec)
	if err != nil {
		return "", fmt.Errorf("encoding the template spec to name it: %w", err)
	}
	return fmt.Sprintf("%s-%08x", trimName(msName, maxNameLength-hashSuffixLength, ".-"), fnv32a(raw)), nil
}

// LabelValue is the value of the label that ties a template to its
// MachineSet: the MachineSet's name, or, if it is longer than a label value
// may be, its first 54 characters, a dash and the FNV-1a hash of the whole
// name. The sync controller lists a MachineSet's templates by it.
func LabelValue(msName string) string {
	if len(msName) <= maxLabelValueLength {
		return msName
	}
	return fmt.Sprintf("%s-%08x", trimName(msName, maxLabelValueLength-hashSuffixLength, "-_."), fnv32a([]byte(msName)))
}

// trimName cuts s to at most n bytes and drops trailing characters of cut,
// which may not end a name.
func trimName(s string, n int, cut string) string {
	if len(s) > n {
		s = s[:n]
	}
	return strings.TrimRight(s, cut)
}

func fnv32a(b []byte) uint32 {
	h := fnv.New32a()
	_, _ = h.Write(b) // a hash.Hash never fails to write
	return h.Sum32()
}
