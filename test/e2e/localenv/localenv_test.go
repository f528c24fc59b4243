package localenv

import (
	"encoding/base64"
	"net/url"
	"strconv"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
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

// The pods' workload kubeconfig names the Service that FitProviders makes in
// every management cluster (so that it survives clusterctl move), on the
// port whose endpoint is the node's forward of the workload API server.
func TestPodKubeconfigNamesTheWorkloadService(t *testing.T) {
	g := NewWithT(t)
	const port, nodeIP = 16443, "172.30.15.2"
	host := clientcmdapi.NewConfig()
	host.Clusters["envtest"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:16443", CertificateAuthorityData: []byte("ca")}
	host.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: "secret"}
	host.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "admin"}
	host.CurrentContext = "envtest"
	hostData, err := clientcmd.Write(*host)
	g.Expect(err).NotTo(HaveOccurred())

	podData, err := podKubeconfig(hostData, WorkloadServiceName, port)
	g.Expect(err).NotTo(HaveOccurred())
	pod, err := clientcmd.Load(podData)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(pod.Clusters).To(HaveLen(1))
	cl := pod.Clusters["envtest"]
	g.Expect(cl).NotTo(BeNil())
	g.Expect(cl.TLSServerName).To(Equal("localhost"), "the envtest certificate names localhost")
	g.Expect(cl.CertificateAuthorityData).To(Equal([]byte("ca")))
	g.Expect(pod.AuthInfos["admin"].Token).To(Equal("secret"))
	g.Expect(pod.CurrentContext).To(Equal("envtest"))

	u, err := url.Parse(cl.Server)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(u.Scheme).To(Equal("https"))
	g.Expect(u.Hostname()).To(Equal("workload-api.default.svc.cluster.local"))
	g.Expect(u.Port()).To(Equal(strconv.Itoa(port)))
	g.Expect(cl.Server).NotTo(ContainSubstring(nodeIP))

	// The Service FitProviders applies is the one the URL names.
	labels := strings.Split(u.Hostname(), ".")
	var svc *corev1.Service
	var slice *discoveryv1.EndpointSlice
	for _, o := range hostService(WorkloadServiceNamespace, WorkloadServiceName, nodeIP, port, port) {
		switch o := o.(type) {
		case *corev1.Service:
			svc = o
		case *discoveryv1.EndpointSlice:
			slice = o
		}
	}
	g.Expect(svc).NotTo(BeNil())
	g.Expect(slice).NotTo(BeNil())
	g.Expect(svc.Name).To(Equal(labels[0]))
	g.Expect(svc.Namespace).To(Equal(labels[1]))
	g.Expect(svc.Spec.Selector).To(BeEmpty(), "the endpoint is the node, not pods")
	g.Expect(svc.Spec.Ports).To(HaveLen(1))
	g.Expect(strconv.Itoa(int(svc.Spec.Ports[0].Port))).To(Equal(u.Port()))
	g.Expect(svc.Spec.Ports[0].TargetPort.IntValue()).To(Equal(port))
	g.Expect(slice.Namespace).To(Equal(svc.Namespace))
	g.Expect(slice.Labels).To(HaveKeyWithValue(discoveryv1.LabelServiceName, svc.Name))
	g.Expect(slice.Endpoints).To(HaveLen(1))
	g.Expect(slice.Endpoints[0].Addresses).To(ConsistOf(nodeIP))
	g.Expect(slice.Ports).To(HaveLen(1))
	g.Expect(*slice.Ports[0].Port).To(BeEquivalentTo(port))
	g.Expect(*slice.Ports[0].Name).To(Equal(svc.Spec.Ports[0].Name), "the slice's port must match the Service's port by name")
}

// A workload API server behind its own Service (several at once, the scale
// suite): the pods' kubeconfig names that Service, on the server's port.
func TestPodKubeconfigNamesItsOwnService(t *testing.T) {
	g := NewWithT(t)
	const port = 16461
	host := clientcmdapi.NewConfig()
	host.Clusters["envtest"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:16461"}
	hostData, err := clientcmd.Write(*host)
	g.Expect(err).NotTo(HaveOccurred())
	svcName := WorkloadServiceFor(port)
	g.Expect(svcName).NotTo(Equal(WorkloadServiceName), "not the shared Service of the other suites")
	podData, err := podKubeconfig(hostData, svcName, port)
	g.Expect(err).NotTo(HaveOccurred())
	pod, err := clientcmd.Load(podData)
	g.Expect(err).NotTo(HaveOccurred())
	u, err := url.Parse(pod.Clusters["envtest"].Server)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(u.Hostname()).To(Equal(svcName + ".default.svc.cluster.local"))
	g.Expect(u.Port()).To(Equal(strconv.Itoa(port)))
	svc := hostService(WorkloadServiceNamespace, svcName, "172.30.12.2", port, port)[0].(*corev1.Service)
	g.Expect(svc.Name).To(Equal(strings.Split(u.Hostname(), ".")[0]))
	g.Expect(svc.Spec.Ports[0].TargetPort.IntValue()).To(Equal(port))
}

// The assisted-service Service keeps its shape: port 443 (the URL the
// bootstrap provider is given has no port) to the simulator's host port.
func TestAssistedServiceShape(t *testing.T) {
	g := NewWithT(t)
	objs := hostService(BootstrapNamespace, "assisted-service", "172.30.12.2", 443, 16444)
	g.Expect(objs).To(HaveLen(2))
	svc := objs[0].(*corev1.Service)
	slice := objs[1].(*discoveryv1.EndpointSlice)
	g.Expect(svc.Namespace).To(Equal(BootstrapNamespace))
	g.Expect(svc.Spec.Ports[0].Port).To(BeEquivalentTo(443))
	g.Expect(svc.Spec.Ports[0].TargetPort.IntValue()).To(Equal(16444))
	g.Expect(slice.Name).To(Equal("assisted-service-host"))
	g.Expect(*slice.Ports[0].Port).To(BeEquivalentTo(16444))
}
