package machinesetsync

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
)

// request names the MAPI MachineSet called name.
func (r *Reconciler) request(name string) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: r.MAPINamespace, Name: name}}}
}

// mirrorToMachineSet maps a CAPI MachineSet to the MAPI one of its name.
func (r *Reconciler) mirrorToMachineSet(_ context.Context, o client.Object) []reconcile.Request {
	return r.request(o.GetName())
}

// templateToMachineSet maps a template to its MachineSet: by the
// created-for annotation, else the lookup label (the name itself when it
// is short enough), else an owning CAPI MachineSet.
func (r *Reconciler) templateToMachineSet(_ context.Context, o client.Object) []reconcile.Request {
	if name := o.GetAnnotations()[CreatedForAnnotation]; name != "" {
		return r.request(name)
	}
	for _, ref := range o.GetOwnerReferences() {
		if isMirrorRef(ref.APIVersion, ref.Kind) {
			return r.request(ref.Name)
		}
	}
	if name := o.GetLabels()[MachineSetLabel]; name != "" {
		return r.request(name)
	}
	return nil
}

// infrastructureToMachineSets maps the Infrastructure singleton (cluster
// name, platform, VIPs) to every MAPI MachineSet.
func (r *Reconciler) infrastructureToMachineSets(ctx context.Context, _ client.Object) []reconcile.Request {
	list := &mapiv1beta1.MachineSetList{}
	if err := r.Client.List(ctx, list, client.InNamespace(r.MAPINamespace)); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing MachineSets after an Infrastructure change")
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, r.request(list.Items[i].Name)...)
	}
	return out
}

// isMirrorRef tells whether an ownerReference's type is a CAPI MachineSet
// (of any version).
func isMirrorRef(apiVersion, kind string) bool {
	group, err := groupOf(apiVersion)
	return err == nil && group == clusterv1.GroupVersion.Group && kind == "MachineSet"
}
