package openshiftassistedconfig

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cluster-api/controllers/external"
	"sigs.k8s.io/cluster-api/util"
	ctrl "sigs.k8s.io/controller-runtime"

	bootstrapv1 "github.com/ocp-capi/ocp-capi/api/bootstrap/v1alpha2"
	"github.com/ocp-capi/ocp-capi/bootstrap/controllers/install"
	"github.com/ocp-capi/ocp-capi/bootstrap/internal/gate"
	"github.com/ocp-capi/ocp-capi/bootstrap/internal/ignition"
	"github.com/ocp-capi/ocp-capi/bootstrap/internal/infra"
	"github.com/ocp-capi/ocp-capi/bootstrap/internal/infraenv"
	"github.com/ocp-capi/ocp-capi/internal/conditions"
	aiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/agentinstall/v1beta1"
	hivev1 "github.com/ocp-capi/ocp-capi/internal/consumed/hive/v1"
	hiveextv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/hiveext/v1beta1"
)

// Requeue delays. Reconcilers never wait; they come back.
const (
	// fetchRetry is how soon a transient ignition fetch failure is retried.
	fetchRetry = 15 * time.Second
	// terminalRetry is how soon a failure that needs a fix elsewhere (TLS
	// trust, a 4xx) is retried, in case the fix is outside Kubernetes.
	terminalRetry = 2 * time.Minute
	// infraEnvRetry is the fallback for an InfraEnv's image, which its
	// events normally announce.
	infraEnvRetry = 10 * time.Second
	// infraRetry is how soon an infrastructure machine whose version
	// cannot be resolved (its CRD lacks the contract label) is tried again.
	infraRetry = time.Minute
)

func (r *Reconciler) reconcileNormal(ctx context.Context, s *scope) (ctrl.Result, error) {
	config := s.config
	if s.machine == nil && dataSecretCreated(config) {
		// The Machine went away after it booted; the garbage collector
		// deletes this config next. Nothing to do until then.
		return ctrl.Result{}, nil
	}
	if s.machine == nil {
		conditions.MarkFalse(config, bootstrapv1.DataSecretAvailableCondition, bootstrapv1.WaitingForMachineReason,
			"waiting for a Machine to own this config (CAPI sets the owner reference when a Machine refers to it)")
		conditions.MarkFalse(config, bootstrapv1.AgentApprovedCondition, bootstrapv1.WaitingForBootstrapDataReason,
			"waiting for the bootstrap data")
		return ctrl.Result{}, nil
	}

	cd, aci, installMsg := r.clusterInstall(ctx, s)
	if dataSecretCreated(config) {
		// The machine has its bootstrap data; what is left is its Agent.
		return ctrl.Result{}, r.reportAgent(ctx, s, aci)
	}
	if recovered, err := r.recoverDataSecret(ctx, s); err != nil || recovered {
		if err != nil {
			conditions.MarkFalse(config, bootstrapv1.DataSecretAvailableCondition, bootstrapv1.CreatingSecretFailedReason, err.Error())
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, r.reportAgent(ctx, s, aci)
	}
	conditions.MarkFalse(config, bootstrapv1.AgentApprovedCondition, bootstrapv1.WaitingForBootstrapDataReason,
		"the machine boots once its bootstrap data exists")

	if s.cluster == nil {
		conditions.MarkFalse(config, bootstrapv1.DataSecretAvailableCondition, bootstrapv1.WaitingForClusterInfrastructureReason,
			fmt.Sprintf("waiting for the Cluster %q", s.machine.Spec.ClusterName))
		return ctrl.Result{}, nil
	}
	if !ptr.Deref(s.cluster.Status.Initialization.InfrastructureProvisioned, false) {
		conditions.MarkFalse(config, bootstrapv1.DataSecretAvailableCondition, bootstrapv1.WaitingForClusterInfrastructureReason,
			fmt.Sprintf("waiting for the infrastructure of Cluster %s to be provisioned", s.cluster.Name))
		return ctrl.Result{}, nil
	}
	if cd == nil || aci == nil {
		conditions.MarkFalse(config, bootstrapv1.DataSecretAvailableCondition, bootstrapv1.WaitingForAssistedInstallerReason, installMsg)
		return ctrl.Result{}, nil
	}
	if !util.IsControlPlaneMachine(s.machine) {
		if ok, msg := gate.WorkerMayJoin(aci); !ok {
			conditions.MarkFalse(config, bootstrapv1.DataSecretAvailableCondition, bootstrapv1.WaitingForInstallCompleteReason, msg)
			return ctrl.Result{}, nil
		}
	}

	infraObj, err := external.GetObjectFromContractVersionedRef(ctx, r.Client, s.machine.Spec.InfrastructureRef, s.machine.Namespace)
	if err != nil {
		ref := s.machine.Spec.InfrastructureRef
		if apierrors.IsNotFound(err) {
			conditions.MarkFalse(config, bootstrapv1.DataSecretAvailableCondition, bootstrapv1.WaitingForInfrastructureMachineReason,
				fmt.Sprintf("waiting for %s %s", ref.Kind, ref.Name))
			return ctrl.Result{}, nil
		}
		conditions.MarkFalse(config, bootstrapv1.DataSecretAvailableCondition, bootstrapv1.WaitingForInfrastructureMachineReason,
			fmt.Sprintf("cannot read %s %s: %v", ref.Kind, ref.Name, err))
		return ctrl.Result{RequeueAfter: infraRetry}, nil
	}

	mode := infra.ResolveBootMode(config.Spec.BootMode, infraObj)
	config.Status.BootMode = mode
	if err := infra.CheckBootMode(mode, infraObj.GroupVersionKind().GroupKind()); err != nil {
		conditions.MarkFalse(config, bootstrapv1.DataSecretAvailableCondition, bootstrapv1.BootModeUnsupportedReason, err.Error())
		return ctrl.Result{}, nil
	}

	b, res, err := r.ensureInfraEnv(ctx, s, cd, infraObj, mode)
	if b == nil || err != nil {
		return res, err
	}
	ie := b.infraEnv
	switch state, msg := infraenv.Image(ie.Status); state {
	case infraenv.ImageFailed:
		conditions.MarkFalse(config, bootstrapv1.DataSecretAvailableCondition, bootstrapv1.InfraEnvFailedReason,
			fmt.Sprintf("assisted-service failed to create the image of InfraEnv %s: %s", ie.Name, msg))
		return ctrl.Result{}, nil
	case infraenv.ImagePending:
		conditions.MarkFalse(config, bootstrapv1.DataSecretAvailableCondition, bootstrapv1.WaitingForInfraEnvToBeReadyReason,
			fmt.Sprintf("waiting for assisted-service to create the image of InfraEnv %s", ie.Name))
		// The InfraEnv's event brings the config back, found through its
		// status.infraEnvRef; that index may not show this reconcile's write
		// yet when the image is ready, so come back anyway.
		return ctrl.Result{RequeueAfter: infraEnvRetry}, nil
	}

	var data []byte
	switch mode {
	case bootstrapv1.BootModeLiveISO:
		if ie.Status.ISODownloadURL == "" {
			conditions.MarkFalse(config, bootstrapv1.DataSecretAvailableCondition, bootstrapv1.WaitingForInfraEnvToBeReadyReason,
				fmt.Sprintf("waiting for InfraEnv %s to publish its ISO URL", ie.Name))
			return ctrl.Result{}, nil
		}
		// The image is right before the Secret exists: CAPM3 provisions
		// nothing without bootstrap data, so the host cannot boot another
		// ISO.
		if err := r.propagateISO(ctx, s, b, infraObj); err != nil {
			conditions.MarkFalse(config, bootstrapv1.DataSecretAvailableCondition, bootstrapv1.PropagatingLiveISOURLFailedReason, err.Error())
			return ctrl.Result{}, err
		}
		data = []byte{}
	case bootstrapv1.BootModeDiscoveryIgnition:
		exists, err := r.secretExists(ctx, config)
		if err != nil {
			conditions.MarkFalse(config, bootstrapv1.DataSecretAvailableCondition, bootstrapv1.CreatingSecretFailedReason, err.Error())
			return ctrl.Result{}, err
		}
		if !exists {
			if data, res = r.fetchIgnition(ctx, config, ie); data == nil {
				return res, nil
			}
		}
	}

	if data != nil {
		created, err := r.createSecret(ctx, s, data, mode)
		if err != nil {
			conditions.MarkFalse(config, bootstrapv1.DataSecretAvailableCondition, bootstrapv1.CreatingSecretFailedReason, err.Error())
			return ctrl.Result{}, err
		}
		if created {
			r.Recorder.Eventf(config, nil, corev1.EventTypeNormal, "DataSecretCreated", "Bootstrap",
				"Bootstrap data Secret %s is ready (%s, InfraEnv %s)", config.Name, mode, ie.Name)
		}
	}
	config.Status.DataSecretName = config.Name
	config.Status.Initialization.DataSecretCreated = ptr.To(true)
	conditions.MarkTrue(config, bootstrapv1.DataSecretAvailableCondition,
		fmt.Sprintf("Secret %s holds the bootstrap data (%s, InfraEnv %s)", config.Name, mode, ie.Name),
		bootstrapv1.DataSecretAvailableReason)
	return ctrl.Result{}, r.reportAgent(ctx, s, aci)
}

func dataSecretCreated(c *bootstrapv1.OpenshiftAssistedConfig) bool {
	return ptr.Deref(c.Status.Initialization.DataSecretCreated, false) && c.Status.DataSecretName != ""
}

// clusterInstall finds the cluster's ClusterDeployment and
// AgentClusterInstall, or says which is missing.
func (r *Reconciler) clusterInstall(ctx context.Context, s *scope) (*hivev1.ClusterDeployment, *hiveextv1beta1.AgentClusterInstall, string) {
	return install.Find(ctx, r.Client, s.config.Namespace, s.machine.Spec.ClusterName)
}

// fetchIgnition gets the InfraEnv's discovery ignition. It returns nil data
// with the requeue when the fetch failed or cannot start yet (a condition
// says why; a failed fetch is retried, not returned as an error).
func (r *Reconciler) fetchIgnition(ctx context.Context, config *bootstrapv1.OpenshiftAssistedConfig, ie *aiv1beta1.InfraEnv) ([]byte, ctrl.Result) {
	u, err := infraenv.IgnitionURL(ie.Status, r.AssistedURL)
	if err != nil {
		conditions.MarkFalse(config, bootstrapv1.DataSecretAvailableCondition, bootstrapv1.WaitingForInfraEnvToBeReadyReason,
			fmt.Sprintf("waiting for InfraEnv %s to publish where its discovery ignition is: %v", ie.Name, err))
		return nil, ctrl.Result{}
	}
	data, err := r.Fetcher.Fetch(ctx, u)
	if err != nil {
		var fe *ignition.Error
		retry := fetchRetry
		msg := fmt.Sprintf("fetching the discovery ignition of InfraEnv %s: %v", ie.Name, err)
		if errors.As(err, &fe) && fe.Terminal {
			retry = terminalRetry
			msg += " (if assisted-service's certificate is not trusted, pass its CA with --assisted-ca-bundle)"
		}
		conditions.MarkFalse(config, bootstrapv1.DataSecretAvailableCondition, bootstrapv1.IgnitionFetchFailedReason, msg)
		r.Recorder.Eventf(config, nil, corev1.EventTypeWarning, bootstrapv1.IgnitionFetchFailedReason, "FetchIgnition", "%s", msg)
		return nil, ctrl.Result{RequeueAfter: retry}
	}
	return data, ctrl.Result{}
}
