package localenv

import (
	"bytes"
	"fmt"
	"regexp"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"
)

var (
	// The pod spec's serviceAccountName line of a Deployment as kustomize
	// writes it (pod spec fields at six spaces).
	podServiceAccountLine = regexp.MustCompile(`(?m)^      serviceAccountName: .*$`)
	deploymentKind        = regexp.MustCompile(`(?m)^kind: Deployment$`)
)

// FitInfrastructureComponents returns the OpenStack provider's components
// (infrastructure-components.yaml) with its manager's pod in the node's
// network namespace (hostNetwork, see FitProviders). The e2e's clusterctl
// repository serves these, so that `clusterctl init` and `clusterctl
// upgrade apply` both install a manager that reaches the local OpenStack;
// a fit made after the install is lost when an upgrade replaces the
// Deployment. It edits the text, not parsed YAML: the components hold
// clusterctl variables such as ${X:=""} whose meaning a re-encoding would
// change.
func FitInfrastructureComponents(data []byte) ([]byte, error) {
	docs := bytes.Split(data, []byte("\n---\n"))
	found := 0
	for i, doc := range docs {
		if !deploymentKind.Match(doc) {
			continue
		}
		found++
		d, err := decodeDeployment(doc)
		if err != nil {
			return nil, err
		}
		if d.Spec.Template.Spec.HostNetwork {
			continue
		}
		if n := len(podServiceAccountLine.FindAll(doc, -1)); n != 1 {
			return nil, fmt.Errorf("the Deployment %s: want one pod-level serviceAccountName line to fit beside, found %d", d.Name, n)
		}
		docs[i] = podServiceAccountLine.ReplaceAll(doc, []byte("      hostNetwork: true\n      dnsPolicy: ClusterFirstWithHostNet\n$0"))
		fitted, err := decodeDeployment(docs[i])
		if err != nil {
			return nil, err
		}
		if !fitted.Spec.Template.Spec.HostNetwork {
			return nil, fmt.Errorf("the Deployment %s: hostNetwork did not land in the pod spec", d.Name)
		}
	}
	if found != 1 {
		return nil, fmt.Errorf("want one Deployment in the infrastructure components, found %d", found)
	}
	return bytes.Join(docs, []byte("\n---\n")), nil
}

// ComponentsDeployment is the one Deployment of a provider's components
// file, with clusterctl's variables left as they are.
func ComponentsDeployment(data []byte) (*appsv1.Deployment, error) {
	var out *appsv1.Deployment
	for _, doc := range bytes.Split(data, []byte("\n---\n")) {
		if !deploymentKind.Match(doc) {
			continue
		}
		if out != nil {
			return nil, fmt.Errorf("more than one Deployment in the components")
		}
		d, err := decodeDeployment(doc)
		if err != nil {
			return nil, err
		}
		out = d
	}
	if out == nil {
		return nil, fmt.Errorf("no Deployment in the components")
	}
	return out, nil
}

func decodeDeployment(doc []byte) (*appsv1.Deployment, error) {
	d := &appsv1.Deployment{}
	if err := yaml.Unmarshal(doc, d); err != nil {
		return nil, fmt.Errorf("reading the Deployment: %w", err)
	}
	return d, nil
}
