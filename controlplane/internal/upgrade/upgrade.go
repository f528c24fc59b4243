// Package upgrade reads a workload cluster's ClusterVersion and decides
// what an OpenShift upgrade needs: nothing (the cluster runs the wanted
// version), waiting (an update is running or failed), or a new
// spec.desiredUpdate. Upgrades are in place, cluster-wide, by the
// cluster-version operator; no Machine is replaced. It is pure: no client,
// no I/O.
package upgrade

import (
	"fmt"
	"strings"

	"github.com/ocp-capi/ocp-capi/controlplane/internal/release"
	configv1 "github.com/ocp-capi/ocp-capi/internal/consumed/config/v1"
)

// ClusterVersion conditions the cluster-version operator sets.
const (
	ProgressingCondition     = "Progressing"
	FailingCondition         = "Failing"
	ReleaseAcceptedCondition = "ReleaseAccepted"
)

// ClusterVersionName is the one ClusterVersion of a cluster.
const ClusterVersionName = "version"

// Observed is what a ClusterVersion says about the cluster's version.
type Observed struct {
	// Completed is the version of the latest completed update (or of the
	// installation): the version the cluster runs. "" when none completed.
	Completed string
	// Desired is the version the operator is working towards
	// (status.desired.version).
	Desired string
	// Progressing is true while an update is applied: the newest history
	// entry is Partial without a completion time, or Progressing is True.
	Progressing bool
	// Failure is the operator's message when it reports Failing=True or
	// ReleaseAccepted=False.
	Failure string
	// Message is the operator's Progressing message.
	Message string
}

// Observe reads a ClusterVersion.
func Observe(cv *configv1.ClusterVersion) Observed {
	var o Observed
	o.Desired = cv.Status.Desired.Version
	for _, h := range cv.Status.History {
		if h.State == configv1.CompletedUpdate {
			o.Completed = h.Version
			break
		}
	}
	if len(cv.Status.History) > 0 {
		h := cv.Status.History[0]
		o.Progressing = h.State == configv1.PartialUpdate && h.CompletionTime == nil
	}
	for _, c := range cv.Status.Conditions {
		switch {
		case string(c.Type) == ProgressingCondition && c.Status == configv1.ConditionTrue:
			o.Progressing = true
			o.Message = c.Message
		case string(c.Type) == FailingCondition && c.Status == configv1.ConditionTrue:
			o.Failure = joinNonEmpty(o.Failure, c.Message)
		case string(c.Type) == ReleaseAcceptedCondition && c.Status == configv1.ConditionFalse:
			o.Failure = joinNonEmpty(o.Failure, c.Message)
		}
	}
	return o
}

func joinNonEmpty(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// Action is what the control plane does next.
type Action int

// The actions.
const (
	// Done: the cluster runs the wanted version.
	Done Action = iota
	// Request: write Update as spec.desiredUpdate.
	Request
	// Wait: the wanted update is requested and running; or another update
	// runs and must finish first.
	Wait
	// Failed: the operator reports the wanted update failing or refused.
	Failed
	// Refused: the wanted version is older than the running one.
	Refused
)

// Decision is the Action with its update and a message for the user.
type Decision struct {
	Action  Action
	Update  release.Update
	Message string
}

// Decide compares the wanted version (with the update that reaches it) with
// the ClusterVersion.
func Decide(want release.Update, cv *configv1.ClusterVersion) Decision {
	o := Observe(cv)
	requested := Matches(cv.Spec.DesiredUpdate, want)
	switch {
	case o.Completed == want.Version && !o.Progressing:
		return Decision{Action: Done, Message: fmt.Sprintf("the cluster runs OpenShift %s", want.Version)}
	case requested && o.Failure != "":
		return Decision{Action: Failed, Message: fmt.Sprintf("the update to OpenShift %s fails: %s", want.Version, o.Failure)}
	case requested:
		msg := fmt.Sprintf("updating from OpenShift %s to %s", orUnknown(o.Completed), want.Version)
		if o.Message != "" {
			msg += ": " + o.Message
		}
		return Decision{Action: Wait, Message: msg}
	case o.Progressing:
		return Decision{Action: Wait, Message: fmt.Sprintf("an update to OpenShift %s is in progress; the update to %s starts once it completes",
			orUnknown(o.Desired), want.Version)}
	case o.Completed != "" && release.Compare(want.Version, o.Completed) < 0:
		return Decision{Action: Refused, Message: fmt.Sprintf("the cluster runs OpenShift %s: downgrades to %s are not supported; "+
			"set spec.distributionVersion back to %s or later", o.Completed, want.Version, o.Completed)}
	}
	return Decision{Action: Request, Update: want,
		Message: fmt.Sprintf("requested the update from OpenShift %s to %s", orUnknown(o.Completed), want.Version)}
}

func orUnknown(v string) string {
	if v == "" {
		return "(unknown)"
	}
	return v
}

// Matches tells whether a ClusterVersion's desiredUpdate asks for want.
func Matches(u *configv1.Update, want release.Update) bool {
	if u == nil {
		return false
	}
	if want.Image != "" {
		return u.Image == want.Image
	}
	return strings.TrimPrefix(u.Version, "v") == want.Version && u.Image == ""
}

// DesiredUpdate is the ClusterVersion spec.desiredUpdate for want.
func DesiredUpdate(want release.Update) *configv1.Update {
	if want.Image != "" {
		// The operator takes the version from the payload; an image with a
		// version must agree with it, so only the image is given.
		return &configv1.Update{Image: want.Image, Force: want.Force}
	}
	return &configv1.Update{Version: want.Version}
}
