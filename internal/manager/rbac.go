package manager

// The permissions every manager needs, whatever its controllers do.
// hack/generate.sh adds them to each provider's ClusterRole.
//
// Leader election keeps a Lease:
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch;create;update;patch;delete
//
// Controllers record Events; client-go's recorders use either API:
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
//
// The secure metrics endpoint asks the API server to authenticate
// (TokenReview) and authorize (SubjectAccessReview) each scrape:
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create
