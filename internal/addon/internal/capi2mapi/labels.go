package capi2mapi

import (
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/ocp-capi/ocp-capi/internal/addon/internal/mapi2capi"
	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
)

// capiKeyPart marks the labels and annotations that are CAPI's bookkeeping
// (cluster name, MachineSet name, pause, hooks...): none is copied to MAPI.
const capiKeyPart = "cluster.x-k8s.io/"

// syncKeyPrefix marks the sync controller's own bookkeeping.
const syncKeyPrefix = "sync.machine.openshift.io/"

// convertLabels turns CAPI labels into MAPI ones, the inverse of
// mapi2capi's: node-role.kubernetes.io/<r> becomes the role and type labels
// <r> (for a second role label, the label is kept as it is); CAPI's labels
// are dropped.
func convertLabels(in map[string]string) map[string]string {
	if len(in) == 0 {
		return nil
	}
	out := map[string]string{}
	role := ""
	for _, k := range slices.Sorted(maps.Keys(in)) {
		v := in[k]
		switch {
		case strings.Contains(k, capiKeyPart) || strings.HasPrefix(k, syncKeyPrefix):
		case strings.HasPrefix(k, clusterv1.NodeRoleLabelPrefix+"/") && v == "" && role == "":
			role = strings.TrimPrefix(k, clusterv1.NodeRoleLabelPrefix+"/")
			out[mapi2capi.MAPIMachineRoleLabel] = role
			out[mapi2capi.MAPIMachineTypeLabel] = role
		default:
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// convertAnnotations turns CAPI annotations into MAPI ones: CAPI's
// delete-machine annotation becomes MAPI's, the pause and CAPI's other
// annotations are dropped.
func convertAnnotations(in map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range in {
		switch {
		case k == clusterv1.DeleteMachineAnnotation:
			out[mapi2capi.MAPIDeleteMachineAnnotation] = v
		case strings.Contains(k, capiKeyPart) || strings.HasPrefix(k, syncKeyPrefix):
		default:
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// machineMetadata splits the labels and annotations of a CAPI machine (or
// machine template) into MAPI's three places: the machine's own metadata,
// what MAPI puts on the Node (spec.metadata: the labels and annotations
// CAPI copies to the Node, besides the role), and the lifecycle hooks.
func machineMetadata(labels, annotations map[string]string) (l, a map[string]string, node mapiv1beta1.ObjectMeta, hooks mapiv1beta1.LifecycleHooks) {
	l = map[string]string{}
	var roles []string
	for k, v := range labels {
		switch {
		case strings.HasPrefix(k, clusterv1.NodeRoleLabelPrefix+"/") && v == "":
			roles = append(roles, k)
		case strings.HasPrefix(k, "node-restriction.kubernetes.io/") || nodeDomain(k, clusterv1.ManagedNodeLabelDomain):
			if node.Labels == nil {
				node.Labels = map[string]string{}
			}
			node.Labels[k] = v
		default:
			l[k] = v
		}
	}
	slices.Sort(roles)
	for i, k := range roles {
		if i == 0 {
			l[k] = "" // the role, through convertLabels
			continue
		}
		if node.Labels == nil {
			node.Labels = map[string]string{}
		}
		node.Labels[k] = ""
	}
	a = map[string]string{}
	for k, v := range annotations {
		switch {
		case strings.HasPrefix(k, clusterv1.PreDrainDeleteHookAnnotationPrefix+"/"):
			hooks.PreDrain = append(hooks.PreDrain, mapiv1beta1.LifecycleHook{Name: strings.TrimPrefix(k, clusterv1.PreDrainDeleteHookAnnotationPrefix+"/"), Owner: v})
		case strings.HasPrefix(k, clusterv1.PreTerminateDeleteHookAnnotationPrefix+"/"):
			hooks.PreTerminate = append(hooks.PreTerminate, mapiv1beta1.LifecycleHook{Name: strings.TrimPrefix(k, clusterv1.PreTerminateDeleteHookAnnotationPrefix+"/"), Owner: v})
		case nodeDomain(k, clusterv1.ManagedNodeAnnotationDomain):
			if node.Annotations == nil {
				node.Annotations = map[string]string{}
			}
			node.Annotations[k] = v
		default:
			a[k] = v
		}
	}
	byName := func(x, y mapiv1beta1.LifecycleHook) int { return strings.Compare(x.Name, y.Name) }
	slices.SortFunc(hooks.PreDrain, byName)
	slices.SortFunc(hooks.PreTerminate, byName)
	return convertLabels(l), convertAnnotations(a), node, hooks
}

// nodeDomain tells whether key's prefix is domain or a subdomain of it.
func nodeDomain(key, domain string) bool {
	d, _, ok := strings.Cut(key, "/")
	return ok && (d == domain || strings.HasSuffix(d, "."+domain))
}

// convertTaints turns CAPI machine taints into MAPI's: MAPI keeps its taints
// on the Node for the machine's life, which is CAPI's Always propagation.
func convertTaints(in []clusterv1.MachineTaint, p *field.Path, r *report) []corev1.Taint {
	var out []corev1.Taint
	for i, t := range in {
		if t.Propagation != clusterv1.MachineTaintPropagationAlways {
			r.fail(field.NotSupported(p.Index(i).Child("propagation"), t.Propagation,
				[]string{string(clusterv1.MachineTaintPropagationAlways)}))
			continue
		}
		out = append(out, corev1.Taint{Key: t.Key, Value: t.Value, Effect: t.Effect})
	}
	return out
}
