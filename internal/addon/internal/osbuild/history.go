package osbuild

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
)

// ImageHistoryAnnotation is the pool annotation that records the images the
// controller published for the pool, newest first, as a JSON list of
// HistoryEntry. It is how an equivalent earlier build is found and reused,
// and which images are pruned from the registry: an image that falls off
// the list (beyond --build-image-retention) is deleted by digest once no
// pool refers to it.
const ImageHistoryAnnotation = "machineconfiguration.openshift.io/os-image-history"

// HistoryEntry is one published image.
type HistoryEntry struct {
	// ID is the build ID (Inputs.ID) the image was built for.
	ID string `json:"id"`
	// Image is <repo>@sha256:<digest>.
	Image string `json:"image"`
	// Config is the rendered MachineConfig the image was built from.
	Config string `json:"config"`
	// PushSecret is the Secret the image was pushed with, which deletes
	// it: the push secret may change (or its MachineOSConfig go) before
	// the image is pruned. Empty in entries written before it was
	// recorded.
	PushSecret string `json:"pushSecret,omitempty"`
}

// History is a pool's published images, newest first.
type History []HistoryEntry

// ParseHistory reads the annotation's value. A value that does not parse
// is treated as empty: the controller wrote it, and the worst outcome of
// forgetting it is a rebuild and an image left in the registry.
func ParseHistory(v string) History {
	var h History
	if strings.TrimSpace(v) == "" || json.Unmarshal([]byte(v), &h) != nil {
		return nil
	}
	return h
}

// String is the annotation's value ("" for an empty history).
func (h History) String() string {
	if len(h) == 0 {
		return ""
	}
	b, _ := json.Marshal(h)
	return string(b)
}

// Find returns the entry for build ID id, or nil.
func (h History) Find(id string) *HistoryEntry {
	for i := range h {
		if h[i].ID == id {
			return &h[i]
		}
	}
	return nil
}

// Push puts e first (replacing an entry with the same ID or image) and
// keeps at most keep entries, the current one included. It returns the new
// history and the entries that fell off, whose images are candidates for
// pruning: an entry replaced by a new image for its ID (a forced rebuild)
// falls off too.
func (h History) Push(e HistoryEntry, keep int) (History, History) {
	if keep < 1 {
		keep = 1
	}
	out := History{e}
	var dropped History
	for _, o := range h {
		switch {
		case o.Image == e.Image:
		case o.ID == e.ID:
			dropped = append(dropped, o)
		default:
			out = append(out, o)
		}
	}
	if len(out) > keep {
		dropped = append(out[keep:], dropped...)
		out = out[:keep]
	}
	return out, dropped
}

// ImageRef is a pushed image, by digest: Registry is host[:port], Repository
// the path within it.
type ImageRef struct {
	Registry, Repository, Digest string
}

func (r ImageRef) String() string { return r.Registry + "/" + r.Repository + "@" + r.Digest }

// ParseDigestedImage splits <registry>/<repository>@sha256:<hex>.
func ParseDigestedImage(s string) (ImageRef, error) {
	name, d, ok := strings.Cut(s, "@")
	if !ok || !ValidDigest(d) {
		return ImageRef{}, fmt.Errorf("%q is not <registry>/<repository>@sha256:<digest>", s)
	}
	host, repo, ok := strings.Cut(name, "/")
	if !ok || repo == "" || !strings.ContainsAny(host, ".:") && host != "localhost" {
		return ImageRef{}, fmt.Errorf("%q does not start with a registry host", s)
	}
	return ImageRef{Registry: host, Repository: repo, Digest: d}, nil
}

// Credentials are a registry user and password (or token).
type Credentials struct{ Username, Password string }

// CredentialsFor finds registry's credentials in a .dockerconfigjson: the
// entry named host[:port] (with or without a scheme or a path), by "auth"
// (base64 user:password) or "username"/"password". ok is false when none
// matches: the registry is then asked anonymously.
func CredentialsFor(dockerConfigJSON []byte, registry string) (Credentials, bool) {
	var cfg struct {
		Auths map[string]struct {
			Auth     string `json:"auth"`
			Username string `json:"username"`
			Password string `json:"password"`
		} `json:"auths"`
	}
	if json.Unmarshal(dockerConfigJSON, &cfg) != nil {
		return Credentials{}, false
	}
	for k, a := range cfg.Auths {
		host := strings.TrimPrefix(strings.TrimPrefix(k, "https://"), "http://")
		host, _, _ = strings.Cut(host, "/")
		if host != registry {
			continue
		}
		if a.Username != "" {
			return Credentials{a.Username, a.Password}, true
		}
		if u, p, ok := strings.Cut(decodeBase64(a.Auth), ":"); ok {
			return Credentials{u, p}, true
		}
	}
	return Credentials{}, false
}

func decodeBase64(s string) string {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return ""
	}
	return string(b)
}
