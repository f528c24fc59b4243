package migration

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ocp-capi/ocp-capi/internal/addon/internal/authority"
	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
)

// fieldOwner is the migration controller's field manager.
const fieldOwner = authority.MigrationOwner

// mapiFields points at the fields of a MAPI MachineSet or Machine that
// the migration reads and writes (both kinds have them, in different
// types).
type mapiFields struct {
	obj                    client.Object
	spec                   *mapiv1beta1.MachineAuthority
	status                 *mapiv1beta1.MachineAuthority
	synchronizedAPI        *mapiv1beta1.SynchronizedAPI
	synchronizedGeneration *int64
	conditions             *[]mapiv1beta1.Condition
}

func fieldsOf(o client.Object) mapiFields {
	switch t := o.(type) {
	case *mapiv1beta1.MachineSet:
		st := &t.Status
		return mapiFields{obj: t, spec: &t.Spec.AuthoritativeAPI, status: &st.AuthoritativeAPI, synchronizedAPI: &st.SynchronizedAPI,
			synchronizedGeneration: &st.SynchronizedGeneration, conditions: &st.Conditions}
	case *mapiv1beta1.Machine:
		st := &t.Status
		return mapiFields{obj: t, spec: &t.Spec.AuthoritativeAPI, status: &st.AuthoritativeAPI, synchronizedAPI: &st.SynchronizedAPI,
			synchronizedGeneration: &st.SynchronizedGeneration, conditions: &st.Conditions}
	}
	panic("not a MAPI MachineSet or Machine")
}

func (f mapiFields) condition(t mapiv1beta1.ConditionType) *mapiv1beta1.Condition {
	for i := range *f.conditions {
		if (*f.conditions)[i].Type == t {
			return &(*f.conditions)[i]
		}
	}
	return nil
}

// setCondition sets c, keeping lastTransitionTime while the status does
// not change. It reports whether anything changed.
func (f mapiFields) setCondition(c mapiv1beta1.Condition) bool {
	cur := f.condition(c.Type)
	if cur == nil {
		c.LastTransitionTime = metav1.Now()
		*f.conditions = append(*f.conditions, c)
		return true
	}
	if cur.Status == c.Status && cur.Reason == c.Reason && cur.Message == c.Message && cur.Severity == c.Severity {
		return false
	}
	c.LastTransitionTime = cur.LastTransitionTime
	if cur.Status != c.Status {
		c.LastTransitionTime = metav1.Now()
	}
	*cur = c
	return true
}

// migratedCondition is the MAPI condition for c.
func migratedCondition(c authority.Condition) mapiv1beta1.Condition {
	out := mapiv1beta1.Condition{Type: authority.MigratedCondition, Status: corev1.ConditionFalse, Reason: c.Reason, Message: c.Message,
		Severity: mapiv1beta1.ConditionSeverityInfo}
	switch {
	case c.True:
		out.Status, out.Severity = corev1.ConditionTrue, mapiv1beta1.ConditionSeverityNone
	case c.Blocked:
		out.Severity = mapiv1beta1.ConditionSeverityWarning
	}
	return out
}

// syncReset is the Synchronized condition a handover leaves: the sync from
// the new authority has not run yet. synchronizedGeneration goes with it
// (the CRD allows it to decrease only in the write that leaves Migrating).
func syncReset(to authority.API) mapiv1beta1.Condition {
	return mapiv1beta1.Condition{Type: authority.SynchronizedCondition, Status: corev1.ConditionUnknown, Severity: mapiv1beta1.ConditionSeverityInfo,
		Reason: authority.ReasonAuthoritativeAPIChanged, Message: "Waiting for the sync from " + string(to) + " after the change of status.authoritativeAPI"}
}
