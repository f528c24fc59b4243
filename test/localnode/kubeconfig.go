package localnode

import (
	"fmt"
	"net"
	"strconv"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Kubeconfig renders a self-contained kubeconfig (certificates inline) for
// one client certificate of the PKI. Names carry the instance's name so that
// the kubeconfigs of two instances merge without clashes.
func Kubeconfig(i Instance, p *PKI, cert, server string) ([]byte, error) {
	kp, ok := p.Certs[cert]
	if !ok {
		return nil, fmt.Errorf("no certificate %q in the PKI", cert)
	}
	name := i.Name()
	user := name + "-" + cert
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: p.CA.CertPEM}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificateData: kp.CertPEM, ClientKeyData: kp.KeyPEM}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: user}
	cfg.CurrentContext = name
	return clientcmd.Write(*cfg)
}

// serverURL is https://host:port.
func serverURL(host string, port int) string {
	return "https://" + net.JoinHostPort(host, strconv.Itoa(port))
}

// AdminServer is the admin kubeconfig's server: the forward on the root
// namespace's loopback.
func (i Instance) AdminServer() string { return serverURL("127.0.0.1", i.APIPort) }

// componentKubeconfigs maps each component kubeconfig to its certificate
// and server. All of them run inside the node's namespace; the kubelet and
// kube-proxy use the node IP, as a kubelet on a real node would.
func componentKubeconfigs(i Instance) map[string][2]string {
	local := serverURL("127.0.0.1", APIServerPort)
	node := serverURL(i.NodeIP(), APIServerPort)
	return map[string][2]string{
		"controller-manager": {"controller-manager", local},
		"scheduler":          {"scheduler", local},
		"kubelet":            {"kubelet-client", node},
		"kube-proxy":         {"kube-proxy", node},
		// For clients run inside the node (nsenter --net=<state>/run/netns).
		"admin-in-node": {"admin", local},
	}
}
