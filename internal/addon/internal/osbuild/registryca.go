package osbuild

import (
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// RegistryCAConfigMapName is the optional ConfigMap in the build namespace
// with the CAs of private registries: one key per registry, <host> or
// <host>..<port> (OpenShift's format for image.config additionalTrustedCA,
// as a ConfigMap key cannot hold a colon), each a PEM bundle. The build pod
// gets them under /etc/containers/certs.d/<host[:port]>/ca.crt; the
// controller trusts them when it looks up or deletes images.
const RegistryCAConfigMapName = "machine-os-builder-registry-ca"

// RegistryCAs is the parsed RegistryCAConfigMapName.
type RegistryCAs struct {
	ConfigMap string
	// Keys are the ConfigMap's keys, sorted.
	Keys []string
	// PEM is each registry's (host[:port]) CA bundle.
	PEM map[string]string
}

// ParseRegistryCAs reads the registry CA ConfigMap; nil for none.
func ParseRegistryCAs(cm *corev1.ConfigMap) *RegistryCAs {
	if cm == nil || len(cm.Data) == 0 {
		return nil
	}
	out := &RegistryCAs{ConfigMap: cm.Name, PEM: map[string]string{}}
	for k, v := range cm.Data {
		if strings.TrimSpace(v) == "" {
			continue
		}
		out.Keys = append(out.Keys, k)
		out.PEM[RegistryHostOfCAKey(k)] = v
	}
	sort.Strings(out.Keys)
	return out
}

// RegistryHostOfCAKey turns a CA key into the registry it names:
// "host..5000" is "host:5000".
func RegistryHostOfCAKey(k string) string { return strings.Replace(k, "..", ":", 1) }
