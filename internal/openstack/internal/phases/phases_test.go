package phases_test

import (
	"context"
	"errors"
	"testing"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/ocp-capi/ocp-capi/internal/openstack/internal/phases"
)

type scope struct{ ran []string }

func phase(name string, res ctrl.Result, stop bool, err error) phases.Phase[*scope] {
	return func(_ context.Context, s *scope) (ctrl.Result, bool, error) {
		s.ran = append(s.ran, name)
		return res, stop, err
	}
}

func TestRun(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name    string
		phases  []phases.Phase[*scope]
		ran     string
		res     ctrl.Result
		wantErr error
	}{
		{"all done", []phases.Phase[*scope]{phase("a", ctrl.Result{}, false, nil), phase("b", ctrl.Result{}, false, nil)}, "ab", ctrl.Result{}, nil},
		{"stop ends the pass", []phases.Phase[*scope]{phase("a", ctrl.Result{}, true, nil), phase("b", ctrl.Result{}, false, nil)}, "a", ctrl.Result{}, nil},
		{"an error ends the pass", []phases.Phase[*scope]{phase("a", ctrl.Result{}, false, boom), phase("b", ctrl.Result{}, false, nil)}, "a", ctrl.Result{}, boom},
		{"the lowest requeue wins", []phases.Phase[*scope]{
			phase("a", ctrl.Result{RequeueAfter: time.Minute}, false, nil),
			phase("b", ctrl.Result{RequeueAfter: time.Second}, true, nil),
			phase("c", ctrl.Result{}, false, nil),
		}, "ab", ctrl.Result{RequeueAfter: time.Second}, nil},
		{"none", nil, "", ctrl.Result{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &scope{}
			res, err := phases.Run(context.Background(), s, tc.phases...)
			ran := ""
			for _, r := range s.ran {
				ran += r
			}
			if ran != tc.ran || res != tc.res || !errors.Is(err, tc.wantErr) || (err == nil) != (tc.wantErr == nil) {
				t.Errorf("ran %q, got %+v, %v; want %q, %+v, %v", ran, res, err, tc.ran, tc.res, tc.wantErr)
			}
		})
	}
}
