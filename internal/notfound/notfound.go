// Package notfound holds small helpers for Kubernetes API errors shared by
// the reconcilers.
package notfound

import (
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
)

// Is is apierrors.IsNotFound that also sees through an aggregate of
// errors, such as the one CAPI's patch helper returns: it is true when
// every error in it is a NotFound.
func Is(err error) bool {
	var agg kerrors.Aggregate
	if errors.As(err, &agg) {
		return kerrors.FilterOut(agg, apierrors.IsNotFound) == nil
	}
	return apierrors.IsNotFound(err)
}
