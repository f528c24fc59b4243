package authority

import (
	mapiv1beta1 "github.com/ocp-capi/ocp-capi/internal/consumed/machine/v1beta1"
)

// The conditions on MAPI MachineSets and Machines that the add-on writes.
const (
	// SynchronizedCondition is the sync controllers': the non-authoritative
	// side mirrors generation status.synchronizedGeneration of the
	// authoritative one (upstream's name).
	SynchronizedCondition mapiv1beta1.ConditionType = "Synchronized"
	// MigratedCondition is the migration controller's: True when
	// status.authoritativeAPI is spec.authoritativeAPI and nothing is left
	// to do for it; False while a switch runs or waits, the reason saying
	// for what.
	MigratedCondition mapiv1beta1.ConditionType = "Migrated"
)

// Reasons of the Migrated condition.
const (
	// ReasonReached (True): the API spec asks for is authoritative.
	ReasonReached = "AuthoritativeAPIReached"
	// ReasonWaitingForSync (False, Warning): the switch waits until the
	// other side mirrors the current generation; see Synchronized.
	ReasonWaitingForSync = "WaitingForSynchronization"
	// ReasonWaitingForPartner (False, Warning): the Cluster API object the
	// switch needs does not exist (yet).
	ReasonWaitingForPartner = "WaitingForPartner"
	// ReasonPausingOldSide (False, Info): the old side is being paused.
	ReasonPausingOldSide = "PausingOldSide"
	// ReasonWaitingForPause (False, Info): the old side has not said Paused
	// yet.
	ReasonWaitingForPause = "WaitingForPause"
	// ReasonMigrating (False, Info): status.authoritativeAPI is Migrating.
	ReasonMigrating = "Migrating"
)

// ReasonAuthoritativeAPIChanged is the reason of the Synchronized=Unknown
// the migration controller writes at a handover, with
// synchronizedGeneration removed: the sync from the new authority has not
// run yet (upstream's reason).
const ReasonAuthoritativeAPIChanged = "AuthoritativeAPIChanged"

// MigrationOwner is the migration controller's field manager.
const MigrationOwner = "migration-controller"
