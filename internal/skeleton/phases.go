package skeleton

import (
	"context"
	"errors"

	"sigs.k8s.io/cluster-api/util"
	ctrl "sigs.k8s.io/controller-runtime"
)

// Phase is one named step of a flow over the scope S. It returns the
// requeue it asks for, and an error: ErrStop ends the flow after it without
// one (the phase waits for something, which a condition names, or there is
// nothing left to do); any other error ends it too, and is the reconcile's.
type Phase[S any] func(ctx context.Context, s S) (ctrl.Result, error)

// ErrStop, returned by a phase, ends the flow there without an error.
var ErrStop = errors.New("the flow stops here")

// RunPhases runs phases in order until one stops the flow or fails, and
// returns the soonest requeue the phases that ran asked for (none with an
// error: controller-runtime backs off).
func RunPhases[S any](ctx context.Context, s S, phases ...Phase[S]) (ctrl.Result, error) {
	var res ctrl.Result
	for _, phase := range phases {
		r, err := phase(ctx, s)
		switch {
		case errors.Is(err, ErrStop):
			return util.LowestNonZeroResult(res, r), nil
		case err != nil:
			return ctrl.Result{}, err
		}
		res = util.LowestNonZeroResult(res, r)
	}
	return res, nil
}

// Stop is what a phase returns to end the flow after it: with err when
// there is one, otherwise without (ErrStop), keeping the requeue it asks
// for.
func Stop(res ctrl.Result, err error) (ctrl.Result, error) {
	if err != nil {
		return res, err
	}
	return res, ErrStop
}
