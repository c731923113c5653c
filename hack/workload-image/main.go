// Command web is the workload image of kind fleets (federator/web:TAG,
// built by hack/workload-image/build.sh): a static HTTP server, FROM
// scratch, that real pods on kind members run. The same binary is two
// images: federator/web:1.25 serves and is ready; federator/web:1.27-broken
// serves but its readiness endpoint always fails (WEB_BROKEN=true in that
// image, or -broken), so a rollout to it stalls as a bad release would.
//
//	GET /         "federator web VERSION on HOSTNAME"
//	GET /healthz  200 while the process runs (liveness)
//	GET /readyz   200, or 503 when broken (readiness)
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

func main() {
	broken, _ := strconv.ParseBool(os.Getenv("WEB_BROKEN"))
	addr := flag.String("listen", ":8080", "address to serve on")
	flag.BoolVar(&broken, "broken", broken, "fail readiness (default from WEB_BROKEN)")
	version := flag.String("version", envOr("WEB_VERSION", "dev"), "version to report (default from WEB_VERSION)")
	flag.Parse()
	host, _ := os.Hostname()

	srv := &http.Server{Addr: *addr, Handler: handler(*version, host, broken), ReadHeaderTimeout: 5 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	log.Printf("web %s listening on %s (broken=%t)", *version, *addr, broken)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}

func handler(version, host string, broken bool) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, "federator web %s on %s\n", version, host)
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if broken {
			http.Error(w, "not ready: this is the broken build "+version, http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ready")
	})
	return mux
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
