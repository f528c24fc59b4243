// Package phases runs one reconcile pass as a sequence of named phases over
// a scope, as CAPI's MachineSet reconciler does: the reconciler builds a
// scope (the object and what the pass learns on the way), and each phase is
// one step that reads and fills it. Unlike CAPI's, a pass ends at the first
// phase that is not done, since every later step needs the earlier ones
// (no port without a network, no server without its ports).
package phases

import (
	"context"

	"sigs.k8s.io/cluster-api/util"
	ctrl "sigs.k8s.io/controller-runtime"
)

// Phase is one step of a pass over the scope s. It returns stop true when
// the pass ends with it: the step waits (its condition says for what), it
// changed something whose own event brings the next pass, or it failed
// (err).
type Phase[S any] func(ctx context.Context, s S) (res ctrl.Result, stop bool, err error)

// Run runs the phases in order until one stops the pass, and returns the
// lowest non-zero result of those that ran, or the error that stopped it.
func Run[S any](ctx context.Context, s S, phases ...Phase[S]) (ctrl.Result, error) {
	var res ctrl.Result
	for _, phase := range phases {
		r, stop, err := phase(ctx, s)
		res = util.LowestNonZeroResult(res, r)
		if err != nil || stop {
			return res, err
		}
	}
	return res, nil
}

// Next is what a phase returns when the pass goes on.
func Next() (ctrl.Result, bool, error) { return ctrl.Result{}, false, nil }

// Stop is what a phase returns when the pass ends with it.
func Stop(res ctrl.Result, err error) (ctrl.Result, bool, error) { return res, true, err }
