package assisted

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
)

// IgnitionFile returns the content of the file at path in an Ignition
// config, its data URL decoded as Ignition decodes it, and whether the
// config has that file. The simulator reads the InfraEnv ID out of a
// discovery ignition with it; the e2e kubelet stand-in the provider ID out
// of an Agent's ignition overrides.
func IgnitionFile(config []byte, path string) (string, bool, error) {
	var cfg struct {
		Storage struct {
			Files []struct {
				Path     string `json:"path"`
				Contents struct {
					Source string `json:"source"`
				} `json:"contents"`
			} `json:"files"`
		} `json:"storage"`
	}
	if err := json.Unmarshal(config, &cfg); err != nil {
		return "", false, fmt.Errorf("reading the Ignition config: %w", err)
	}
	for _, f := range cfg.Storage.Files {
		if f.Path != path {
			continue
		}
		data, err := decodeDataURL(f.Contents.Source)
		if err != nil {
			return "", true, fmt.Errorf("%s: %w", path, err)
		}
		return data, true, nil
	}
	return "", false, nil
}

// decodeDataURL decodes an RFC 2397 data URL.
func decodeDataURL(s string) (string, error) {
	rest, ok := strings.CutPrefix(s, "data:")
	if !ok {
		return "", fmt.Errorf("not a data URL: %.40q", s)
	}
	meta, data, ok := strings.Cut(rest, ",")
	if !ok {
		return "", fmt.Errorf("data URL without a comma")
	}
	if strings.HasSuffix(meta, ";base64") {
		b, err := base64.StdEncoding.DecodeString(data)
		return string(b), err
	}
	return url.PathUnescape(data)
}

// envValue is the value of key in an environment file's content ("" when
// it is not set).
func envValue(content, key string) string {
	for _, line := range strings.Split(content, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), key+"="); ok {
			return v
		}
	}
	return ""
}

// EnvFileValue is the value of key in the environment file at path of an
// Ignition config; "" when the file or the key is missing.
func EnvFileValue(config []byte, path, key string) (string, error) {
	content, _, err := IgnitionFile(config, path)
	if err != nil {
		return "", err
	}
	return envValue(content, key), nil
}
