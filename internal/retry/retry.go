// Package retry owns how controllers treat errors that only say their
// cache was behind the API server: they are retried quietly, with the
// controller's rate-limited backoff, instead of being logged and reported as
// failures.
package retry

import (
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
)

// CacheBehind reports whether err only says that the cache was behind the
// API server: optimistic-concurrency conflicts, or creates of objects that
// already exist (every error of a joined error must be one). Both resolve
// themselves on the next read; neither is a failure a person needs to hear
// about.
func CacheBehind(err error) bool {
	if err == nil {
		return false
	}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range joined.Unwrap() {
			if !CacheBehind(e) {
				return false
			}
		}
		return true
	}
	return apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err)
}

// Soon asks for the request to be retried through the controller's
// rate-limited queue, so repeated retries back off instead of spinning at a
// fixed interval, and without the error log a returned error would cause.
func Soon() ctrl.Result {
	//lint:ignore SA1019 Requeue is the only result that retries through the queue's rate limiter without logging an error; RequeueAfter would bypass the backoff.
	return ctrl.Result{Requeue: true}
}

// Quietly maps a reconcile outcome whose error only says the cache was
// behind to a quiet, backed-off retry; any other outcome is returned as is.
func Quietly(result ctrl.Result, err error) (ctrl.Result, error) {
	if CacheBehind(err) {
		return Soon(), nil
	}
	return result, err
}
