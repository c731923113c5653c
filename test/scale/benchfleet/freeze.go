package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/apis/policy"
	"github.com/federator-dev/federator/test/framework"
)

// freezeUnderLoad times one template's freeze while the hub is busy: every
// template takes imageLoad (1,500 Works rewritten and dispatched) and,
// meanwhile, one template after another, freezeEvery apart, is annotated
// suspended; each try is timed from its annotation to every Work of that
// template held on the hub. Then the frozen templates are released and the
// phase ends when every member has imageLoad.
//
// triesDone is called once every try has ended, before the release.
func freezeUnderLoad(ctx context.Context, hc client.Client, hub *hubWatch, members *memberWatches, o options, r *result, triesDone func() error) error {
	tries := min(freezeTries, o.resources)
	stride := o.resources / tries
	frozen := func(k int) string { return name(k * stride) }
	annotate := func(tpl string, value any) error {
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{policy.SuspendedAnnotation: value}}})
		if err != nil {
			return err
		}
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: tpl}}
		return hc.Patch(ctx, d, client.RawPatch(types.MergePatchType, patch))
	}
	var wg sync.WaitGroup
	errs := make(chan error, tries+1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := parallel(16, o.resources, func(i int) error {
			return framework.SetImage(ctx, hc, ns, name(i), imageLoad)
		}); err != nil {
			errs <- err
		}
	}()
	latencies := make([]float64, tries)
	for k := range tries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			began := time.Now()
			if err := annotate(frozen(k), "freeze-probe"); err != nil {
				errs <- err
				return
			}
			if err := waitFor(ctx, "every Work of "+frozen(k)+" held", func() (bool, error) {
				return hub.held(frozen(k)) == o.members, nil
			}); err != nil {
				errs <- err
				return
			}
			latencies[k] = time.Since(began).Seconds()
		}()
		time.Sleep(freezeEvery)
	}
	wg.Wait()
	close(errs)
	var failed []error
	for err := range errs {
		failed = append(failed, err)
	}
	if err := errors.Join(failed...); err != nil {
		return err
	}
	sort.Float64s(latencies)
	logf("federator: freeze latencies, sorted: %s", fmt.Sprint(latencies))
	r.FreezeP50, r.FreezeP99, r.FreezeTries = quantile(latencies, 0.5), quantile(latencies, 0.99), tries
	if err := triesDone(); err != nil {
		return err
	}
	if err := parallel(16, tries, func(k int) error { return annotate(frozen(k), nil) }); err != nil {
		return err
	}
	return waitFor(ctx, "every member has "+imageLoad, func() (bool, error) {
		return members.have(imageLoad) == o.resources*o.members, nil
	})
}
