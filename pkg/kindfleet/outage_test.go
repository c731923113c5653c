package kindfleet

import (
	"errors"
	"testing"
	"time"
)

func TestRetryFreeze(t *testing.T) {
	busy := errors.New(`podman pause: level=error msg="unable to freeze"`)
	refused := errors.New("no such container")
	for _, tc := range []struct {
		name      string
		errs      []error // what each try returns; nil past the end
		wantTries int
		wantErr   error
	}{
		{"done at once", nil, 1, nil},
		{"a busy freezer is tried again", []error{busy, busy}, 3, nil},
		{"another error is not", []error{refused}, 1, refused},
		{"a freezer busy every time gives up after the last try", []error{busy, busy, busy, busy, busy, busy}, freezeTries, busy},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tries := 0
			var waited time.Duration
			err := retryFreeze(func() error {
				tries++
				if tries <= len(tc.errs) {
					return tc.errs[tries-1]
				}
				return nil
			}, func(d time.Duration) { waited += d })
			if tries != tc.wantTries || !errors.Is(err, tc.wantErr) {
				t.Errorf("%d tries, error %v; want %d, %v", tries, err, tc.wantTries, tc.wantErr)
			}
			if tries > 1 && waited < 250*time.Millisecond {
				t.Errorf("tried again without waiting (%s)", waited)
			}
		})
	}
}
