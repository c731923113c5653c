package framework

import (
	"context"
	"fmt"
	"time"
)

// Wait checks condition every 250 ms until it holds (returns nil) and fails
// after limit with what it said last: the testing.B counterpart of Gomega's
// Eventually(condition).Should(Succeed()).
func Wait(ctx context.Context, what string, limit time.Duration, condition func(context.Context) error) error {
	deadline := time.Now().Add(limit)
	for {
		err := condition(ctx)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("waited %s for %s: %w", limit, what, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w (last: %v)", what, ctx.Err(), err)
		case <-time.After(250 * time.Millisecond):
		}
	}
}
