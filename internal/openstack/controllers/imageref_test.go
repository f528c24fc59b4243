package controllers_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	capiconditions "sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/ocp-capi/ocp-capi/api/infrastructure/v1beta2"
	orcv1alpha1 "github.com/ocp-capi/ocp-capi/internal/consumed/orc/v1alpha1"
)

// orcImage is an ORC Image as CAPO's image templates write it.
func (e *cloudEnv) orcImage(name string) *orcv1alpha1.Image {
	return &orcv1alpha1.Image{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns},
		Spec: orcv1alpha1.ImageSpec{
			ManagementPolicy: "managed",
			Resource: &orcv1alpha1.ImageResourceSpec{Name: ptr.To(name), Content: &orcv1alpha1.ImageContent{
				DiskFormat: "qcow2", Download: &orcv1alpha1.ImageContentSourceDownload{URL: "https://images.example.com/" + name + ".qcow2"}}},
			CloudCredentialsRef: orcv1alpha1.CloudCredentialsReference{SecretName: "cloud", CloudName: "openstack"},
		},
	}
}

// setImageStatus writes the status ORC would write.
func setImageStatus(g Gomega, img *orcv1alpha1.Image, status orcv1alpha1.ImageStatus) {
	ctx := context.Background()
	g.Eventually(func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(img), img); err != nil {
			return err
		}
		img.Status = status
		return env.Client.Status().Update(ctx, img)
	}, wait, tick).Should(Succeed())
}

// TestImageRef: a server whose image is an ORC Image waits, saying why,
// while the Image does not exist and while it is not Available; then uses
// the Glance ID the Image reports. An Image ORC gave up on is a terminal
// DependencyFailed.
func TestImageRef(t *testing.T) {
	g := NewWithT(t)
	e := newCloudEnv(t)
	oss := e.server("imageref")
	oss.Spec.Image = infrav1.ImageParam{ImageRef: &infrav1.ResourceReference{Name: "node-image"}}
	e.createDeletedOnCleanup(oss)

	waitResolved := func(reason, message string) {
		t.Helper()
		g.Eventually(func(g Gomega) {
			get(g, oss)
			c := capiconditions.Get(oss, infrav1.ReferencesResolvedCondition)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Reason).To(Equal(reason), cond(oss, infrav1.ReferencesResolvedCondition))
			g.Expect(c.Message).To(ContainSubstring(message))
		}, wait, tick).Should(Succeed())
	}
	waitResolved(infrav1.ImageNotReadyReason, "ORC Image "+e.ns+"/node-image not found")
	g.Expect(oss.Status.Resolved).To(BeNil())

	img := e.orcImage("node-image")
	e.create(img)
	setImageStatus(g, img, orcv1alpha1.ImageStatus{Conditions: []metav1.Condition{
		{Type: orcv1alpha1.ConditionAvailable, Status: metav1.ConditionFalse, Reason: "Progressing", Message: "downloading", LastTransitionTime: metav1.Now()},
		{Type: orcv1alpha1.ConditionProgressing, Status: metav1.ConditionTrue, Reason: "Progressing", Message: "Downloading image content", LastTransitionTime: metav1.Now()},
	}})
	waitResolved(infrav1.ImageNotReadyReason, "is not Available yet: Downloading image content")

	setImageStatus(g, img, orcv1alpha1.ImageStatus{ID: ptr.To(e.imageID), Conditions: []metav1.Condition{
		{Type: orcv1alpha1.ConditionAvailable, Status: metav1.ConditionTrue, Reason: orcv1alpha1.ReasonSuccess, Message: "Glance image is available", LastTransitionTime: metav1.Now()},
		{Type: orcv1alpha1.ConditionProgressing, Status: metav1.ConditionFalse, Reason: orcv1alpha1.ReasonSuccess, Message: "done", LastTransitionTime: metav1.Now()},
	}})
	waitServerReady(g, oss)
	g.Expect(oss.Status.Resolved.ImageID).To(Equal(e.imageID))

	// ORC gave up on this one.
	failed := e.orcImage("broken-image")
	e.create(failed)
	setImageStatus(g, failed, orcv1alpha1.ImageStatus{Conditions: []metav1.Condition{
		{Type: orcv1alpha1.ConditionAvailable, Status: metav1.ConditionFalse, Reason: orcv1alpha1.ReasonInvalidConfiguration, Message: "bad disk format", LastTransitionTime: metav1.Now(), ObservedGeneration: 1},
		{Type: orcv1alpha1.ConditionProgressing, Status: metav1.ConditionFalse, Reason: orcv1alpha1.ReasonInvalidConfiguration, Message: "bad disk format", LastTransitionTime: metav1.Now(), ObservedGeneration: 1},
	}})
	bad := e.server("imageref-failed")
	bad.Spec.Image = infrav1.ImageParam{ImageRef: &infrav1.ResourceReference{Name: "broken-image"}}
	e.createDeletedOnCleanup(bad)
	oss = bad
	waitResolved(infrav1.DependencyFailedReason, "ORC Image "+e.ns+"/broken-image failed: bad disk format")
}
