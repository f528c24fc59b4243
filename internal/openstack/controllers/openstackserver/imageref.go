package openstackserver

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	orcv1alpha1 "github.com/ocp-capi/ocp-capi/internal/consumed/orc/v1alpha1"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/clients"
	"github.com/ocp-capi/ocp-capi/internal/openstack/cloud/scope"
)

// +kubebuilder:rbac:groups=openstack.k-orc.cloud,resources=images,verbs=get

// How often a server whose image.imageRef is not usable yet looks again:
// ORC's Images are read, not watched, so that the manager starts whether
// or not ORC is installed.
const (
	imageNotReadyPoll = 15 * time.Second
	orcMissingPoll    = time.Minute
)

// imageRefID resolves image.imageRef: the Glance ID that the ORC Image
// named in the server's namespace reports once it is Available. While ORC
// is not installed, the Image does not exist or is not Available yet, it
// returns a wait (ReferencesResolved False, ImageNotReady, with what is
// missing); an Image ORC gave up on is a terminal DependencyFailed.
func imageRefID(ctx context.Context, reader client.Reader, namespace, name string) (string, error) {
	img := &orcv1alpha1.Image{}
	err := reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, img)
	switch {
	case meta.IsNoMatchError(err) || isMissingKind(err):
		return "", scope.Wait(infrav1.ImageNotReadyReason, orcMissingPoll,
			"image.imageRef names ORC Image %s, but ORC (openstack.k-orc.cloud/v1alpha1 Image) is not installed; install ORC or use image.id or image.filter", name)
	case apierrors.IsNotFound(err):
		return "", scope.Wait(infrav1.ImageNotReadyReason, imageNotReadyPoll, "ORC Image %s/%s not found", namespace, name)
	case err != nil:
		return "", fmt.Errorf("reading ORC Image %s/%s: %w", namespace, name, err)
	}
	available, progressing := condition(img, orcv1alpha1.ConditionAvailable), condition(img, orcv1alpha1.ConditionProgressing)
	if available != nil && available.Status == metav1.ConditionTrue && img.Status.ID != nil && *img.Status.ID != "" {
		return *img.Status.ID, nil
	}
	if progressing != nil && progressing.Status == metav1.ConditionFalse && progressing.ObservedGeneration == img.Generation &&
		(progressing.Reason == orcv1alpha1.ReasonInvalidConfiguration || progressing.Reason == orcv1alpha1.ReasonUnrecoverableError) {
		return "", &clients.Error{Class: clients.Terminal, Reason: infrav1.DependencyFailedReason,
			Message: fmt.Sprintf("ORC Image %s/%s failed: %s", namespace, name, progressing.Message)}
	}
	why := "not Available yet"
	if progressing != nil && progressing.Message != "" {
		why += ": " + progressing.Message
	}
	return "", scope.Wait(infrav1.ImageNotReadyReason, imageNotReadyPoll, "ORC Image %s/%s is %s", namespace, name, why)
}

func condition(img *orcv1alpha1.Image, t string) *metav1.Condition {
	for i := range img.Status.Conditions {
		if img.Status.Conditions[i].Type == t {
			return &img.Status.Conditions[i]
		}
	}
	return nil
}

// isMissingKind tells a 404 for the resource itself (the API server knows
// no images.openstack.k-orc.cloud) from a 404 for the object: an uncached
// reader whose REST mapping was found from a stale discovery answers so
// after ORC is uninstalled.
func isMissingKind(err error) bool {
	if !apierrors.IsNotFound(err) {
		return false
	}
	status, ok := err.(apierrors.APIStatus)
	return ok && status.Status().Details != nil && status.Status().Details.Name == ""
}
