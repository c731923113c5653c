package scale

import (
	"context"
	"fmt"
	"testing"
	"time"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"

	"github.com/federator-dev/federator/test/framework"
)

const policyName = "all-deployments"

// createNamespace creates a hub namespace and waits until namespace sync
// has put it in every member.
func (e *env) createNamespace(ctx context.Context, b *testing.B, ns string) {
	b.Helper()
	if err := e.CreateNamespace(ctx, ns); err != nil {
		b.Fatalf("create namespace %s: %v", ns, err)
	}
	wait(ctx, b, "namespace "+ns+" in every member", time.Minute, func(ctx context.Context) error {
		return e.NamespaceInEveryMember(ctx, ns)
	})
}

// createPolicy selects every Deployment of ns, by kind, for every member.
func (e *env) createPolicy(ctx context.Context, ns string) error {
	return e.Hub.Create(ctx, framework.NewDeploymentPolicy(ns, policyName, "", e.MemberNames()...))
}

// waitMembersHave waits until every member runs every template of want at
// image.
func (e *env) waitMembersHave(ctx context.Context, b *testing.B, ns string, want map[string]bool, image string, limit time.Duration) {
	b.Helper()
	wait(ctx, b, fmt.Sprintf("%d Deployments at %s in every member", len(want), image), limit, func(ctx context.Context) error {
		return e.EveryMemberRuns(ctx, ns, want, image)
	})
}

// waitWorks waits until there are n Works per member for ns and ok holds
// for each of them.
func (e *env) waitWorks(ctx context.Context, b *testing.B, what, ns string, n int, limit time.Duration, ok func(*workv1alpha1.Work) bool) {
	b.Helper()
	want := n * len(e.Members)
	wait(ctx, b, what, limit, func(ctx context.Context) error {
		works, err := e.WorksOf(ctx, ns)
		if err != nil {
			return err
		}
		good := 0
		for i := range works {
			if ok(&works[i]) {
				good++
			}
		}
		if len(works) != want || good != want {
			return fmt.Errorf("%d of %d Works (%d exist)", good, want, len(works))
		}
		return nil
	})
}

// wait is framework.Wait failing b.
func wait(ctx context.Context, b *testing.B, what string, limit time.Duration, condition func(context.Context) error) {
	b.Helper()
	if err := framework.Wait(ctx, what, limit, condition); err != nil {
		b.Fatal(err)
	}
}

// waitQuiet waits until the hub has written nothing but leases for quiet
// (framework.WaitQuiet).
func (e *env) waitQuiet(ctx context.Context, quiet, limit time.Duration) (framework.Writes, time.Time, bool, error) {
	return framework.WaitQuiet(ctx, e.HubCS, quiet, limit, "leases")
}
