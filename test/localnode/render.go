package localnode

import (
	"bytes"
	"encoding/json"
	"strconv"
	"text/template"

	"sigs.k8s.io/yaml"
)

// CNIBinDir is where Debian's containernetworking-plugins puts the plugins.
const CNIBinDir = "/usr/lib/cni"

// containerdTemplate is containerd 1.6's configuration (version 2). Values
// are inserted quoted (Go quoting is a valid TOML basic string for paths).
var containerdTemplate = template.Must(template.New("containerd").Funcs(template.FuncMap{"q": strconv.Quote}).Parse(
	`# Rendered by mgmt (test/localnode); rewritten at every start.
version = 2
root = {{q .Root}}
state = {{q .State}}

[grpc]
  address = {{q .Socket}}

[ttrpc]
  address = {{q .TTRPCSocket}}

[debug]
  address = ""

[metrics]
  address = ""

[plugins]
  [plugins."io.containerd.grpc.v1.cri"]
    sandbox_image = {{q .SandboxImage}}
    enable_cdi = false
    # Pod network namespaces under our state dir, not /var/run/netns.
    netns_mounts_under_state_dir = true
    # No CAP_SYS_RESOURCE here: runc cannot lower oom_score_adj (the pause
    # container asks for -998) and every sandbox would fail with "can't get
    # final child's PID from pipe: EOF". Clamp to containerd's own score.
    restrict_oom_score_adj = true
    [plugins."io.containerd.grpc.v1.cri".containerd]
      snapshotter = "overlayfs"
      default_runtime_name = "runc"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"
        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
          SystemdCgroup = false
          # runc's state under our state dir, not /run/containerd/runc.
          Root = {{q .RuncRoot}}
    [plugins."io.containerd.grpc.v1.cri".cni]
      bin_dir = {{q .CNIBinDir}}
      conf_dir = {{q .CNIConfDir}}
      max_conf_num = 1
  [plugins."io.containerd.internal.v1.opt"]
    path = {{q .Opt}}
`))

// ContainerdConfig renders containerd's config.toml.
func ContainerdConfig(l Layout, sandboxImage string) ([]byte, error) {
	var b bytes.Buffer
	err := containerdTemplate.Execute(&b, map[string]string{
		"Root":         l.ContainerdRoot(),
		"State":        l.ContainerdState(),
		"Socket":       l.ContainerdSocket(),
		"TTRPCSocket":  l.ContainerdSocket() + ".ttrpc",
		"SandboxImage": sandboxImage,
		"RuncRoot":     l.RuncRoot(),
		"CNIBinDir":    CNIBinDir,
		"CNIConfDir":   l.CNIConfDir(),
		"Opt":          l.ContainerdOpt(),
	})
	return b.Bytes(), err
}

// KubeletConfig renders the KubeletConfiguration.
func KubeletConfig(i Instance, l Layout) ([]byte, error) {
	pki := l.PKIDir()
	cfg := map[string]any{
		"apiVersion":         "kubelet.config.k8s.io/v1beta1",
		"kind":               "KubeletConfiguration",
		"address":            i.NodeIP(),
		"port":               10250,
		"readOnlyPort":       0,
		"healthzBindAddress": "127.0.0.1",
		"healthzPort":        10248,
		"authentication": map[string]any{
			"anonymous": map[string]any{"enabled": false},
			"webhook":   map[string]any{"enabled": true},
			"x509":      map[string]any{"clientCAFile": pki + "/ca.crt"},
		},
		"authorization":     map[string]any{"mode": "Webhook"},
		"tlsCertFile":       pki + "/kubelet.crt",
		"tlsPrivateKeyFile": pki + "/kubelet.key",
		// containerd 1.6 does not implement RuntimeConfig, so the kubelet
		// cannot ask it for the driver and uses this one.
		"cgroupDriver": "cgroupfs",
		"cgroupRoot":   i.CgroupRoot(),
		// This machine runs cgroup v1; v1beta1 defaults to refusing it.
		"failCgroupV1":             false,
		"failSwapOn":               false,
		"containerRuntimeEndpoint": "unix://" + l.ContainerdSocket(),
		"clusterDNS":               []string{DNSServiceIP},
		"clusterDomain":            ClusterDomain,
		"resolvConf":               l.ResolvConf(),
		"podCIDR":                  i.PodCIDR(),
		"maxPods":                  110,
		"serializeImagePulls":      false,
		// Images are imported, not pulled: garbage-collecting one would
		// lose it for good.
		"imageGCHighThresholdPercent": 100,
		"evictionHard": map[string]string{
			"memory.available":  "100Mi",
			"nodefs.available":  "1%",
			"imagefs.available": "1%",
			"nodefs.inodesFree": "1%",
		},
		"rotateCertificates":            false,
		"serverTLSBootstrap":            false,
		"staticPodPath":                 "",
		"volumePluginDir":               l.KubeletRoot() + "/volume-plugins",
		"podLogsDir":                    l.PodLogs(),
		"localStorageCapacityIsolation": true,
	}
	return yaml.Marshal(cfg)
}

// KubeProxyConfig renders the KubeProxyConfiguration (iptables mode, in the
// node's namespace).
func KubeProxyConfig(i Instance, l Layout) ([]byte, error) {
	cfg := map[string]any{
		"apiVersion":         "kubeproxy.config.k8s.io/v1alpha1",
		"kind":               "KubeProxyConfiguration",
		"clientConnection":   map[string]any{"kubeconfig": l.ComponentKubeconfig("kube-proxy")},
		"mode":               "iptables",
		"clusterCIDR":        i.PodCIDR(),
		"hostnameOverride":   i.NodeName(),
		"bindAddress":        i.NodeIP(),
		"healthzBindAddress": "127.0.0.1:10256",
		"metricsBindAddress": "127.0.0.1:10249",
		// nf_conntrack_max is global and may only be set from the initial
		// namespace; 0 leaves it alone.
		"conntrack":         map[string]any{"maxPerCore": 0},
		"nodePortAddresses": []string{"primary"},
	}
	return yaml.Marshal(cfg)
}

// CNIConfig renders the bridge network's conflist. host-local keeps its
// allocations under the state dir; libcni's own cache
// (/var/lib/cni/results/<network>-*) cannot be moved in containerd 1.6 and
// is removed by `down`.
func CNIConfig(i Instance, l Layout) ([]byte, error) {
	cfg := map[string]any{
		"cniVersion": "1.0.0",
		"name":       i.CNINetwork(),
		"plugins": []any{
			map[string]any{
				"type":        "bridge",
				"bridge":      i.PodBridge(),
				"isGateway":   true,
				"ipMasq":      true,
				"hairpinMode": true,
				"ipam": map[string]any{
					"type":    "host-local",
					"ranges":  [][]map[string]string{{{"subnet": i.PodCIDR(), "gateway": i.PodGateway()}}},
					"routes":  []map[string]string{{"dst": "0.0.0.0/0"}},
					"dataDir": l.IPAMDir(),
				},
			},
			map[string]any{"type": "portmap", "capabilities": map[string]bool{"portMappings": true}},
		},
	}
	return json.MarshalIndent(cfg, "", "  ")
}

// ResolvConf is the kubelet's resolvConf: pods with dnsPolicy Default (and
// CoreDNS itself) get it. The namespace has no way out, so the only server
// is the cluster's own.
func ResolvConf() []byte {
	return []byte("nameserver " + DNSServiceIP + "\nsearch default.svc." + ClusterDomain + " svc." + ClusterDomain + " " + ClusterDomain + "\noptions ndots:5\n")
}
