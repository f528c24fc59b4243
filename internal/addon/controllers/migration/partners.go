package migration

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/annotations"
	capiconditions "sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	metal3v1 "github.com/ocp-capi/ocp-capi/internal/consumed/metal3/v1beta1"
)

// partners is the CAPI side of one MAPI object: the CAPI MachineSet, or
// the CAPI Machine, its infrastructure machine and (OpenStack) its
// OpenStackServer. Only the first carries the generation the sync mirrors.
type partners struct {
	// objects that exist, the CAPI MachineSet or Machine first.
	objects []client.Object
	// complete: the CAPI MachineSet, or the CAPI Machine and its
	// infrastructure machine, exist.
	complete bool
}

// generation of the CAPI MachineSet or Machine (0 if none).
func (p *partners) generation() int64 {
	if len(p.objects) == 0 {
		return 0
	}
	return p.objects[0].GetGeneration()
}

// pauseState: whether every object has the pause annotation, and whether
// every one also says so. A kind that reports CAPI's Paused condition
// (CAPI's MachineSet and Machine, this project's OpenStackMachine and
// OpenStackServer) must say Paused=True; a Metal3Machine's condition is
// not read (where it is differs between its API versions, and CAPM3 checks
// the annotation at the start of every reconcile), so its annotation is
// enough.
func (p *partners) pauseState() (requested, confirmed bool) {
	requested, confirmed = true, true
	for _, o := range p.objects {
		if !annotations.HasPaused(o) {
			return false, false
		}
		if g, ok := o.(capiconditions.Getter); ok && !capiconditions.IsTrue(g, clusterv1.PausedCondition) {
			confirmed = false
		}
	}
	return requested, confirmed
}

// readPartners reads the CAPI objects of the MAPI object called name.
func (r *Reconciler) readPartners(ctx context.Context, name string) (*partners, error) {
	key := types.NamespacedName{Namespace: r.CAPINamespace, Name: name}
	p := &partners{}
	if r.Kind == MachineSets {
		ms := &clusterv1.MachineSet{}
		if err := r.get(ctx, key, ms); err != nil || ms.Name == "" {
			return p, err
		}
		if !ms.DeletionTimestamp.IsZero() {
			return p, nil // on its way out: as good as gone
		}
		p.objects, p.complete = []client.Object{ms}, true
		return p, nil
	}
	m := &clusterv1.Machine{}
	if err := r.get(ctx, key, m); err != nil || m.Name == "" || !m.DeletionTimestamp.IsZero() {
		return p, err
	}
	p.objects = []client.Object{m}
	ref := m.Spec.InfrastructureRef
	var im client.Object
	switch ref.Kind {
	case "OpenStackMachine":
		im = &infrav1.OpenStackMachine{}
	case "Metal3Machine":
		im = &metal3v1.Metal3Machine{}
	default:
		return p, fmt.Errorf("the CAPI Machine %s has an infrastructure machine of kind %q, which the migration does not know", name, ref.Kind)
	}
	if !r.infraKinds[ref.Kind] {
		return p, fmt.Errorf("the %s CRD is not installed (or was installed after this controller started; restart it)", ref.Kind)
	}
	if err := r.get(ctx, types.NamespacedName{Namespace: r.CAPINamespace, Name: ref.Name}, im); err != nil {
		return p, err
	}
	if im.GetName() == "" || !im.GetDeletionTimestamp().IsZero() {
		return p, nil
	}
	p.objects, p.complete = append(p.objects, im), true
	if _, ok := im.(*infrav1.OpenStackMachine); ok && r.infraKinds["OpenStackServer"] {
		// The server object the OpenStackMachine made, once unpaused: it
		// is paused with it, or it would act on its own.
		oss := &infrav1alpha1.OpenStackServer{}
		if err := r.get(ctx, types.NamespacedName{Namespace: r.CAPINamespace, Name: im.GetName()}, oss); err != nil {
			return p, err
		}
		if oss.Name != "" {
			p.objects = append(p.objects, oss)
		}
	}
	return p, nil
}

// get reads key into obj; a missing object leaves obj empty (no name).
func (r *Reconciler) get(ctx context.Context, key types.NamespacedName, obj client.Object) error {
	if err := r.Client.Get(ctx, key, obj); err != nil {
		if apierrors.IsNotFound(err) {
			obj.SetName("")
			return nil
		}
		return err
	}
	return nil
}

// setPaused adds (or removes) the pause annotation on every object that
// lacks (or has) it. The objects are CAPI's and its providers': a merge
// patch of the one annotation key, which touches no other key and no list,
// so it needs no resourceVersion.
func (r *Reconciler) setPaused(ctx context.Context, p *partners, paused bool) (changed []string, err error) {
	for _, o := range p.objects {
		if annotations.HasPaused(o) == paused {
			continue
		}
		base, ok := o.DeepCopyObject().(client.Object)
		if !ok {
			return changed, fmt.Errorf("cannot copy %s", o.GetName())
		}
		a := o.GetAnnotations()
		if paused {
			if a == nil {
				a = map[string]string{}
			}
			a[clusterv1.PausedAnnotation] = ""
		} else {
			delete(a, clusterv1.PausedAnnotation)
		}
		o.SetAnnotations(a)
		if err := r.Client.Patch(ctx, o, client.MergeFrom(base), client.FieldOwner(fieldOwner)); client.IgnoreNotFound(err) != nil {
			return changed, fmt.Errorf("cannot change the pause of %s %s: %w", kindOf(o), o.GetName(), err)
		}
		changed = append(changed, kindOf(o)+" "+o.GetName())
	}
	return changed, nil
}

func kindOf(o client.Object) string {
	switch o.(type) {
	case *clusterv1.MachineSet:
		return "MachineSet"
	case *clusterv1.Machine:
		return "Machine"
	case *infrav1.OpenStackMachine:
		return "OpenStackMachine"
	case *infrav1alpha1.OpenStackServer:
		return "OpenStackServer"
	case *metal3v1.Metal3Machine:
		return "Metal3Machine"
	}
	return fmt.Sprintf("%T", o)
}
