// Command server runs the @NAME@ (@SLUG@) HTTP service.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// Config is what the server reads from its flags.
type Config struct {
	Addr         string
	ReadTimeout  time.Duration
	WriteTimeout time.Duration
	MaxBodyBytes int64
}

// Stats counts what the server has answered.
type Stats struct {
	mu       sync.Mutex
	Requests int64            `json:"requests"`
	ByStatus map[int]int64    `json:"byStatus"`
	Started  time.Time        `json:"started"`
	Paths    map[string]int64 `json:"paths"`
}

// Record notes one answered request.
func (s *Stats) Record(path string, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Requests++
	s.ByStatus[status]++
	s.Paths[path]++
}

type recorder struct {
	http.ResponseWriter
	status int
}

func (r *recorder) WriteHeader(status int) {
	r.status = status
	r.ResponseWriter.WriteHeader(status)
}

func withStats(stats *Stats, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		rec := &recorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, req)
		stats.Record(req.URL.Path, rec.status)
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if err := json.NewEncoder(w).Encode(v); err != nil {
		log.Printf("encode: %v", err)
	}
}

func routes(stats *Stats) *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/health", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("/stats", func(w http.ResponseWriter, _ *http.Request) {
		stats.mu.Lock()
		defer stats.mu.Unlock()
		writeJSON(w, http.StatusOK, stats)
	})
	return mux
}

func parseFlags(args []string) (Config, error) {
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	cfg := Config{}
	fs.StringVar(&cfg.Addr, "addr", ":8080", "address to listen on")
	fs.DurationVar(&cfg.ReadTimeout, "read-timeout", 10*time.Second, "longest time to read a request")
	fs.DurationVar(&cfg.WriteTimeout, "write-timeout", 30*time.Second, "longest time to write an answer")
	fs.Int64Var(&cfg.MaxBodyBytes, "max-body", 1<<20, "largest request body accepted")
	if err := fs.Parse(args); err != nil {
		return Config{}, err
	}
	if cfg.MaxBodyBytes <= 0 {
		return Config{}, fmt.Errorf("max-body must be positive, not %d", cfg.MaxBodyBytes)
	}
	return cfg, nil
}

func main() {
	cfg, err := parseFlags(os.Args[1:])
	if err != nil {
		log.Fatal(err)
	}
	stats := &Stats{ByStatus: map[int]int64{}, Paths: map[string]int64{}, Started: time.Now()}
	srv := &http.Server{
		Addr:         cfg.Addr,
		Handler:      withStats(stats, routes(stats)),
		ReadTimeout:  cfg.ReadTimeout,
		WriteTimeout: cfg.WriteTimeout,
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	log.Printf("listening on %s", cfg.Addr)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}
