package localenv

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

const components = `apiVersion: v1
kind: Namespace
metadata:
  name: ocp-capi-infrastructure-system
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: ocp-capi-infrastructure-controller-manager
  namespace: ocp-capi-infrastructure-system
spec:
  replicas: 1
  template:
    spec:
      containers:
      - args:
        - --namespace
        - ${OCP_CAPI_INFRASTRUCTURE_WATCH_NAMESPACE:=""}
        name: manager
        securityContext:
          runAsNonRoot: true
      serviceAccountName: ocp-capi-infrastructure-manager
      terminationGracePeriodSeconds: 10
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: other
  serviceAccountName: not-a-pod-spec
`

func TestFitInfrastructureComponents(t *testing.T) {
	got, err := FitInfrastructureComponents([]byte(components))
	if err != nil {
		t.Fatal(err)
	}
	d, err := ComponentsDeployment(got)
	if err != nil {
		t.Fatal(err)
	}
	spec := d.Spec.Template.Spec
	if !spec.HostNetwork || spec.DNSPolicy != corev1.DNSClusterFirstWithHostNet {
		t.Errorf("hostNetwork %v, dnsPolicy %q: want true, %q", spec.HostNetwork, spec.DNSPolicy, corev1.DNSClusterFirstWithHostNet)
	}
	if spec.ServiceAccountName != "ocp-capi-infrastructure-manager" || spec.Containers[0].Args[1] != `${OCP_CAPI_INFRASTRUCTURE_WATCH_NAMESPACE:=""}` {
		t.Errorf("the rest of the pod spec changed: %+v", spec)
	}
	// Only the two lines are added; clusterctl's variables keep their text.
	back := strings.Replace(string(got), "      hostNetwork: true\n      dnsPolicy: ClusterFirstWithHostNet\n", "", 1)
	if back != components {
		t.Errorf("more than the two lines changed:\n%s", got)
	}
	again, err := FitInfrastructureComponents(got)
	if err != nil || string(again) != string(got) {
		t.Errorf("fitting twice changed the components again (err %v)", err)
	}
}

func TestFitInfrastructureComponentsRefusesAnUnknownShape(t *testing.T) {
	for name, in := range map[string]string{
		"no Deployment":         "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n",
		"no serviceAccountName": strings.Replace(components, "      serviceAccountName: ocp-capi-infrastructure-manager\n", "", 1),
		"two Deployments":       components + "---\n" + strings.SplitN(components, "---\n", 3)[1],
		"another indentation":   strings.Replace(components, "      serviceAccountName:", "        serviceAccountName:", 1),
	} {
		if _, err := FitInfrastructureComponents([]byte(in)); err == nil {
			t.Errorf("%s: fitted without an error", name)
		}
	}
}
