package v1alpha1

// Condition types, reasons and event reasons on Rollouts and
// ClusterRollouts.
const (
	// ConditionProgressing is True while a revision is being released.
	ConditionProgressing = "Progressing"
	// ConditionPaused is True while the rollout waits for a person: the
	// suspended annotation, or a stage that pauses until promoted.
	ConditionPaused = "Paused"
	// ConditionCompleted is True once the current revision reached every
	// stage and each cluster is healthy (or failed within maxFailures).
	ConditionCompleted = "Completed"
	// ConditionFailed is True while a stage has more failed clusters than
	// maxFailures.
	ConditionFailed = "Failed"

	// ReasonStageProgressing: the current stage's clusters are being
	// released or becoming healthy.
	ReasonStageProgressing = "StageProgressing"
	// ReasonStageSoaking: the current stage is healthy and soaks for its
	// minSuccessTime.
	ReasonStageSoaking = "StageSoaking"
	// ReasonWaitingForGate: the next stage waits for a closed gate.
	ReasonWaitingForGate = "WaitingForGate"
	// ReasonWaitingForPromotion: the next stage pauses until promoted.
	ReasonWaitingForPromotion = "WaitingForPromotion"
	// ReasonSuspended: the suspended annotation on the Rollout pauses it.
	ReasonSuspended = "Suspended"
	// ReasonNotPaused: nothing pauses the rollout.
	ReasonNotPaused = "NotPaused"
	// ReasonRolloutCompleted: every stage has the current revision.
	ReasonRolloutCompleted = "RolloutCompleted"
	// ReasonStageFailed: more clusters of a stage failed than maxFailures.
	ReasonStageFailed = "StageFailed"
	// ReasonNoFailure: no stage has failed more than maxFailures.
	ReasonNoFailure = "NoFailure"
	// ReasonPolicyNotFound: spec.policyRef names no policy; nothing is
	// released by this rollout and nothing is changed.
	ReasonPolicyNotFound = "PolicyNotFound"
	// ReasonNoRevision: the policy claims no template yet; nothing to roll
	// out.
	ReasonNoRevision = "NoRevision"
	// ReasonInvalidSpec: the spec cannot be used (an unknown gate name
	// format, a selector that does not parse); nothing new is released.
	ReasonInvalidSpec = "InvalidSpec"

	// Cluster reasons in status.clusters[].reason.

	// ReasonWaitingForStage: the cluster's stage has not started.
	ReasonWaitingForStage = "WaitingForStage"
	// ReasonWaitingForConcurrency: the stage releases maxConcurrency
	// clusters at a time and this one's turn has not come.
	ReasonWaitingForConcurrency = "WaitingForConcurrency"
	// ReasonReleased: the revision was released to the cluster.
	ReasonReleased = "Released"
	// ReasonUnhealthyAgain: the cluster was healthy at this revision and is
	// not now; its stage waits for it, and the progress deadline (which
	// judges progress, not blips) does not apply again.
	ReasonUnhealthyAgain = "UnhealthyAgain"
	// ReasonHealthy: every template is updated and available there.
	ReasonHealthy = "Healthy"
	// ReasonProgressDeadlineExceeded: not healthy within progressDeadline.
	ReasonProgressDeadlineExceeded = "ProgressDeadlineExceeded"
	// ReasonRolloutFailed: an earlier stage failed; the cluster keeps what
	// it has.
	ReasonRolloutFailed = "RolloutFailed"
	// ReasonRolledBack: the cluster was put back on its last healthy
	// revision (onFailure: Rollback, or an abort).
	ReasonRolledBack = "RolledBack"
	// ReasonHeldElsewhere: released by the rollout, but something else
	// holds the cluster's Works (a suspension, a gate); the message says
	// what. Its progress deadline does not run meanwhile.
	ReasonHeldElsewhere = "HeldElsewhere"
	// ReasonAborted: a person aborted the revision.
	ReasonAborted = "Aborted"
	// ReasonAnalysisRunning: healthy; its analysis is taking measurements.
	ReasonAnalysisRunning = "AnalysisRunning"
	// ReasonAnalysisFailed: its analysis had more failed measurements
	// than failureLimit.
	ReasonAnalysisFailed = "AnalysisFailed"
	// ReasonAnalysisInconclusive: its analysis had more inconclusive
	// measurements in a row than inconclusiveLimit (no data, a query
	// error, Prometheus unreachable); on a rollout's Progressing and
	// Paused conditions, its stage pauses until measurements succeed
	// again.
	ReasonAnalysisInconclusive = "AnalysisInconclusive"

	// EventReasonRevisionStarted: a new revision starts from the first
	// stage.
	EventReasonRevisionStarted = "RevisionStarted"
	// EventReasonStageStarted: a stage's first clusters are released.
	EventReasonStageStarted = "StageStarted"
	// EventReasonStageCompleted: a stage soaked and the next may start.
	EventReasonStageCompleted = "StageCompleted"
	// EventReasonClusterFailed: a cluster did not become healthy in time.
	EventReasonClusterFailed = "ClusterFailed"
	// EventReasonRolloutFailed: a stage failed more than maxFailures.
	EventReasonRolloutFailed = "RolloutFailed"
	// EventReasonRolledBack: a cluster was put back on its last healthy
	// revision.
	EventReasonRolledBack = "RolledBack"
	// EventReasonRolloutAborted: a person aborted the revision.
	EventReasonRolloutAborted = "RolloutAborted"
	// EventReasonRolloutCompleted: the revision reached every stage.
	EventReasonRolloutCompleted = "RolloutCompleted"
	// EventReasonMeasurement<Phase>: a cluster's analysis took a
	// measurement with that verdict.
	EventReasonMeasurementSuccessful   = "MeasurementSuccessful"
	EventReasonMeasurementFailed       = "MeasurementFailed"
	EventReasonMeasurementInconclusive = "MeasurementInconclusive"
	EventReasonMeasurementError        = "MeasurementError"
	// EventReasonAnalysisSuccessful: a cluster's analysis passed.
	EventReasonAnalysisSuccessful = "AnalysisSuccessful"
	// EventReasonAnalysisInconclusive: a cluster's analysis is
	// inconclusive and its stage pauses.
	EventReasonAnalysisInconclusive = "AnalysisInconclusive"
)
