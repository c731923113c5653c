package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Freeze holds every write to the members it names (every member when it
// names none) from the moment the hub stores it: each dispatcher checks
// the freezes before each write to a member, so a freeze takes effect at
// watch latency whatever the fleet's size, in one write (`federator
// freeze`). It ends when deleted (`federator unfreeze`) or once
// spec.duration has passed since the hub stored it (its
// creationTimestamp, the hub's clock).
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=freezes,scope=Cluster,categories=federator
// +kubebuilder:printcolumn:name="CLUSTERS",type=string,JSONPath=`.spec.clusters`
// +kubebuilder:printcolumn:name="FOR",type=string,JSONPath=`.spec.duration`
// +kubebuilder:printcolumn:name="MESSAGE",type=string,JSONPath=`.spec.message`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type Freeze struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec FreezeSpec `json:"spec,omitempty"`
}

// FreezeSpec says which members a freeze holds, why, and for how long.
type FreezeSpec struct {
	// Clusters are the members it holds, by Cluster name; empty: every
	// member, those that join while it is in force too.
	// +optional
	// +listType=set
	Clusters []string `json:"clusters,omitempty"`

	// Message says why, for the people who see what it holds (the Works'
	// Dispatching condition, `federator get`, the dashboard).
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`

	// Duration, when set, ends the freeze that long after the hub stored
	// it (metadata.creationTimestamp); without it, the freeze lasts until
	// it is deleted.
	// +optional
	Duration *metav1.Duration `json:"duration,omitempty"`
}

// FreezeList is a list of Freezes.
//
// +kubebuilder:object:root=true
type FreezeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Freeze `json:"items"`
}

// ReasonFrozen is the reason of a Work's Dispatching condition while a
// Freeze holds its member.
const ReasonFrozen = "Frozen"
