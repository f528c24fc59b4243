package agentspec

import (
	"encoding/base64"
	"encoding/json"
	"path"
	"strings"
)

// Defaults of the bootstrap command paths: CAPOA's, so that hosts and
// scripts that look there keep working.
const (
	DefaultSentinelDir = "/var/lib/capoa"
	DefaultKubeconfig  = "/var/lib/kubelet/kubeconfig"
	// KubeletEnvPath is read by OpenShift's kubelet unit; KUBELET_PROVIDERID
	// in it becomes kubelet's --provider-id.
	KubeletEnvPath = "/etc/kubernetes/kubelet-env"
)

// The Ignition 3.1 subset the overrides use. assisted-service merges an
// Agent's ignitionConfigOverrides into the host's install ignition.
type ignConfig struct {
	Ignition ignMeta     `json:"ignition"`
	Storage  *ignStorage `json:"storage,omitempty"`
	Systemd  *ignSystemd `json:"systemd,omitempty"`
}

type ignMeta struct {
	Version string `json:"version"`
}

type ignStorage struct {
	Files []ignFile `json:"files"`
}

type ignFile struct {
	Path      string      `json:"path"`
	Mode      int         `json:"mode"`
	Overwrite bool        `json:"overwrite"`
	Contents  ignContents `json:"contents"`
}

type ignContents struct {
	Source string `json:"source"`
}

type ignSystemd struct {
	Units []ignUnit `json:"units"`
}

type ignUnit struct {
	Name     string `json:"name"`
	Enabled  bool   `json:"enabled"`
	Contents string `json:"contents"`
}

func dataURL(content string) string {
	return "data:text/plain;charset=utf-8;base64," + base64.StdEncoding.EncodeToString([]byte(content))
}

// IgnitionInput is what goes into an Agent's ignitionConfigOverrides.
type IgnitionInput struct {
	// ProviderID for kubelet; empty for none.
	ProviderID string
	// PreCommands and PostCommands are run once around kubelet's first start.
	PreCommands, PostCommands []string
	// SentinelDir and Kubeconfig default to DefaultSentinelDir and
	// DefaultKubeconfig.
	SentinelDir, Kubeconfig string
}

// IgnitionOverride is the Ignition config (JSON) for in, or "" when there is
// nothing to override. It is deterministic, so that an unchanged input
// yields an unchanged Agent.
func IgnitionOverride(in IgnitionInput) (string, error) {
	if in.ProviderID == "" && len(in.PreCommands) == 0 && len(in.PostCommands) == 0 {
		return "", nil
	}
	sentinels := in.SentinelDir
	if sentinels == "" {
		sentinels = DefaultSentinelDir
	}
	kubeconfig := in.Kubeconfig
	if kubeconfig == "" {
		kubeconfig = DefaultKubeconfig
	}
	cfg := ignConfig{Ignition: ignMeta{Version: "3.1.0"}}
	var files []ignFile
	var units []ignUnit
	if in.ProviderID != "" {
		files = append(files, ignFile{Path: KubeletEnvPath, Mode: 0o644, Overwrite: true,
			Contents: ignContents{Source: dataURL("KUBELET_PROVIDERID=" + in.ProviderID + "\n")}})
	}
	for _, phase := range []struct {
		name     string
		commands []string
		unit     func(script, sentinel string) string
	}{
		{"pre-bootstrap", in.PreCommands, func(script, sentinel string) string {
			return "[Unit]\nDescription=Run the preBootstrapCommands once, before kubelet\n" +
				"Before=kubelet.service\nConditionPathExists=!" + sentinel + "\n\n" +
				"[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=" + script + "\n\n" +
				"[Install]\nWantedBy=multi-user.target\n"
		}},
		{"post-bootstrap", in.PostCommands, func(script, sentinel string) string {
			return "[Unit]\nDescription=Run the postBootstrapCommands once, after kubelet\n" +
				"After=kubelet.service\nWants=kubelet.service\nConditionPathExists=!" + sentinel + "\n\n" +
				"[Service]\nType=oneshot\nRemainAfterExit=yes\nTimeoutStartSec=0\n" +
				"Environment=KUBECONFIG=" + kubeconfig + "\n" +
				"ExecStartPre=/bin/sh -c 'until [ -f " + kubeconfig + " ]; do sleep 5; done'\n" +
				"ExecStart=" + script + "\n\n" +
				"[Install]\nWantedBy=multi-user.target\n"
		}},
	} {
		if len(phase.commands) == 0 {
			continue
		}
		script := "/usr/local/bin/capoa-" + phase.name + ".sh"
		sentinel := path.Join(sentinels, phase.name+".done")
		// The sentinel is written only when every command succeeded, so a
		// failure is retried on the next boot.
		body := "#!/bin/bash\nset -euo pipefail\n" + strings.Join(phase.commands, "\n") +
			"\nmkdir -p " + sentinels + "\ntouch " + sentinel + "\n"
		files = append(files, ignFile{Path: script, Mode: 0o755, Overwrite: true, Contents: ignContents{Source: dataURL(body)}})
		units = append(units, ignUnit{Name: "capoa-" + phase.name + ".service", Enabled: true, Contents: phase.unit(script, sentinel)})
	}
	if len(files) > 0 {
		cfg.Storage = &ignStorage{Files: files}
	}
	if len(units) > 0 {
		cfg.Systemd = &ignSystemd{Units: units}
	}
	out, err := json.Marshal(cfg)
	if err != nil {
		return "", err
	}
	return string(out), nil
}
