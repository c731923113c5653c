package httpserve

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// It serves until its context ends, then stops, ending a streaming
// response with it and freeing the port.
func TestServeUntilCancelled(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	streaming := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/stream" {
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			close(streaming)
			<-r.Context().Done()
			return
		}
		_, _ = io.WriteString(w, "ok")
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, l, h, 2*time.Second) }()
	url := "http://" + l.Addr().String()
	resp, err := http.Get(url + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "ok" {
		t.Fatalf("body %q", body)
	}
	stream, err := http.Get(url + "/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	<-streaming
	began := time.Now()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after its context ended")
	}
	if d := time.Since(began); d > time.Second {
		t.Errorf("shutdown took %s: the stream should end with the context, not at the grace period", d)
	}
	if _, err := http.Get(url + "/"); err == nil {
		t.Error("the server still answers after Serve returned")
	}
}
