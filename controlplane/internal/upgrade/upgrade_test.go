package upgrade

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ocp-capi/ocp-capi/controlplane/internal/release"
	configv1 "github.com/ocp-capi/ocp-capi/internal/consumed/config/v1"
)

func cv(desired *configv1.Update, history []configv1.UpdateHistory, conds ...configv1.ClusterOperatorStatusCondition) *configv1.ClusterVersion {
	c := &configv1.ClusterVersion{}
	c.Spec.DesiredUpdate = desired
	c.Status.History = history
	c.Status.Conditions = conds
	if len(history) > 0 {
		c.Status.Desired.Version = history[0].Version
	}
	return c
}

func completed(v string) configv1.UpdateHistory {
	now := metav1.Now()
	return configv1.UpdateHistory{State: configv1.CompletedUpdate, Version: v, CompletionTime: &now}
}

func partial(v string) configv1.UpdateHistory {
	return configv1.UpdateHistory{State: configv1.PartialUpdate, Version: v}
}

func cond(t string, s configv1.ConditionStatus, msg string) configv1.ClusterOperatorStatusCondition {
	return configv1.ClusterOperatorStatusCondition{Type: configv1.ClusterStatusConditionType(t), Status: s, Message: msg}
}

func TestDecide(t *testing.T) {
	ga := release.Update{Version: "4.19.1"}
	img := release.Update{Version: "4.19.1", Image: "m/r:4.19.1-x86_64", Force: true}
	for _, tc := range []struct {
		name string
		want release.Update
		cv   *configv1.ClusterVersion
		act  Action
	}{
		{"runs it", ga, cv(nil, []configv1.UpdateHistory{completed("4.19.1")}), Done},
		{"request", ga, cv(nil, []configv1.UpdateHistory{completed("4.19.0")}), Request},
		{"requested, not picked up", ga, cv(&configv1.Update{Version: "4.19.1"}, []configv1.UpdateHistory{completed("4.19.0")}), Wait},
		{"running", ga, cv(&configv1.Update{Version: "4.19.1"}, []configv1.UpdateHistory{partial("4.19.1"), completed("4.19.0")},
			cond("Progressing", configv1.ConditionTrue, "Working towards 4.19.1")), Wait},
		{"completed but still progressing", ga, cv(&configv1.Update{Version: "4.19.1"}, []configv1.UpdateHistory{completed("4.19.1")},
			cond("Progressing", configv1.ConditionTrue, "finishing")), Wait},
		{"failing", ga, cv(&configv1.Update{Version: "4.19.1"}, []configv1.UpdateHistory{partial("4.19.1"), completed("4.19.0")},
			cond("Failing", configv1.ConditionTrue, "boom")), Failed},
		{"not accepted", ga, cv(&configv1.Update{Version: "4.19.1"}, []configv1.UpdateHistory{completed("4.19.0")},
			cond("ReleaseAccepted", configv1.ConditionFalse, "VersionNotFound")), Failed},
		{"another update runs", ga, cv(&configv1.Update{Version: "4.19.5"}, []configv1.UpdateHistory{partial("4.19.5"), completed("4.19.0")}), Wait},
		{"downgrade", ga, cv(nil, []configv1.UpdateHistory{completed("4.20.0")}), Refused},
		{"by image: request", img, cv(&configv1.Update{Version: "4.19.1"}, []configv1.UpdateHistory{completed("4.19.0")}), Request},
		{"by image: requested", img, cv(&configv1.Update{Image: "m/r:4.19.1-x86_64", Force: true}, []configv1.UpdateHistory{completed("4.19.0")}), Wait},
		{"no history", ga, cv(nil, nil), Request},
	} {
		d := Decide(tc.want, tc.cv)
		if d.Action != tc.act || d.Message == "" {
			t.Errorf("%s: %v (%s), want %v", tc.name, d.Action, d.Message, tc.act)
		}
	}
}

func TestObserve(t *testing.T) {
	o := Observe(cv(nil, []configv1.UpdateHistory{partial("4.19.1"), completed("4.19.0"), completed("4.18.3")}))
	if o.Completed != "4.19.0" || !o.Progressing || o.Desired != "4.19.1" {
		t.Errorf("%+v", o)
	}
}

func TestDesiredUpdate(t *testing.T) {
	if u := DesiredUpdate(release.Update{Version: "4.19.1"}); u.Version != "4.19.1" || u.Image != "" || u.Force {
		t.Errorf("%+v", u)
	}
	if u := DesiredUpdate(release.Update{Version: "4.19.1", Image: "i", Force: true}); u.Version != "" || u.Image != "i" || !u.Force {
		t.Errorf("%+v", u)
	}
}
