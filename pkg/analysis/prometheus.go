package analysis

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	promconfig "github.com/prometheus/common/config"
	"github.com/prometheus/common/model"

	rolloutsv1alpha1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
)

// DefaultTimeout bounds one query.
const DefaultTimeout = 10 * time.Second

// Prometheus is a Prometheus server's HTTP API.
type Prometheus struct {
	Address string
	// Token, when set, is sent as a bearer token. It is never put in a
	// Result.
	Token string
	// Timeout bounds one query; DefaultTimeout when 0.
	Timeout time.Duration
}

// Result is one measurement: its phase (Successful, Failed,
// Inconclusive, Error), the query's value as read, and why it is not
// successful.
type Result struct {
	Phase   string
	Value   string
	Message string
}

// Measure runs query at now and judges its result by conds.
//
// The result is what Argo Rollouts' Prometheus provider hands its
// conditions: a vector's sample values as a list of numbers (result[0] is
// the first series), a scalar's value as a number. A vector with no series
// is no data: Inconclusive, said so (Argo would fail to evaluate
// result[0] and count an error). A matrix or string result is an Error.
func (p Prometheus) Measure(ctx context.Context, query string, conds *Conditions, now time.Time) Result {
	var rt http.RoundTripper = api.DefaultRoundTripper
	if p.Token != "" {
		rt = promconfig.NewAuthorizationCredentialsRoundTripper("Bearer", promconfig.NewInlineSecret(p.Token), rt)
	}
	c, err := api.NewClient(api.Config{Address: p.Address, RoundTripper: rt})
	if err != nil {
		return Result{Phase: rolloutsv1alpha1.AnalysisError, Message: fmt.Sprintf("address %q: %v", p.Address, err)}
	}
	timeout := p.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	v, _, _, err := promv1.NewAPI(c).Query(ctx, query, now, promv1.WithTimeout(timeout))
	if err != nil {
		return Result{Phase: rolloutsv1alpha1.AnalysisError, Message: fmt.Sprintf("query %q on %s: %v", query, p.Address, err)}
	}
	result, value, err := FromValue(v)
	if err != nil {
		return Result{Phase: rolloutsv1alpha1.AnalysisError, Value: value, Message: fmt.Sprintf("query %q: %v", query, err)}
	}
	if result == nil {
		return Result{Phase: rolloutsv1alpha1.AnalysisInconclusive, Value: value,
			Message: fmt.Sprintf("no data: query %q returned no series", query)}
	}
	phase, err := conds.Evaluate(result)
	r := Result{Phase: phase, Value: value}
	switch {
	case err != nil:
		r.Message = fmt.Sprintf("query %q returned %s: %v", query, value, err)
	case phase != rolloutsv1alpha1.AnalysisSuccessful:
		r.Message = fmt.Sprintf("query %q returned %s: %s", query, value, strings.ToLower(phase))
	}
	return r
}

// FromValue is what conditions see of a query's value, and the value as
// status shows it: a number for a scalar, a list of numbers for a vector;
// nil for a vector without series (no data).
func FromValue(v model.Value) (any, string, error) {
	switch v := v.(type) {
	case *model.Scalar:
		f := float64(v.Value)
		return f, format(f), nil
	case model.Vector:
		if len(v) == 0 {
			return nil, "[]", nil
		}
		values := make([]float64, len(v))
		shown := make([]string, len(v))
		for i, s := range v {
			values[i] = float64(s.Value)
			shown[i] = format(values[i])
		}
		return values, "[" + strings.Join(shown, ",") + "]", nil
	case nil:
		return nil, "", fmt.Errorf("no result")
	}
	return nil, "", fmt.Errorf("it returned a %s; write a query that returns a vector or a scalar", v.Type())
}

func format(f float64) string {
	return strconv.FormatFloat(f, 'g', -1, 64)
}
