package localnode

import (
	"net/url"
	"os"
	"sort"
	"strconv"

	"sigs.k8s.io/yaml"
)

// OpenStackPorts are the API ports of the local OpenStack (hack/openstack/up.sh
// registers its catalog on 127.0.0.1 with these): keystone, nova, cinder,
// placement, glance, neutron, octavia.
var OpenStackPorts = []int{5000, 8774, 8776, 8778, 9292, 9696, 9876}

// DefaultHostPorts are the ports forwarded when --forward-host-ports is not
// given: the local OpenStack's, plus the port of every auth_url in
// clouds.yaml (which may name a keystone elsewhere on loopback).
func DefaultHostPorts(cloudsYAML []byte) []int {
	set := map[int]bool{}
	for _, p := range OpenStackPorts {
		set[p] = true
	}
	for _, p := range cloudsAuthPorts(cloudsYAML) {
		set[p] = true
	}
	out := make([]int, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Ints(out)
	return out
}

// cloudsAuthPorts returns the ports of the loopback auth URLs in a
// clouds.yaml; anything unreadable gives none.
func cloudsAuthPorts(data []byte) []int {
	var f struct {
		Clouds map[string]struct {
			Auth struct {
				AuthURL string `json:"auth_url"`
			} `json:"auth"`
		} `json:"clouds"`
	}
	if len(data) == 0 || yaml.Unmarshal(data, &f) != nil {
		return nil
	}
	var out []int
	for _, c := range f.Clouds {
		u, err := url.Parse(c.Auth.AuthURL)
		if err != nil || (u.Hostname() != "127.0.0.1" && u.Hostname() != "localhost") {
			continue
		}
		port := u.Port()
		if port == "" {
			port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
		}
		if p, err := strconv.Atoi(port); err == nil && p > 0 {
			out = append(out, p)
		}
	}
	return out
}

// ResolveHostPorts turns the flag into the port list: "default" (the
// OpenStack ports and clouds.yaml's), "none", or a comma-separated list.
func ResolveHostPorts(flag, cloudsPath string) ([]int, error) {
	var ports []int
	switch flag {
	case "", "default":
		data, _ := os.ReadFile(cloudsPath)
		ports = DefaultHostPorts(data)
	case "none":
		return nil, nil
	default:
		var err error
		if ports, err = ParsePorts(flag); err != nil {
			return nil, err
		}
	}
	return ports, CheckHostPorts(ports)
}
