package openshiftassistedconfig

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/ocp-capi/ocp-capi/api/bootstrap/v1alpha2"
	"github.com/ocp-capi/ocp-capi/internal/conditions"
	"github.com/ocp-capi/ocp-capi/internal/skeleton"
)

// secretExists tells whether the config's bootstrap data Secret exists. A
// Secret of that name that the config does not own is an error: it is not
// taken over. Secrets are read uncached: caching them would hold every
// Secret of the cluster in memory.
func (r *Reconciler) secretExists(ctx context.Context, config *bootstrapv1.OpenshiftAssistedConfig) (bool, error) {
	secret := &corev1.Secret{}
	err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: config.Namespace, Name: config.Name}, secret)
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, err
	}
	if !metav1.IsControlledBy(secret, config) {
		return false, fmt.Errorf("Secret %s exists and is not owned by this config; delete or rename it", secret.Name) //nolint:staticcheck // Secret is a kind
	}
	return true, nil
}

// createSecret creates the bootstrap data Secret: key value holds data (the
// discovery ignition, or nothing for a live ISO), key format says
// ignition; type cluster.x-k8s.io/secret; owned by the config. It reports
// whether it created it (false: it was there already).
func (r *Reconciler) createSecret(ctx context.Context, s *scope, data []byte, mode bootstrapv1.BootMode) (bool, error) {
	config := s.config
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name:      config.Name,
			Namespace: config.Namespace,
			Labels:    map[string]string{clusterv1.ClusterNameLabel: s.machine.Spec.ClusterName},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: bootstrapv1.GroupVersion.String(), Kind: "OpenshiftAssistedConfig", Name: config.Name, UID: config.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Type: clusterv1.ClusterSecretType,
		Data: map[string][]byte{"value": data},
	}
	if mode == bootstrapv1.BootModeDiscoveryIgnition {
		secret.Data["format"] = []byte("ignition")
	}
	err := r.Client.Create(ctx, secret)
	if apierrors.IsAlreadyExists(err) {
		_, err = r.secretExists(ctx, config)
		return false, err
	}
	return err == nil, err
}

// recoverDataSecret rebuilds the status of a config that lost it while its
// Machine already boots from the config's Secret: clusterctl move (or a
// restore from backup) carries spec and Secrets, not status. The host has
// booted from that data, so neither an InfraEnv nor a new fetch is wanted;
// CABPK recovers the same way. When it did, the data phases stop there;
// otherwise AgentApproved waits for the data they make.
func (r *Reconciler) recoverDataSecret(ctx context.Context, s *scope) (ctrl.Result, error) {
	config := s.config
	if name := s.machine.Spec.Bootstrap.DataSecretName; name != nil && *name == config.Name {
		exists, err := r.secretExists(ctx, config)
		if err != nil {
			conditions.MarkFalse(config, bootstrapv1.DataSecretAvailableCondition, bootstrapv1.CreatingSecretFailedReason, err.Error())
			return ctrl.Result{}, err
		}
		if exists {
			config.Status.DataSecretName = config.Name
			config.Status.Initialization.DataSecretCreated = ptr.To(true)
			conditions.MarkTrue(config, bootstrapv1.DataSecretAvailableCondition,
				fmt.Sprintf("Secret %s holds the bootstrap data, which Machine %s already uses (status rebuilt, e.g. after clusterctl move)",
					config.Name, s.machine.Name), bootstrapv1.DataSecretAvailableReason)
			return ctrl.Result{}, skeleton.ErrStop
		}
	}
	conditions.MarkFalse(config, bootstrapv1.AgentApprovedCondition, bootstrapv1.WaitingForBootstrapDataReason,
		"the machine boots once its bootstrap data exists")
	return ctrl.Result{}, nil
}
