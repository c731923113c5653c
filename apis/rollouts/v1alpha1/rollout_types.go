package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// GroupVersion is rollouts.federator.dev/v1alpha1.
var GroupVersion = schema.GroupVersion{Group: "rollouts.federator.dev", Version: "v1alpha1"}

// Keys the rollout controller and the CLI write.
const (
	// RevisionAnnotation on a ResourceBinding or ClusterResourceBinding is
	// "<rollout uid>/<revision>/<template hash>": the revision of the
	// Rollout that took in the template's current content. A cluster gets
	// that content once the Rollout has released the revision to it.
	RevisionAnnotation = "rollouts.federator.dev/revision"
	// PromoteAnnotation on a Rollout is "<revision>/<stage>": a person let
	// that stage of that revision start although it pauses
	// (`federator rollout promote`).
	PromoteAnnotation = "rollouts.federator.dev/promote"
	// AbortAnnotation on a Rollout is "<revision>": a person stopped that
	// revision (`federator rollout abort`): nothing more is released and
	// the clusters that got it go back to the last revision healthy there.
	AbortAnnotation = "rollouts.federator.dev/abort"
	// RolloutUIDLabel on a ControllerRevision names the Rollout (by UID)
	// whose revision it keeps.
	RolloutUIDLabel = "rollouts.federator.dev/rollout-uid"
	// HistoryNamespace keeps the revisions of ClusterRollouts (a
	// Rollout's are kept in its own namespace).
	HistoryNamespace = "federator-system"
)

// RemainingStage names the implicit last stage: the clusters the policy
// places that no stage names or selects.
const RemainingStage = "remaining"

// Failure policies.
const (
	// OnFailureHold stops the rollout where it failed: nothing more is
	// released until a new revision or a person acts.
	OnFailureHold = "Hold"
	// OnFailureRollback stops the rollout and puts each failed cluster back
	// on the last revision that was healthy there.
	OnFailureRollback = "Rollback"
)

// Cluster states in status.clusters[].state.
const (
	// StatePending: the cluster's stage has not come; it keeps the revision
	// it has.
	StatePending = "Pending"
	// StateProgressing: released, not healthy yet.
	StateProgressing = "Progressing"
	// StateHealthy: released and healthy.
	StateHealthy = "Healthy"
	// StateFailed: released and not healthy by the progress deadline.
	StateFailed = "Failed"
	// StateRolledBack: failed and put back on the last healthy revision.
	StateRolledBack = "RolledBack"
	// StateHeld: the rollout stopped on a failure before the cluster's
	// stage; it keeps the revision it has.
	StateHeld = "Held"
)

// Rollout releases each new revision of the templates its PropagationPolicy
// claims stage by stage.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=rollouts,scope=Namespaced,categories=federator
// +kubebuilder:printcolumn:name="POLICY",type=string,JSONPath=`.spec.policyRef.name`
// +kubebuilder:printcolumn:name="REVISION",type=integer,JSONPath=`.status.revision`
// +kubebuilder:printcolumn:name="STAGE",type=string,JSONPath=`.status.currentStage`
// +kubebuilder:printcolumn:name="COMPLETED",type=string,JSONPath=`.status.conditions[?(@.type=="Completed")].status`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type Rollout struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   RolloutSpec   `json:"spec"`
	Status RolloutStatus `json:"status,omitempty"`
}

// ClusterRollout releases each new revision of the templates its
// ClusterPropagationPolicy claims stage by stage.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=clusterrollouts,scope=Cluster,categories=federator
// +kubebuilder:printcolumn:name="POLICY",type=string,JSONPath=`.spec.policyRef.name`
// +kubebuilder:printcolumn:name="REVISION",type=integer,JSONPath=`.status.revision`
// +kubebuilder:printcolumn:name="STAGE",type=string,JSONPath=`.status.currentStage`
// +kubebuilder:printcolumn:name="COMPLETED",type=string,JSONPath=`.status.conditions[?(@.type=="Completed")].status`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type ClusterRollout struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   RolloutSpec   `json:"spec"`
	Status RolloutStatus `json:"status,omitempty"`
}

// RolloutSpec says which policy's templates roll out and through which
// stages.
//
// +kubebuilder:validation:XValidation:rule="!has(self.stages) || self.stages.all(a, !has(a.clusters) || self.stages.all(b, a.name == b.name || !has(b.clusters) || a.clusters.all(c, !(c in b.clusters))))",message="a cluster is named in two stages: name each cluster in one stage only"
type RolloutSpec struct {
	// PolicyRef names the policy whose templates roll out: a
	// PropagationPolicy in the Rollout's namespace, or a
	// ClusterPropagationPolicy for a ClusterRollout.
	PolicyRef PolicyReference `json:"policyRef"`

	// Stages in order. Clusters the policy places that no stage names
	// form an implicit last stage.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=20
	// +optional
	Stages []Stage `json:"stages,omitempty"`

	// ProgressDeadline is how long a released cluster has to become
	// healthy before it counts as failed. Default 10m.
	// +optional
	ProgressDeadline *metav1.Duration `json:"progressDeadline,omitempty"`

	// MaxFailures is how many clusters of a stage may fail (a number, or
	// a percentage of the stage's clusters) before the rollout stops.
	// Default 0.
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:MaxLength=10
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 0 : self.matches('^[0-9]+%?$')",message="spec.maxFailures must be a whole number of clusters (0 or more) or a percentage of the stage's clusters, e.g. 1 or 25%"
	// +optional
	MaxFailures *intstr.IntOrString `json:"maxFailures,omitempty"`

	// OnFailure is what happens when a stage has more failures than
	// MaxFailures: Hold stops where it is; Rollback also puts each failed
	// cluster back on the last revision that was healthy there.
	// +kubebuilder:validation:Enum=Hold;Rollback
	// +kubebuilder:default=Hold
	// +optional
	OnFailure string `json:"onFailure,omitempty"`

	// RevisionHistoryLimit is how many revisions are kept on the hub (as
	// ControllerRevisions), for Rollback and `federator rollout undo`.
	// Default 10.
	// +kubebuilder:validation:Minimum=2
	// +optional
	RevisionHistoryLimit *int32 `json:"revisionHistoryLimit,omitempty"`

	// Analysis judges each cluster of every stage by its metrics (a
	// stage's own analysis replaces it). See Analysis.
	// +optional
	Analysis *Analysis `json:"analysis,omitempty"`
}

// PolicyReference names a policy.
type PolicyReference struct {
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}

// Stage is a group of clusters released together.
type Stage struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`

	// Clusters by name.
	// +listType=set
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MaxLength=253
	// +optional
	Clusters []string `json:"clusters,omitempty"`

	// ClusterSelector selects clusters by the labels of their Cluster
	// objects (those no earlier stage names).
	// +optional
	ClusterSelector *metav1.LabelSelector `json:"clusterSelector,omitempty"`

	// MaxConcurrency is how many of the stage's clusters are released at
	// once (a number from 1, or a percentage of the stage's clusters).
	// Default: all of them. A value the controller cannot read (stored
	// before admission refused it) releases one at a time.
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:MaxLength=10
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 1 : self.matches('^[1-9][0-9]*%?$')",message="spec.stages[].maxConcurrency must be a whole number of clusters (1 or more; 0 would stall the stage) or a percentage of the stage's clusters above 0, e.g. 1 or 25%"
	// +optional
	MaxConcurrency *intstr.IntOrString `json:"maxConcurrency,omitempty"`

	// MinSuccessTime is how long the stage stays healthy (soaks) before
	// the next stage starts.
	// +optional
	MinSuccessTime *metav1.Duration `json:"minSuccessTime,omitempty"`

	// Gates the stage waits for before it starts: names of Gates in the
	// Rollout's namespace, or namespace/name.
	// +optional
	Gates []string `json:"gates,omitempty"`

	// Pause stops the rollout before this stage until a person promotes
	// it (`federator rollout promote`).
	// +optional
	Pause bool `json:"pause,omitempty"`

	// Analysis judges each cluster of the stage by its metrics; it
	// replaces spec.analysis for this stage.
	// +optional
	Analysis *Analysis `json:"analysis,omitempty"`
}

// RolloutStatus says where the rollout of the current revision stands.
type RolloutStatus struct {
	// ObservedGeneration is the generation of the spec this status is for.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Revision counts the contents the rollout has taken in: it grows by
	// one each time a claimed template's content changes.
	// +optional
	Revision int64 `json:"revision,omitempty"`

	// CurrentStage is the stage being released or soaking; empty once
	// the revision reached every stage.
	// +optional
	CurrentStage string `json:"currentStage,omitempty"`

	// SoakStartedAt is when the current stage became healthy; the next
	// stage starts MinSuccessTime after it (plus the time spent paused).
	// +optional
	SoakStartedAt *metav1.Time `json:"soakStartedAt,omitempty"`

	// PausedAt is when the rollout was paused, while it is.
	// +optional
	PausedAt *metav1.Time `json:"pausedAt,omitempty"`

	// Clusters are the placed clusters and where each stands.
	// +listType=map
	// +listMapKey=name
	// +optional
	Clusters []ClusterStatus `json:"clusters,omitempty"`

	// Conditions: Progressing, Paused, Completed, Failed, and kstatus'
	// Ready, Reconciling and Stalled for GitOps tools: Reconciling while
	// the rollout gets further by itself (a stage being released or
	// soaking), Ready once it completed or while it is held on purpose (a
	// pause, a stage waiting for promotion or a gate, every cluster in
	// flight held by something else: nothing happens until someone acts),
	// Stalled while it cannot go on until a person fixes something (a
	// failed stage, an abort, a policy not found, a spec that cannot be
	// used).
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ClusterStatus is where one cluster stands in the rollout.
type ClusterStatus struct {
	Name string `json:"name"`
	// Stage is the name of the cluster's stage.
	Stage string `json:"stage"`
	// State: Pending, Progressing, Healthy, Failed, RolledBack, Held.
	State string `json:"state"`
	// Revision is the revision the cluster runs: released to it, or
	// rolled back to.
	// +optional
	Revision int64 `json:"revision,omitempty"`
	// LastHealthyRevision is the last revision before the current one that
	// was healthy on the cluster: what Rollback and abort put back.
	// +optional
	LastHealthyRevision int64 `json:"lastHealthyRevision,omitempty"`
	// +optional
	Reason string `json:"reason,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
	// Since is when the cluster entered its state.
	Since metav1.Time `json:"since"`
	// Analysis is the cluster's analysis at its revision, when its stage
	// has one.
	// +optional
	Analysis *ClusterAnalysis `json:"analysis,omitempty"`
}

// RolloutList is a list of Rollouts.
//
// +kubebuilder:object:root=true
type RolloutList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Rollout `json:"items"`
}

// ClusterRolloutList is a list of ClusterRollouts.
//
// +kubebuilder:object:root=true
type ClusterRolloutList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterRollout `json:"items"`
}

// AddToScheme registers the Rollout kinds.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Rollout{}, &RolloutList{}, &ClusterRollout{}, &ClusterRolloutList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
