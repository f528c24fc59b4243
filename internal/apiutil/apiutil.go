// Package apiutil holds small helpers for Kubernetes API errors shared by
// the reconcilers.
package apiutil

import (
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
)

// IsNotFound is apierrors.IsNotFound that also sees through an aggregate of
// errors, such as the one CAPI's patch helper returns: it is true when
// every error in it is a NotFound.
func IsNotFound(err error) bool {
	var agg kerrors.Aggregate
	if errors.As(err, &agg) {
		return kerrors.FilterOut(agg, apierrors.IsNotFound) == nil
	}
	return apierrors.IsNotFound(err)
}
