// Package webhookutil is what the validating webhooks of every provider
// share: their registration with the manager, the Invalid error that lists
// every field error, and the deletion they all allow.
package webhookutil

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// Webhook registers one webhook with a manager.
type Webhook func(mgr ctrl.Manager) error

// Validator is the validating webhook v of obj's kind.
func Validator[T runtime.Object](obj T, v admission.Validator[T]) Webhook {
	return func(mgr ctrl.Manager) error {
		kind := fmt.Sprintf("%T", obj)
		if gvk, err := apiutil.GVKForObject(obj, mgr.GetScheme()); err == nil {
			kind = gvk.Kind
		}
		if err := ctrl.NewWebhookManagedBy(mgr, obj).WithValidator(v).Complete(); err != nil {
			return fmt.Errorf("setting up the %s webhook: %w", kind, err)
		}
		return nil
	}
}

// Register registers the webhooks with the manager, in order; the first
// error stops it.
func Register(mgr ctrl.Manager, webhooks ...Webhook) error {
	for _, w := range webhooks {
		if err := w(mgr); err != nil {
			return err
		}
	}
	return nil
}

// Invalid turns field errors into one Invalid API error of the object
// listing all of them, or nil when there are none. gk is given, not read
// from the object, whose TypeMeta may be empty once decoded.
func Invalid(gk schema.GroupKind, obj metav1.Object, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	name := obj.GetName()
	if name == "" {
		name = obj.GetGenerateName()
	}
	return apierrors.NewInvalid(gk, name, errs)
}

// AllowDelete is embedded in a validator of T that allows every deletion.
type AllowDelete[T runtime.Object] struct{}

// ValidateDelete allows the deletion.
func (AllowDelete[T]) ValidateDelete(context.Context, T) (admission.Warnings, error) { return nil, nil }
