package osbuild

// The MachineConfigPool condition types the controller owns (upstream's
// names). Exactly one of them is True for an opted-in pool; the others are
// False with the same reason. Opting out removes all four.
const (
	ConditionBuildPending = "BuildPending"
	ConditionBuilding     = "Building"
	ConditionBuildSuccess = "BuildSuccess"
	ConditionBuildFailed  = "BuildFailed"
)

// Conditions lists the owned condition types in the order they are written.
var Conditions = []string{ConditionBuildPending, ConditionBuilding, ConditionBuildSuccess, ConditionBuildFailed}

// Reasons of the True condition.
const (
	// ReasonPending (BuildPending): the build object exists, the builder has
	// not started it yet.
	ReasonPending = "Pending"
	// ReasonRunning (Building): the builder is building or pushing.
	ReasonRunning = "Running"
	// ReasonBuildSucceeded (BuildSuccess): the image is built and pushed and
	// the pool's desired-os-image annotation names it (upstream's reason).
	ReasonBuildSucceeded = "BuildSucceeded"

	// ReasonBuildFailed (BuildFailed): the builder reported a failure. The
	// build objects are kept; delete the build object to retry.
	ReasonBuildFailed = "BuildFailed"
	// ReasonTimeout (BuildFailed): the build ran longer than --build-timeout
	// and was stopped.
	ReasonTimeout = "Timeout"
	// ReasonCancelled (BuildFailed): someone else cancelled the build.
	ReasonCancelled = "Cancelled"
	// ReasonNoDigest (BuildFailed): the builder reported success but no
	// image digest.
	ReasonNoDigest = "NoDigest"

	// Input problems (BuildFailed): nothing is built until they are fixed.

	// ReasonNoRenderedConfig: the pool's spec.configuration.name is empty.
	ReasonNoRenderedConfig = "NoRenderedConfig"
	// ReasonMachineConfigNotFound: the rendered MachineConfig does not exist.
	ReasonMachineConfigNotFound = "MachineConfigNotFound"
	// ReasonConfigMapNotFound: machine-os-builder-config (or its alias
	// on-cluster-build-config) or machine-config-osimageurl is missing.
	ReasonConfigMapNotFound = "ConfigMapNotFound"
	// ReasonInvalidConfigMap: an input ConfigMap lacks a key or has an
	// invalid value.
	ReasonInvalidConfigMap = "InvalidConfigMap"
	// ReasonSecretNotFound: a pull or push secret named by the ConfigMap is
	// missing.
	ReasonSecretNotFound = "SecretNotFound"
	// ReasonInvalidSecret: a pull or push secret has no usable
	// .dockerconfigjson.
	ReasonInvalidSecret = "InvalidSecret"
	// ReasonInvalidMachineOSConfig: the pool's MachineOSConfig has an
	// unusable value (builder type, push spec, push secret).
	ReasonInvalidMachineOSConfig = "InvalidMachineOSConfig"
	// ReasonRenderedConfigTooLarge: the compressed rendered MachineConfig
	// does not fit in a ConfigMap.
	ReasonRenderedConfigTooLarge = "RenderedConfigTooLarge"
)

// InputError is a problem with the build's inputs that the user must fix.
// Reason is one of the input reasons above; Message says what to do.
type InputError struct {
	Reason  string
	Message string
}

func (e *InputError) Error() string { return e.Reason + ": " + e.Message }

func inputError(reason, message string) *InputError {
	return &InputError{Reason: reason, Message: message}
}
