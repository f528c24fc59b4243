package localenv

import (
	"encoding/base64"
	"testing"

	. "github.com/onsi/gomega"
)

func TestKubeletProviderID(t *testing.T) {
	dataURL := func(s string) string {
		return "data:text/plain;charset=utf-8;base64," + base64.StdEncoding.EncodeToString([]byte(s))
	}
	// The shape bootstrap/internal/agentspec.IgnitionOverride writes.
	override := `{"ignition":{"version":"3.1.0"},"storage":{"files":[` +
		`{"path":"/usr/local/bin/capoa-pre-bootstrap.sh","mode":493,"overwrite":true,"contents":{"source":"` + dataURL("#!/bin/bash\n") + `"}},` +
		`{"path":"/etc/kubernetes/kubelet-env","mode":420,"overwrite":true,"contents":{"source":"` + dataURL("KUBELET_PROVIDERID=openstack:///0c6b\n") + `"}}]}}`
	for _, tc := range []struct {
		name, ignition, want string
		wantErr              bool
	}{
		{name: "no override", ignition: "", want: ""},
		{name: "provider ID", ignition: override, want: "openstack:///0c6b"},
		{name: "other files only", ignition: `{"ignition":{"version":"3.1.0"},"storage":{"files":[{"path":"/etc/motd","contents":{"source":"data:,hi"}}]}}`, want: ""},
		{name: "percent-encoded data URL", ignition: `{"storage":{"files":[{"path":"/etc/kubernetes/kubelet-env","contents":{"source":"data:,KUBELET_PROVIDERID=metal3%3A%2F%2Fns%2Fh%2Fm"}}]}}`, want: "metal3://ns/h/m"},
		{name: "not JSON", ignition: "{", wantErr: true},
		{name: "not a data URL", ignition: `{"storage":{"files":[{"path":"/etc/kubernetes/kubelet-env","contents":{"source":"https://x"}}]}}`, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got, err := kubeletProviderID(tc.ignition)
			if tc.wantErr {
				g.Expect(err).To(HaveOccurred())
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tc.want))
		})
	}
}

func TestClusterResources(t *testing.T) {
	g := NewWithT(t)
	all := []OSResource{
		{Kind: "network", ID: "n1", Name: "k8s-clusterapi-cluster-qs-abc-qs-abc"},
		{Kind: "network", ID: "n2", Name: "k8s-clusterapi-cluster-other-other"},
		{Kind: "server", ID: "s1", Name: "qs-abc-x1y2z"},
		{Kind: "security group", ID: "g1", Name: "default"},
		{Kind: "load balancer", ID: "lb1", Name: "k8s-clusterapi-cluster-qs-abc-qs-abc-kubeapi"},
		{Kind: "port", ID: "p1", Name: "octavia-lb-lb1"}, // VIP port of the cluster's load balancer
		{Kind: "port", ID: "p2", Name: "octavia-lb-lb9"}, // someone else's
		{Kind: "floating IP", ID: "f1", Name: "172.24.4.5", Description: "API of cluster qs-abc/qs-abc (ocp-capi)"},
		{Kind: "volume", ID: "v1", Name: "data", Tags: []string{"qs-abc"}},
		{Kind: "port", ID: "p3", Name: ""}, // unnamed, but recorded while the cluster ran
		{Kind: "port", ID: "p4", Name: ""}, // unnamed, unknown
	}
	known := ByKey([]OSResource{{Kind: "port", ID: "p3"}, {Kind: "load balancer", ID: "lb7"}})
	got := ClusterResources(all, "qs-abc", known)
	var ids []string
	for _, r := range got {
		ids = append(ids, r.Kind+"/"+r.ID)
	}
	g.Expect(ids).To(ConsistOf("network/n1", "server/s1", "load balancer/lb1", "port/p1", "floating IP/f1", "volume/v1", "port/p3"))

	// After deletion the load balancer is gone, but its VIP port is still
	// recognised through the recorded load balancer.
	recorded := ByKey(got)
	left := ClusterResources([]OSResource{{Kind: "port", ID: "p1", Name: "octavia-lb-lb1"}, {Kind: "port", ID: "p2", Name: "octavia-lb-lb9"}}, "qs-abc", recorded)
	g.Expect(left).To(HaveLen(1))
	g.Expect(left[0].ID).To(Equal("p1"))
	g.Expect(Kinds(got)).To(HaveKeyWithValue("port", 2))
}
