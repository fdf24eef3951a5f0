package server

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/hotkv/hotkv/internal/command"
	"github.com/hotkv/hotkv/internal/metrics"
)

// The metrics listener (metrics-port, metrics-bind; decisions/0048): /metrics
// for Prometheus, the status page and its /status.json. Off by default; on,
// it binds 127.0.0.1 unless told otherwise: it has no authentication, and
// the status page names lock keys.

// listenMetrics opens the metrics listener when metrics-port is set.
func (s *Server) listenMetrics() error {
	port := s.cfg.Int("metrics-port")
	if port == 0 {
		return nil
	}
	addr := net.JoinHostPort(s.cfg.String("metrics-bind"), strconv.FormatInt(port, 10))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return errors.New("Could not create the metrics listener on " + addr + ": " + err.Error())
	}
	s.metricsLn = ln
	return nil
}

// MetricsAddr is the metrics listener's address, nil when it is off.
func (s *Server) MetricsAddr() net.Addr {
	if s.metricsLn == nil {
		return nil
	}
	return s.metricsLn.Addr()
}

// serveMetrics serves the metrics listener until ctx ends. HTTP's limits keep
// a slow or hostile peer from holding a connection or memory.
func (s *Server) serveMetrics(ctx context.Context) {
	if s.metricsLn == nil {
		return
	}
	hs := &http.Server{
		Handler:           metrics.Handler(s.MetricsSnapshot),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    16 << 10,
	}
	go func() { _ = hs.Serve(s.metricsLn) }()
	go func() {
		<-ctx.Done()
		_ = hs.Close()
	}()
}

// statusLocks bounds the locks a snapshot lists (the status page's table).
const statusLocks = 100

// MetricsSnapshot takes the state a scrape exports, under the engine lock.
func (s *Server) MetricsSnapshot() *metrics.Snapshot {
	s.eng.Lock()
	defer s.eng.Unlock()
	info := s.Info(nil, []string{"everything"})
	if s.mem.settled {
		s.forgetReportGarbage()
	}
	snap := &metrics.Snapshot{NowMs: s.clock.NowMs(), Info: string(info), Config: map[string]string{}}
	for _, k := range []string{"databases", "maxclients", "maxmemory", "io-threads", "repl-backlog-size", "client-output-buffer-limit"} {
		if v, ok := s.cfg.Get(k); ok {
			snap.Config[k] = v
		}
	}
	snap.SlowLen = s.obs.slowlog.Len()
	snap.Slow = s.obs.slowlog.Newest(10)
	for _, ser := range s.obs.latency.All() {
		l := ser.Latest()
		snap.Latency = append(snap.Latency, metrics.LatencyEvent{Name: ser.Event, Time: l.Time, LastMs: l.Ms, MaxMs: ser.Max})
	}
	for _, spec := range s.table.All() {
		for _, sp := range append([]*command.Spec{spec}, spec.Subs...) {
			if calls, cdf, ok := s.LatencyHistogram(sp); ok {
				snap.Histograms = append(snap.Histograms, metrics.CmdHistogram{Cmd: sp.FullName(), Calls: calls, CDF: cdf})
			}
		}
	}
	t := s.locks
	lv := &snap.Locks
	lv.Held, lv.C, lv.Hold, lv.Wait = t.Len(), t.C, t.Hold, t.Wait()
	lv.Top = t.Top(10)
	lv.Locks = t.Locks()
	if len(lv.Locks) > statusLocks {
		lv.Locks = lv.Locks[:statusLocks]
	}
	for _, l := range lv.Locks {
		ttl := int64(-1)
		d := s.ks.DBs[l.DB]
		if e := d.Peek([]byte(l.Key)); e != nil {
			if at := d.ExpireAt(e); at != 0 {
				ttl = max(at-snap.NowMs, 0)
			}
		}
		lv.TTLms = append(lv.TTLms, ttl)
	}
	return snap
}
