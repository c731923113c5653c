package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is gating.federator.dev/v1alpha1.
var GroupVersion = schema.GroupVersion{Group: "gating.federator.dev", Version: "v1alpha1"}

// Keys users write on Gates, policies and Clusters.
const (
	// GatesAnnotation on a PropagationPolicy, ClusterPropagationPolicy or
	// Cluster lists the gates it waits for, comma-separated: "name" (the
	// policy's own namespace) or "namespace/name".
	GatesAnnotation = "gating.federator.dev/gates"
	// OpenRequestAnnotation on a Gate asks it to open; the value is the time
	// of the request (RFC 3339) by the hub's clock. Federator's writers
	// remove the close request in the same write: the request in force is
	// the one the hub stored last.
	OpenRequestAnnotation = "open.gate.federator.dev/requestedAt"
	// CloseRequestAnnotation on a Gate asks it to close; the value is the
	// time of the request (RFC 3339) by the hub's clock. Federator's writers
	// remove the open request in the same write, except that `gate open
	// --for` writes the close request to come.
	CloseRequestAnnotation = "close.gate.federator.dev/requestedAt"
)

// Gate states and schedule actions.
const (
	// Opened lets dispatching through.
	Opened = "opened"
	// Closed holds dispatching.
	Closed = "closed"
	// ActionOpen opens the gate while a schedule's window runs.
	ActionOpen = "open"
	// ActionClose closes the gate while a schedule's window runs.
	ActionClose = "close"
)

// Gate is opened or closed; while closed, dispatching of what waits for it
// is held.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=gates,scope=Namespaced,categories=federator
// +kubebuilder:printcolumn:name="OPENED",type=string,JSONPath=`.status.conditions[?(@.type=="Opened")].status`
// +kubebuilder:printcolumn:name="DEFAULT",type=string,JSONPath=`.spec.default`
// +kubebuilder:printcolumn:name="UNTIL",type=string,JSONPath=`.status.resetToDefaultAt`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type Gate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   GateSpec   `json:"spec,omitempty"`
	Status GateStatus `json:"status,omitempty"`
}

// GateSpec says how a gate behaves when nobody asks anything of it.
type GateSpec struct {
	// Default is the state the gate returns to when no request and no
	// schedule applies.
	// +kubebuilder:validation:Enum=opened;closed
	// +kubebuilder:default=closed
	// +optional
	Default string `json:"default,omitempty"`

	// Window, when set, is how long an open or close request lasts; the
	// gate then returns to its default (or to what a schedule says). Without
	// a window a request lasts until the next request, or until the next
	// schedule boundary when the gate has schedules.
	// +optional
	Window *metav1.Duration `json:"window,omitempty"`

	// Interval is how often the gate is re-evaluated at the latest; it is
	// also re-evaluated exactly when a request's window or a schedule's
	// window starts or ends. Default 1m.
	// +optional
	Interval *metav1.Duration `json:"interval,omitempty"`

	// Schedules open or close the gate during recurring windows.
	// +optional
	// +listType=map
	// +listMapKey=name
	Schedules []GateSchedule `json:"schedules,omitempty"`

	// SecretRef names a Secret in the gate's namespace whose `token` key
	// authenticates the webhook receiver's open and close calls (a bearer
	// token, or the key of an HMAC-SHA256 signature of the call's timestamp,
	// method, path and body). Without it the receiver refuses every call for
	// this gate.
	// +optional
	SecretRef *corev1.LocalObjectReference `json:"secretRef,omitempty"`
}

// GateSchedule is a recurring window during which the gate is opened or
// closed, e.g. closed every Friday 00:00 for 72h ("No Deploy Friday").
type GateSchedule struct {
	// Name identifies the schedule in the gate's status messages.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// Cron is when each window starts, in standard five-field cron syntax
	// ("0 0 * * FRI").
	// +kubebuilder:validation:MinLength=1
	Cron string `json:"cron"`
	// TimeZone the cron expression is read in, from the IANA time zone
	// database ("Europe/Berlin"); default UTC. Daylight-saving days follow
	// the database.
	// +optional
	TimeZone string `json:"timeZone,omitempty"`
	// Duration of each window.
	Duration metav1.Duration `json:"duration"`
	// Action is what the schedule does to the gate during its window.
	// +kubebuilder:validation:Enum=open;close
	Action string `json:"action"`
}

// GateStatus is the gate's state as last evaluated.
type GateStatus struct {
	// ObservedGeneration is the spec generation last evaluated.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// RequestedAt is the time of the open or close request that applies, if
	// any.
	// +optional
	RequestedAt *metav1.Time `json:"requestedAt,omitempty"`
	// ResetToDefaultAt is when the gate next changes by itself: the end of
	// the request's window or of a schedule's window.
	// +optional
	ResetToDefaultAt *metav1.Time `json:"resetToDefaultAt,omitempty"`
	// Conditions: Opened (True while open; its message says why and until
	// when), RequestValid (False while a request annotation is malformed),
	// and kstatus' Ready, Reconciling and Stalled for GitOps tools: Ready
	// while the gate is where its spec and requests put it (open or
	// closed), Stalled while a schedule or request cannot be read.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// GateList is a list of Gates.
//
// +kubebuilder:object:root=true
type GateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Gate `json:"items"`
}

// AddToScheme registers the Gate and Freeze kinds.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Gate{}, &GateList{}, &Freeze{}, &FreezeList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
