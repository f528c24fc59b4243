package openstackserver

import (
	"context"
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/scope"
)

// noORC is an API server without ORC's Image kind.
type noORC struct{ client.Reader }

func (noORC) Get(context.Context, client.ObjectKey, client.Object, ...client.GetOption) error {
	return &meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: "openstack.k-orc.cloud", Kind: "Image"}, SearchedVersions: []string{"v1alpha1"}}
}

// TestImageRefWithoutORC: without ORC the server waits (ReferencesResolved
// ImageNotReady), polling every minute, and says to install ORC.
func TestImageRefWithoutORC(t *testing.T) {
	_, err := imageRefID(context.Background(), noORC{fake.NewClientBuilder().Build()}, "ns", "node-image")
	var w *scope.Progress
	if !errors.As(err, &w) {
		t.Fatalf("want a wait, got %v", err)
	}
	if w.Reason != infrav1.ImageNotReadyReason || w.After != orcMissingPoll || !strings.Contains(w.Message, "ORC") || !strings.Contains(w.Message, "not installed") {
		t.Errorf("wait %+v", w)
	}
}
