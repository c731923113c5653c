package analysis

import (
	"fmt"
	"math"

	"github.com/expr-lang/expr"

	rolloutsv1alpha1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
)

// Conditions are an analysis' successCondition and failureCondition,
// checked to compile. Each is compiled again against the result it
// judges, whose type (a number, or a list of them) is known only then, as
// Argo Rollouts does.
type Conditions struct {
	success, failure string
}

// env is what a condition sees: result, and the helpers Argo Rollouts
// offers its conditions.
func env(result any) map[string]any {
	return map[string]any{
		"result":  result,
		"isNaN":   math.IsNaN,
		"isInf":   func(f float64) bool { return math.IsInf(f, 0) },
		"isNil":   func(v any) bool { return v == nil },
		"asFloat": toFloat,
		"asInt":   func(v any) (int64, error) { f, err := toFloat(v); return int64(f), err },
		"default": func(v, d any) any {
			if v == nil {
				return d
			}
			return v
		},
	}
}

func toFloat(v any) (float64, error) {
	switch n := v.(type) {
	case float64:
		return n, nil
	case int:
		return float64(n), nil
	case int64:
		return float64(n), nil
	}
	var f float64
	if _, err := fmt.Sscan(fmt.Sprint(v), &f); err != nil {
		return 0, fmt.Errorf("%v is not a number", v)
	}
	return f, nil
}

// CompileConditions checks that each condition (either may be empty)
// compiles to a boolean for a scalar result or for a vector's; the error
// names the one that does not.
func CompileConditions(success, failure string) (*Conditions, error) {
	check := func(field, text string) error {
		if text == "" {
			return nil
		}
		var err error
		for _, sample := range []any{0.0, []float64{0}} {
			if _, err = expr.Compile(text, expr.Env(env(sample)), expr.AsBool()); err == nil {
				return nil
			}
		}
		return fmt.Errorf("%s %q does not compile to true or false over result (a number, or a list of numbers): %v", field, text, err)
	}
	if err := check("successCondition", success); err != nil {
		return nil, err
	}
	if err := check("failureCondition", failure); err != nil {
		return nil, err
	}
	return &Conditions{success: success, failure: failure}, nil
}

// Evaluate judges a result as Argo Rollouts does: without conditions, any
// result succeeds; with a successCondition only, a result that does not
// meet it failed; with a failureCondition only, a result that does not
// meet it succeeded; with both, a result that meets neither is
// inconclusive; a met failureCondition always fails. A condition that
// cannot be evaluated on the result is an Error.
func (c *Conditions) Evaluate(result any) (string, error) {
	run := func(text string) (bool, error) {
		p, err := expr.Compile(text, expr.Env(env(result)), expr.AsBool())
		if err != nil {
			return false, err
		}
		out, err := expr.Run(p, env(result))
		if err != nil {
			return false, err
		}
		b, ok := out.(bool)
		if !ok {
			return false, fmt.Errorf("the condition came to %v, not true or false", out)
		}
		return b, nil
	}
	var succeeded, failed bool
	var err error
	if c.success != "" {
		if succeeded, err = run(c.success); err != nil {
			return rolloutsv1alpha1.AnalysisError, fmt.Errorf("successCondition: %v", err)
		}
	}
	if c.failure != "" {
		if failed, err = run(c.failure); err != nil {
			return rolloutsv1alpha1.AnalysisError, fmt.Errorf("failureCondition: %v", err)
		}
	}
	switch {
	case c.success == "" && c.failure == "":
		return rolloutsv1alpha1.AnalysisSuccessful, nil
	case c.failure == "":
		failed = !succeeded
	case c.success == "":
		succeeded = !failed
	}
	switch {
	case failed:
		return rolloutsv1alpha1.AnalysisFailed, nil
	case succeeded:
		return rolloutsv1alpha1.AnalysisSuccessful, nil
	}
	return rolloutsv1alpha1.AnalysisInconclusive, nil
}
