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
	"github.com/ocp-capi/ocp-capi/internal/skeleton"
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

// reconcileNormal runs the config's phases in order; each stops the flow
// when it waits (a condition says for what).
func (r *Reconciler) reconcileNormal(ctx context.Context, s *scope) (ctrl.Result, error) {
	return skeleton.RunPhases(ctx, s,
		r.waitForMachine,      // a Machine owns the config
		r.readClusterInstall,  // the cluster's ClusterDeployment and AgentClusterInstall
		r.ensureBootstrapData, // the bootstrap data Secret, unless the machine has it: see dataPhases
		r.reportAgent,         // AgentApproved, from the Agent bound to the machine
	)
}

// ensureBootstrapData runs the phases that make the machine's bootstrap
// data, unless it has it already; the flow goes on (to the Agent) once it
// has.
func (r *Reconciler) ensureBootstrapData(ctx context.Context, s *scope) (ctrl.Result, error) {
	if dataSecretCreated(s.config) {
		return ctrl.Result{}, nil // what is left is the machine's Agent
	}
	res, err := skeleton.RunPhases(ctx, s,
		r.recoverDataSecret, // a Secret the Machine already uses (clusterctl move)
		r.waitForCluster,    // the Cluster's infrastructure, the hive objects, the day-1/day-2 gate
		r.readInfraMachine,  // the infrastructure machine and the boot mode it allows
		r.ensureInfraEnv,    // the InfraEnv the machine boots from
		r.waitForImage,      // its discovery image
		r.readBootData,      // the ISO (set on the Metal3Machine) or the discovery ignition
		r.writeDataSecret,   // the Secret, status.dataSecretName and dataSecretCreated
	)
	if err == nil && !dataSecretCreated(s.config) {
		err = skeleton.ErrStop // waiting, or the Secret failed: a condition says which
	}
	return res, err
}

// waitForMachine stops the flow while no Machine owns the config, or once
// the Machine went away after it booted (the garbage collector deletes the
// config next; nothing to do until then).
func (r *Reconciler) waitForMachine(_ context.Context, s *scope) (ctrl.Result, error) {
	if s.machine != nil {
		return ctrl.Result{}, nil
	}
	if !dataSecretCreated(s.config) {
		conditions.MarkFalse(s.config, bootstrapv1.DataSecretAvailableCondition, bootstrapv1.WaitingForMachineReason,
			"waiting for a Machine to own this config (CAPI sets the owner reference when a Machine refers to it)")
		conditions.MarkFalse(s.config, bootstrapv1.AgentApprovedCondition, bootstrapv1.WaitingForBootstrapDataReason,
			"waiting for the bootstrap data")
	}
	return ctrl.Result{}, skeleton.ErrStop
}

// readClusterInstall finds the cluster's ClusterDeployment and
// AgentClusterInstall, or says which is missing.
func (r *Reconciler) readClusterInstall(ctx context.Context, s *scope) (ctrl.Result, error) {
	s.cd, s.aci, s.installMsg = install.Find(ctx, r.Client, s.config.Namespace, s.machine.Spec.ClusterName)
	return ctrl.Result{}, nil
}

// waitForCluster stops the flow until the Cluster's infrastructure is
// provisioned and its hive objects exist, and, for a worker, while the
// day-1/day-2 gate holds it back.
func (r *Reconciler) waitForCluster(_ context.Context, s *scope) (ctrl.Result, error) {
	config := s.config
	switch {
	case s.cluster == nil:
		conditions.MarkFalse(config, bootstrapv1.DataSecretAvailableCondition, bootstrapv1.WaitingForClusterInfrastructureReason,
			fmt.Sprintf("waiting for the Cluster %q", s.machine.Spec.ClusterName))
	case !ptr.Deref(s.cluster.Status.Initialization.InfrastructureProvisioned, false):
		conditions.MarkFalse(config, bootstrapv1.DataSecretAvailableCondition, bootstrapv1.WaitingForClusterInfrastructureReason,
			fmt.Sprintf("waiting for the infrastructure of Cluster %s to be provisioned", s.cluster.Name))
	case s.cd == nil || s.aci == nil:
		conditions.MarkFalse(config, bootstrapv1.DataSecretAvailableCondition, bootstrapv1.WaitingForAssistedInstallerReason, s.installMsg)
	case util.IsControlPlaneMachine(s.machine):
		return ctrl.Result{}, nil
	default:
		ok, msg := gate.WorkerMayJoin(s.aci)
		if ok {
			return ctrl.Result{}, nil
		}
		conditions.MarkFalse(config, bootstrapv1.DataSecretAvailableCondition, bootstrapv1.WaitingForInstallCompleteReason, msg)
	}
	return ctrl.Result{}, skeleton.ErrStop
}

// readInfraMachine reads the Machine's infrastructure machine and resolves
// the boot mode, which its kind must support.
func (r *Reconciler) readInfraMachine(ctx context.Context, s *scope) (ctrl.Result, error) {
	config, ref := s.config, s.machine.Spec.InfrastructureRef
	infraObj, err := external.GetObjectFromContractVersionedRef(ctx, r.Client, ref, s.machine.Namespace)
	switch {
	case apierrors.IsNotFound(err):
		conditions.MarkFalse(config, bootstrapv1.DataSecretAvailableCondition, bootstrapv1.WaitingForInfrastructureMachineReason,
			fmt.Sprintf("waiting for %s %s", ref.Kind, ref.Name))
		return ctrl.Result{}, skeleton.ErrStop
	case err != nil:
		conditions.MarkFalse(config, bootstrapv1.DataSecretAvailableCondition, bootstrapv1.WaitingForInfrastructureMachineReason,
			fmt.Sprintf("cannot read %s %s: %v", ref.Kind, ref.Name, err))
		return ctrl.Result{RequeueAfter: infraRetry}, skeleton.ErrStop
	}
	s.infraObj = infraObj
	s.mode = infra.ResolveBootMode(config.Spec.BootMode, infraObj)
	config.Status.BootMode = s.mode
	if err := infra.CheckBootMode(s.mode, infraObj.GroupVersionKind().GroupKind()); err != nil {
		conditions.MarkFalse(config, bootstrapv1.DataSecretAvailableCondition, bootstrapv1.BootModeUnsupportedReason, err.Error())
		return ctrl.Result{}, skeleton.ErrStop
	}
	return ctrl.Result{}, nil
}

// waitForImage stops the flow until assisted-service has made the
// InfraEnv's discovery image.
func (r *Reconciler) waitForImage(_ context.Context, s *scope) (ctrl.Result, error) {
	ie := s.boot.infraEnv
	switch state, msg := infraenv.Image(ie.Status); state {
	case infraenv.ImageFailed:
		conditions.MarkFalse(s.config, bootstrapv1.DataSecretAvailableCondition, bootstrapv1.InfraEnvFailedReason,
			fmt.Sprintf("assisted-service failed to create the image of InfraEnv %s: %s", ie.Name, msg))
		return ctrl.Result{}, skeleton.ErrStop
	case infraenv.ImagePending:
		conditions.MarkFalse(s.config, bootstrapv1.DataSecretAvailableCondition, bootstrapv1.WaitingForInfraEnvToBeReadyReason,
			fmt.Sprintf("waiting for assisted-service to create the image of InfraEnv %s", ie.Name))
		// The InfraEnv's event brings the config back, found through its
		// status.infraEnvRef; that index may not show this reconcile's write
		// yet when the image is ready, so come back anyway.
		return ctrl.Result{RequeueAfter: infraEnvRetry}, skeleton.ErrStop
	}
	return ctrl.Result{}, nil
}

// readBootData gets what the machine boots: in LiveISO mode the InfraEnv's
// ISO, set on the Metal3Machine (and its template) before the Secret exists
// (CAPM3 provisions nothing without bootstrap data, so the host cannot boot
// another ISO), with empty data; in DiscoveryIgnition mode the discovery
// ignition, unless the Secret exists already.
func (r *Reconciler) readBootData(ctx context.Context, s *scope) (ctrl.Result, error) {
	config, ie := s.config, s.boot.infraEnv
	switch s.mode {
	case bootstrapv1.BootModeLiveISO:
		if ie.Status.ISODownloadURL == "" {
			conditions.MarkFalse(config, bootstrapv1.DataSecretAvailableCondition, bootstrapv1.WaitingForInfraEnvToBeReadyReason,
				fmt.Sprintf("waiting for InfraEnv %s to publish its ISO URL", ie.Name))
			return ctrl.Result{}, skeleton.ErrStop
		}
		if err := r.propagateISO(ctx, s, s.boot, s.infraObj); err != nil {
			conditions.MarkFalse(config, bootstrapv1.DataSecretAvailableCondition, bootstrapv1.PropagatingLiveISOURLFailedReason, err.Error())
			return ctrl.Result{}, err
		}
		s.data = []byte{}
	case bootstrapv1.BootModeDiscoveryIgnition:
		exists, err := r.secretExists(ctx, config)
		if err != nil {
			conditions.MarkFalse(config, bootstrapv1.DataSecretAvailableCondition, bootstrapv1.CreatingSecretFailedReason, err.Error())
			return ctrl.Result{}, err
		}
		if !exists {
			data, res := r.fetchIgnition(ctx, config, ie)
			if data == nil {
				return res, skeleton.ErrStop
			}
			s.data = data
		}
	}
	return ctrl.Result{}, nil
}

// writeDataSecret creates the bootstrap data Secret (unless it exists) and
// says so in the status: the machine may boot.
func (r *Reconciler) writeDataSecret(ctx context.Context, s *scope) (ctrl.Result, error) {
	config, ie := s.config, s.boot.infraEnv
	if s.data != nil {
		created, err := r.createSecret(ctx, s, s.data, s.mode)
		if err != nil {
			conditions.MarkFalse(config, bootstrapv1.DataSecretAvailableCondition, bootstrapv1.CreatingSecretFailedReason, err.Error())
			return ctrl.Result{}, err
		}
		if created {
			r.Recorder.Eventf(config, nil, corev1.EventTypeNormal, "DataSecretCreated", "Bootstrap",
				"Bootstrap data Secret %s is ready (%s, InfraEnv %s)", config.Name, s.mode, ie.Name)
		}
	}
	config.Status.DataSecretName = config.Name
	config.Status.Initialization.DataSecretCreated = ptr.To(true)
	conditions.MarkTrue(config, bootstrapv1.DataSecretAvailableCondition,
		fmt.Sprintf("Secret %s holds the bootstrap data (%s, InfraEnv %s)", config.Name, s.mode, ie.Name),
		bootstrapv1.DataSecretAvailableReason)
	return ctrl.Result{}, nil
}

func dataSecretCreated(c *bootstrapv1.OpenshiftAssistedConfig) bool {
	return ptr.Deref(c.Status.Initialization.DataSecretCreated, false) && c.Status.DataSecretName != ""
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
