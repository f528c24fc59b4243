package skeleton

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	capiconditions "sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/cluster-api/util/patch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ocp-capi/ocp-capi/internal/conditions"
	"github.com/ocp-capi/ocp-capi/internal/notfound"
)

// Status is how a controller writes the status of its objects, the one way
// every reconciler of this project's own objects does: CAPI's patch helper
// over the pass, with the conditions the controller owns. Reconcile uses
// it; so do the controllers that run their own Reconcile (the OpenStack
// provider's).
type Status struct {
	// Kind names the object in errors.
	Kind string
	// Owned are every condition the controller owns, Ready (and Paused)
	// included: they are set on the first write, and the patch helper keeps
	// them against concurrent writers (patch.WithOwnedConditions).
	Owned []string
	// Summary are the conditions Ready summarises; Negative are those of
	// them with negative polarity (Deleting: True is the unhealthy state).
	Summary, Negative []string
	// ObservedGeneration sets status.observedGeneration after a pass that
	// returned no error.
	ObservedGeneration bool
}

// StatusWrite is one pass's status write, begun by Start and ended by
// Finish.
type StatusWrite struct {
	st     Status
	obj    Object
	helper *patch.Helper
}

// Start takes the patch helper's snapshot of obj, then gives a reason to
// each condition stored without one (conditions.GiveReasons), and sets on
// obj every owned condition it does not have yet (Unknown, reason Pending)
// and the given ones (the Paused condition), so that the pass's one write
// carries all of them and the API server accepts it.
func (st Status) Start(c client.Client, obj Object, set ...metav1.Condition) (*StatusWrite, error) {
	helper, err := patch.NewHelper(obj, c)
	if err != nil {
		return nil, err
	}
	conditions.GiveReasons(obj)
	conditions.InitUnknown(obj, st.Owned...)
	for _, cond := range set {
		capiconditions.Set(obj, cond)
	}
	return &StatusWrite{st: st, obj: obj, helper: helper}, nil
}

// Finish summarises Ready and writes what the pass changed, whatever path
// it took (deletion included); passErr is the error the pass returns. A
// NotFound is not an error: the object is gone (its finalizer removed, or
// deleted without one) and nothing is left to write.
func (w *StatusWrite) Finish(ctx context.Context, passErr error) error {
	setReady(w.obj, w.st)
	opts := []patch.Option{patch.WithOwnedConditions{Conditions: w.st.Owned}}
	if w.st.ObservedGeneration && passErr == nil {
		opts = append(opts, patch.WithStatusObservedGeneration{})
	}
	if err := w.helper.Patch(ctx, w.obj, opts...); err != nil && !notfound.Is(err) {
		return fmt.Errorf("patching %s: %w", w.st.Kind, err)
	}
	return nil
}

// setReady summarises st.Summary into Ready with CAPI's summary, except that
// a True Ready carries no message: CAPI mirrors Ready into the Machine's
// BootstrapConfigReady and InfrastructureReady (and the Cluster's
// InfrastructureReady), and its own e2e specs expect a healthy Machine's
// Ready and Cluster's Available to have an empty message. The step
// conditions keep their messages.
func setReady(obj Object, st Status) {
	strategy := quietWhenTrue{capiconditions.DefaultMergeStrategy(
		capiconditions.GetPriorityFunc(capiconditions.GetDefaultMergePriorityFunc(st.Negative...)))}
	_ = capiconditions.SetSummaryCondition(obj, obj, clusterv1.ReadyCondition,
		capiconditions.ForConditionTypes(st.Summary), capiconditions.NegativePolarityConditionTypes(st.Negative),
		capiconditions.CustomMergeStrategy{MergeStrategy: strategy})
}

// quietWhenTrue is a merge strategy that drops the message of a True result.
type quietWhenTrue struct{ capiconditions.MergeStrategy }

func (q quietWhenTrue) Merge(op capiconditions.MergeOperation, conds []capiconditions.ConditionWithOwnerInfo, types []string) (metav1.ConditionStatus, string, string, error) {
	status, reason, message, err := q.MergeStrategy.Merge(op, conds, types)
	if status == metav1.ConditionTrue {
		message = ""
	}
	return status, reason, message, err
}
