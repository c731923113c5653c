package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Analysis judges a cluster by its metrics once the revision is released
// and healthy there, as Argo Rollouts' AnalysisTemplate metric does inside
// one cluster (its field names and semantics where they fit): the query
// runs every interval, after initialDelay, until count conclusive
// measurements are taken. More than failureLimit failed measurements fail
// the cluster (spec.onFailure then applies to it, as to a health failure);
// more than inconclusiveLimit inconclusive ones in a row (no data, a query
// error, Prometheus unreachable, a condition that cannot be evaluated)
// pause the stage until measurements succeed again. A stage passes only
// when its clusters are healthy and their analyses passed.
//
// +kubebuilder:validation:XValidation:rule="!has(self.count) || self.count <= 1 || has(self.interval)",message="analysis.interval is needed when analysis.count is above 1: say how long to wait between measurements, e.g. 1m"
type Analysis struct {
	// Provider is where the metrics are read.
	Provider AnalysisProvider `json:"provider"`

	// SuccessCondition is an expression over result (the query's value: a
	// number for a scalar, a list of numbers for a vector, e.g.
	// `result[0] < 0.05`), in Argo's expression language
	// (github.com/expr-lang/expr). A measurement whose successCondition
	// is false and that has no failureCondition failed.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	SuccessCondition string `json:"successCondition,omitempty"`

	// FailureCondition is an expression over result; true fails the
	// measurement. With both conditions, a measurement neither satisfies is
	// inconclusive.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	FailureCondition string `json:"failureCondition,omitempty"`

	// Interval is how long between two measurements of a cluster.
	// Default 1m.
	// +optional
	Interval *metav1.Duration `json:"interval,omitempty"`

	// InitialDelay is how long after a cluster becomes healthy its first
	// measurement is taken. Default 0.
	// +optional
	InitialDelay *metav1.Duration `json:"initialDelay,omitempty"`

	// Count is how many conclusive (successful or failed) measurements a
	// cluster's analysis takes. Default 1.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +optional
	Count *int32 `json:"count,omitempty"`

	// FailureLimit is how many failed measurements a cluster may have
	// before its analysis fails. Default 0.
	// +kubebuilder:validation:Minimum=0
	// +optional
	FailureLimit *int32 `json:"failureLimit,omitempty"`

	// InconclusiveLimit is how many inconclusive measurements in a row a
	// cluster may have before its stage pauses. Default 0.
	// +kubebuilder:validation:Minimum=0
	// +optional
	InconclusiveLimit *int32 `json:"inconclusiveLimit,omitempty"`
}

// AnalysisProvider says where an analysis reads its metrics.
type AnalysisProvider struct {
	// Prometheus is a Prometheus server's HTTP API.
	Prometheus PrometheusProvider `json:"prometheus"`
}

// PrometheusProvider queries a Prometheus server.
type PrometheusProvider struct {
	// Address is the server's URL, e.g. http://prometheus:9090.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:Pattern=`^https?://`
	Address string `json:"address"`

	// Query is a PromQL query, written as a Go text/template that may
	// name {{ .Cluster }} (the cluster measured), {{ .Namespace }} and
	// {{ .Name }} (the template's; the query runs once per claimed
	// template when it names them) and {{ .Revision }}.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	Query string `json:"query"`

	// TokenSecretRef names a key of a Secret whose value is sent as a
	// bearer token: the Secret is in the Rollout's namespace, or in
	// federator-system for a ClusterRollout. The token is never copied
	// into status, Events or logs.
	// +optional
	TokenSecretRef *SecretKeyReference `json:"tokenSecretRef,omitempty"`
}

// SecretKeyReference names a key of a Secret.
type SecretKeyReference struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Key string `json:"key"`
}

// Analysis and measurement phases (Argo Rollouts' AnalysisPhase names).
const (
	// AnalysisRunning: measurements are being taken.
	AnalysisRunning = "Running"
	// AnalysisSuccessful: a measurement met its conditions; an analysis
	// took count conclusive measurements within failureLimit.
	AnalysisSuccessful = "Successful"
	// AnalysisFailed: a measurement failed its conditions; an analysis had
	// more than failureLimit of them.
	AnalysisFailed = "Failed"
	// AnalysisInconclusive: a measurement met neither condition, or had no
	// data; an analysis had more than inconclusiveLimit inconclusive or
	// erroneous measurements in a row, and its stage pauses.
	AnalysisInconclusive = "Inconclusive"
	// AnalysisError: a measurement could not be taken or judged (a query
	// error, Prometheus unreachable, a condition that cannot be
	// evaluated). It counts as inconclusive.
	AnalysisError = "Error"
)

// MaxMeasurements is how many measurements status keeps per cluster (the
// latest ones).
const MaxMeasurements = 10

// ClusterAnalysis is one cluster's analysis at its revision (Argo
// Rollouts' MetricResult, per cluster).
type ClusterAnalysis struct {
	// Phase: Running, Successful, Failed, Inconclusive.
	Phase string `json:"phase"`
	// +optional
	Message string `json:"message,omitempty"`
	// StartedAt is when the cluster became healthy at its revision; the
	// first measurement is initialDelay after it.
	StartedAt metav1.Time `json:"startedAt"`
	// Count is how many measurements were taken.
	// +optional
	Count int32 `json:"count,omitempty"`
	// +optional
	Successful int32 `json:"successful,omitempty"`
	// +optional
	Failed int32 `json:"failed,omitempty"`
	// +optional
	Inconclusive int32 `json:"inconclusive,omitempty"`
	// +optional
	Error int32 `json:"error,omitempty"`
	// ConsecutiveInconclusive counts the inconclusive and erroneous
	// measurements since the last conclusive one.
	// +optional
	ConsecutiveInconclusive int32 `json:"consecutiveInconclusive,omitempty"`
	// Measurements are the latest measurements, oldest first (at most
	// MaxMeasurements).
	// +kubebuilder:validation:MaxItems=10
	// +optional
	Measurements []Measurement `json:"measurements,omitempty"`
}

// Measurement is one run of the query on one cluster.
type Measurement struct {
	// Phase is the measurement's verdict: Successful, Failed,
	// Inconclusive or Error.
	Phase string `json:"phase"`
	// Value is the query's result as read, e.g. "[0.02]".
	// +optional
	Value string `json:"value,omitempty"`
	// Message says why a measurement is not successful.
	// +optional
	Message string `json:"message,omitempty"`
	// FinishedAt is when the measurement was taken.
	FinishedAt metav1.Time `json:"finishedAt"`
}
