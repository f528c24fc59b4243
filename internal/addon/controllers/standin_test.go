package controllers_test

// Stand-ins for the controllers that acknowledge a pause, which do not run
// in this suite; they run for the whole run, beside the add-on. Each row of the table in docs/addon/migration.md
// ("Tests") names what it plays; TestStandIns checks the table.
//
//   - the Machine API operator's MachineSet and Machine controllers
//     (machine-api-operator pkg/controller/machine and machineset): the
//     Paused condition, True with reason AuthoritativeAPINotMachineAPI while
//     status.authoritativeAPI is ClusterAPI or Migrating, False with reason
//     AuthoritativeAPIMachineAPI while it is MachineAPI; nothing while it is
//     empty (the migration controller sets it here). A held object's pause
//     is not acknowledged (a slow or stopped operator).
//   - CAPI core's EnsurePausedCondition (sigs.k8s.io/cluster-api
//     util/paused) for MachineSets and Machines, and this project's
//     OpenStackMachine and OpenStackServer controllers
//     (internal/conditions.Paused): Paused=True with reason Paused while
//     the object has the cluster.x-k8s.io/paused annotation,
//     Paused=False with reason NotPaused otherwise.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/annotations"
	capiconditions "sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	infrav1alpha1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1alpha1"
	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/addon/internal/authority"
	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
)

// standMAO plays the Machine API operator; tests hold its acknowledgement.
var standMAO = &mao{}

// mao plays the Machine API operator's Paused condition.
type mao struct {
	c    client.Client
	mu   sync.Mutex
	held map[string]bool
}

// hold stops (or, with false, resumes) the acknowledgement for name.
func (m *mao) hold(name string, held bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.held == nil {
		m.held = map[string]bool{}
	}
	m.held[name] = held
}

func (m *mao) isHeld(name string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.held[name]
}

func (m *mao) setup(_ context.Context, mgr ctrl.Manager) error {
	m.c = mgr.GetClient()
	for _, o := range []client.Object{&mapiv1beta1.MachineSet{}, &mapiv1beta1.Machine{}} {
		kind := o
		if err := ctrl.NewControllerManagedBy(mgr).Named("standin-mao-" + kindName(o)).For(o).
			Complete(reconcile.Func(func(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
				return m.reconcile(ctx, req, kind.DeepCopyObject().(client.Object))
			})); err != nil {
			return err
		}
	}
	return nil
}

func (m *mao) reconcile(ctx context.Context, req ctrl.Request, obj client.Object) (ctrl.Result, error) {
	if err := m.c.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	status, conditions := mapiAuthority(obj)
	want, ok := maoPaused(status)
	if !ok || (want.Status == corev1.ConditionTrue && m.isHeld(req.Name)) {
		return ctrl.Result{}, nil
	}
	if cur := authority.FindCondition(*conditions, want.Type); cur != nil && cur.Status == want.Status && cur.Reason == want.Reason &&
		cur.Message == want.Message && cur.Severity == want.Severity {
		return ctrl.Result{}, nil
	}
	base := obj.DeepCopyObject().(client.Object)
	setMAPICondition(conditions, want)
	return ctrl.Result{}, client.IgnoreNotFound(m.c.Status().Patch(ctx, obj, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}),
		client.FieldOwner("machine-api-operator")))
}

// mapiAuthority is the status.authoritativeAPI and the conditions of a
// MAPI MachineSet or Machine.
func mapiAuthority(obj client.Object) (mapiv1beta1.MachineAuthority, *[]mapiv1beta1.Condition) {
	switch o := obj.(type) {
	case *mapiv1beta1.MachineSet:
		return o.Status.AuthoritativeAPI, &o.Status.Conditions
	case *mapiv1beta1.Machine:
		return o.Status.AuthoritativeAPI, &o.Status.Conditions
	}
	panic(fmt.Sprintf("%T is not a MAPI MachineSet or Machine", obj))
}

// setMAPICondition replaces or adds c, its transition time moving only
// with its status, as MAO's condition helper does.
func setMAPICondition(cs *[]mapiv1beta1.Condition, c mapiv1beta1.Condition) {
	c.LastTransitionTime = metav1.Now()
	for i := range *cs {
		if (*cs)[i].Type == c.Type {
			if (*cs)[i].Status == c.Status {
				c.LastTransitionTime = (*cs)[i].LastTransitionTime
			}
			(*cs)[i] = c
			return
		}
	}
	*cs = append(*cs, c)
}

// maoPaused is the Paused condition MAO sets for a status; ok is false for
// an empty one.
func maoPaused(status mapiv1beta1.MachineAuthority) (mapiv1beta1.Condition, bool) {
	switch status {
	case "":
		return mapiv1beta1.Condition{}, false
	case mapiv1beta1.MachineAuthorityMachineAPI:
		return mapiv1beta1.Condition{Type: mapiv1beta1.PausedCondition, Status: corev1.ConditionFalse, Severity: mapiv1beta1.ConditionSeverityInfo,
			Reason: mapiv1beta1.PausedReasonMachineAPI, Message: "The AuthoritativeAPI status is set to 'MachineAPI'"}, true
	}
	return mapiv1beta1.Condition{Type: mapiv1beta1.PausedCondition, Status: corev1.ConditionTrue,
		Reason: mapiv1beta1.PausedReasonNotMachineAPI, Message: "The AuthoritativeAPI status is set to '" + string(status) + "'"}, true
}

// capiPause plays CAPI's (and our providers') Paused condition.
type capiPause struct{ c client.Client }

// capiPausable are the kinds whose Paused condition it plays.
func capiPausable() []client.Object {
	return []client.Object{&clusterv1.MachineSet{}, &clusterv1.Machine{}, &infrav1.OpenStackMachine{}, &infrav1alpha1.OpenStackServer{}}
}

func (p *capiPause) setup(_ context.Context, mgr ctrl.Manager) error {
	p.c = mgr.GetClient()
	for _, o := range capiPausable() {
		kind := o
		if err := ctrl.NewControllerManagedBy(mgr).Named("standin-capi-pause-" + kindName(o)).For(o).
			Complete(reconcile.Func(func(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
				obj := kind.DeepCopyObject().(client.Object)
				if err := p.c.Get(ctx, req.NamespacedName, obj); err != nil {
					return ctrl.Result{}, client.IgnoreNotFound(err)
				}
				return ctrl.Result{}, p.reconcile(ctx, obj)
			})); err != nil {
			return err
		}
	}
	return nil
}

func (p *capiPause) reconcile(ctx context.Context, obj client.Object) error {
	want := capiPausedCondition(obj)
	setter := obj.(capiconditions.Setter)
	if cur := capiconditions.Get(setter, clusterv1.PausedCondition); cur != nil && cur.Status == want.Status && cur.Reason == want.Reason {
		return nil
	}
	base := obj.DeepCopyObject().(client.Object)
	capiconditions.Set(setter, want)
	return client.IgnoreNotFound(p.c.Status().Patch(ctx, obj, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}),
		client.FieldOwner("capi-standin")))
}

func capiPausedCondition(obj client.Object) metav1.Condition {
	if annotations.HasPaused(obj) {
		return metav1.Condition{Type: clusterv1.PausedCondition, Status: metav1.ConditionTrue, Reason: clusterv1.PausedReason,
			LastTransitionTime: metav1.NewTime(time.Now().Truncate(time.Second))}
	}
	return metav1.Condition{Type: clusterv1.PausedCondition, Status: metav1.ConditionFalse, Reason: clusterv1.NotPausedReason,
		LastTransitionTime: metav1.NewTime(time.Now().Truncate(time.Second))}
}

func kindName(o client.Object) string {
	switch o.(type) {
	case *mapiv1beta1.MachineSet:
		return "mapi-machineset"
	case *mapiv1beta1.Machine:
		return "mapi-machine"
	}
	t := fmt.Sprintf("%T", o) // *v1beta2.MachineSet
	return strings.ToLower(t[strings.LastIndex(t, ".")+1:])
}

// TestStandIns checks the table of standin_test.go.
func TestStandIns(t *testing.T) {
	for status, want := range map[mapiv1beta1.MachineAuthority]corev1.ConditionStatus{
		mapiAPI: corev1.ConditionFalse, capiAPI: corev1.ConditionTrue, authority.Migrating: corev1.ConditionTrue,
	} {
		c, ok := maoPaused(status)
		if !ok || c.Status != want || c.Type != mapiv1beta1.PausedCondition {
			t.Errorf("MAO Paused for %s: %+v", status, c)
		}
	}
	if _, ok := maoPaused(""); ok {
		t.Errorf("MAO sets Paused with no status")
	}
	paused := &clusterv1.MachineSet{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{clusterv1.PausedAnnotation: ""}}}
	if c := capiPausedCondition(paused); c.Status != metav1.ConditionTrue || c.Reason != clusterv1.PausedReason {
		t.Errorf("CAPI Paused with the annotation: %+v", c)
	}
	if c := capiPausedCondition(&clusterv1.MachineSet{}); c.Status != metav1.ConditionFalse || c.Reason != clusterv1.NotPausedReason {
		t.Errorf("CAPI Paused without it: %+v", c)
	}
}
