package webhookutil

import (
	"context"
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
)

var machineGK = schema.GroupKind{Group: "infrastructure.cluster.x-k8s.io", Kind: "OpenStackMachine"}

func TestInvalidUsesGenerateName(t *testing.T) {
	m := &infrav1.OpenStackMachine{ObjectMeta: metav1.ObjectMeta{GenerateName: "worker-"}}
	err := Invalid(machineGK, m, field.ErrorList{field.Forbidden(field.NewPath("spec"), "x")})
	if !strings.Contains(err.Error(), `"worker-"`) {
		t.Errorf("error does not name the object: %v", err)
	}
}

func TestInvalidListsEveryError(t *testing.T) {
	m := &infrav1.OpenStackMachine{ObjectMeta: metav1.ObjectMeta{Name: "m"}}
	if err := Invalid(machineGK, m, nil); err != nil {
		t.Errorf("no field errors: want nil, got %v", err)
	}
	err := Invalid(machineGK, m, field.ErrorList{
		field.Forbidden(field.NewPath("spec", "a"), "x"), field.Required(field.NewPath("spec", "b"), "y"),
	})
	if !apierrors.IsInvalid(err) {
		t.Fatalf("want an Invalid error, got %v", err)
	}
	for _, want := range []string{"spec.a", "spec.b", "OpenStackMachine.infrastructure.cluster.x-k8s.io \"m\""} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q missing from %v", want, err)
		}
	}
}

func TestAllowDelete(t *testing.T) {
	var v struct {
		AllowDelete[*infrav1.OpenStackMachine]
	}
	if w, err := v.ValidateDelete(context.Background(), &infrav1.OpenStackMachine{}); w != nil || err != nil {
		t.Errorf("got %v, %v; want every deletion allowed", w, err)
	}
}

func TestRegisterStopsAtTheFirstError(t *testing.T) {
	boom := errors.New("boom")
	var ran []string
	hook := func(name string, err error) Webhook {
		return func(ctrl.Manager) error { ran = append(ran, name); return err }
	}
	if err := Register(nil, hook("a", nil), hook("b", boom), hook("c", nil)); !errors.Is(err, boom) {
		t.Errorf("got %v, want %v", err, boom)
	}
	if strings.Join(ran, ",") != "a,b" {
		t.Errorf("ran %v, want a,b", ran)
	}
}
