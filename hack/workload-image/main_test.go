package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHandler(t *testing.T) {
	for _, tc := range []struct {
		broken    bool
		wantReady int
	}{{false, http.StatusOK}, {true, http.StatusServiceUnavailable}} {
		h := handler("1.25", "pod-a", tc.broken)
		for path, want := range map[string]int{"/": http.StatusOK, "/healthz": http.StatusOK, "/readyz": tc.wantReady, "/nope": http.StatusNotFound} {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
			if rec.Code != want {
				t.Errorf("broken=%t GET %s: %d, want %d", tc.broken, path, rec.Code, want)
			}
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
		if got := rec.Body.String(); !strings.Contains(got, "federator web 1.25 on pod-a") {
			t.Errorf("GET /: %q", got)
		}
	}
}
