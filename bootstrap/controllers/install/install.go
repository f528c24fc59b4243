// Package install finds a cluster's assisted installation: the hive
// ClusterDeployment labelled with the cluster's name (the control-plane
// provider makes it) and the AgentClusterInstall it refers to.
package install

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hivev1 "github.com/ocp-capi/ocp-capi/internal/consumed/hive/v1"
	hiveextv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/hiveext/v1beta1"
)

// Find returns the ClusterDeployment and AgentClusterInstall of the CAPI
// cluster named cluster in namespace. When either is missing, it is nil and
// the message says what is awaited.
func Find(ctx context.Context, c client.Reader, namespace, cluster string) (*hivev1.ClusterDeployment, *hiveextv1beta1.AgentClusterInstall, string) {
	cds := &hivev1.ClusterDeploymentList{}
	if err := c.List(ctx, cds, client.InNamespace(namespace), client.MatchingLabels{clusterv1.ClusterNameLabel: cluster}); err != nil {
		return nil, nil, fmt.Sprintf("cannot list ClusterDeployments: %v", err)
	}
	switch len(cds.Items) {
	case 0:
		return nil, nil, fmt.Sprintf("waiting for a ClusterDeployment labelled %s=%s in namespace %s (the control-plane provider creates it)",
			clusterv1.ClusterNameLabel, cluster, namespace)
	case 1:
	default:
		return nil, nil, fmt.Sprintf("%d ClusterDeployments are labelled %s=%s in namespace %s; there must be exactly one",
			len(cds.Items), clusterv1.ClusterNameLabel, cluster, namespace)
	}
	cd := &cds.Items[0]
	ref := cd.Spec.ClusterInstallRef
	if ref == nil || ref.Kind != "AgentClusterInstall" || ref.Name == "" {
		return cd, nil, fmt.Sprintf("waiting for ClusterDeployment %s to refer to an AgentClusterInstall (spec.clusterInstallRef)", cd.Name)
	}
	aci := &hiveextv1beta1.AgentClusterInstall{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: cd.Namespace, Name: ref.Name}, aci); err != nil {
		return cd, nil, fmt.Sprintf("waiting for AgentClusterInstall %s: %v", ref.Name, err)
	}
	return cd, aci, ""
}
