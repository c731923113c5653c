package fleetmetrics

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The ConfigMap in each member that steers what its stand-in application
// serves: a test, or a person with kubectl, writes it into the member
// whose traffic it changes.
const (
	SteeringNamespace = "federator-system"
	SteeringName      = "federator-fleet-metrics"
)

// Keys of the steering ConfigMap: bare, they apply to every version in the
// member; after a version's tag and a dot (`1.27.errorRate`), to that
// version only, which wins.
const (
	keyErrorRate = "errorRate"
	keyLatency   = "latency"
)

// BrokenSuffix marks a tag whose version fails on purpose (kwok's stages
// keep its pods not Ready); here it serves BrokenErrorRate by default.
const BrokenSuffix = "-broken"

// Behaviour is what one version serves: the share of its requests that
// fail (code 500) and their typical latency.
type Behaviour struct {
	ErrorRate float64
	Latency   time.Duration
}

// Built-in behaviours, where no steering says otherwise.
var (
	DefaultBehaviour = Behaviour{ErrorRate: 0, Latency: 50 * time.Millisecond}
	BrokenErrorRate  = 0.5
)

// Steering is a member's steering ConfigMap, parsed.
type Steering struct {
	all       partial
	byVersion map[string]partial // by tag
}

// partial is what one set of keys says; nil fields say nothing.
type partial struct {
	errorRate *float64
	latency   *time.Duration
}

// ParseSteering reads a steering ConfigMap's data. A key it cannot use is
// left out and named in the errors, with what it accepts: the rest
// applies.
func ParseSteering(data map[string]string) (Steering, []error) {
	s := Steering{byVersion: map[string]partial{}}
	var errs []error
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		value := strings.TrimSpace(data[key])
		tag, field := "", key
		if i := strings.LastIndex(key, "."); i >= 0 {
			tag, field = key[:i], key[i+1:]
		}
		p := s.all
		if tag != "" {
			p = s.byVersion[tag]
		}
		switch field {
		case keyErrorRate:
			rate, err := strconv.ParseFloat(value, 64)
			if err != nil || rate < 0 || rate > 1 {
				errs = append(errs, fmt.Errorf("key %q: %q is no error rate: give a number from 0 to 1, e.g. 0.2 for 20%% errors", key, value))
				continue
			}
			p.errorRate = &rate
		case keyLatency:
			latency, err := time.ParseDuration(value)
			if err != nil || latency <= 0 {
				errs = append(errs, fmt.Errorf("key %q: %q is no latency: give a positive Go duration, e.g. 300ms", key, value))
				continue
			}
			p.latency = &latency
		default:
			errs = append(errs, fmt.Errorf("key %q: unknown; use %s or %s, alone (every version) or after a version's tag and a dot (e.g. 1.27.%s)",
				key, keyErrorRate, keyLatency, keyErrorRate))
			continue
		}
		if tag == "" {
			s.all = p
		} else {
			s.byVersion[tag] = p
		}
	}
	return s, errs
}

// For is what version (an image) serves: its tag's keys, else the keys
// for every version, else the built-in behaviour (BrokenErrorRate for a
// tag ending in -broken).
func (s Steering) For(image string) Behaviour {
	tag := Tag(image)
	b := DefaultBehaviour
	if strings.HasSuffix(tag, BrokenSuffix) {
		b.ErrorRate = BrokenErrorRate
	}
	for _, p := range []partial{s.all, s.byVersion[tag]} {
		if p.errorRate != nil {
			b.ErrorRate = *p.errorRate
		}
		if p.latency != nil {
			b.Latency = *p.latency
		}
	}
	return b
}

// Tag is an image's tag ("latest" when it names none; a digest is not a tag).
func Tag(image string) string {
	if i := strings.Index(image, "@"); i >= 0 {
		image = image[:i]
	}
	if i := strings.LastIndex(image, ":"); i > strings.LastIndex(image, "/") {
		return image[i+1:]
	}
	return "latest"
}
