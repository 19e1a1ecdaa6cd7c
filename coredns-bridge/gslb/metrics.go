package gslb

import (
	"github.com/coredns/coredns/plugin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// Metrics of the gslb plugin, served by the prometheus plugin (coredns_gslb_*).
var (
	// requestCount counts queries for our zones by outcome: answer (from the engine), not_ours
	// (engine said the name is not in its zones; passed on), stale, fallthrough, servfail.
	requestCount = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: "gslb",
		Name:      "requests_total",
		Help:      "Queries handled by the gslb plugin, by result.",
	}, []string{"server", "result"})

	// engineDuration is the round trip to the engine of answered queries.
	engineDuration = promauto.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: plugin.Namespace,
		Subsystem: "gslb",
		Name:      "engine_duration_seconds",
		Buckets:   plugin.TimeBuckets,
		Help:      "Round-trip time of queries answered by the gslbd engine.",
	}, []string{"server"})

	// engineErrors counts queries the engine did not answer: down, timeout, overload, engine (an ERROR frame).
	engineErrors = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: "gslb",
		Name:      "engine_errors_total",
		Help:      "Queries the gslbd engine did not answer, by reason.",
	}, []string{"server", "reason"})

	// staleHits counts stale answers served: the last good answer for the client's block while
	// the engine could not answer (also counted as requests_total{result="stale"}).
	staleHits = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: "gslb",
		Name:      "stale_hits_total",
		Help:      "Stale answers served while the gslbd engine could not answer.",
	}, []string{"server"})

	// staleMisses counts stale steps that found no answer for the client: no entry for the name
	// and type whose block holds the client, or only entries older than stale_max. The next
	// on_error step answers those (fallthrough or SERVFAIL).
	staleMisses = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: "gslb",
		Name:      "stale_misses_total",
		Help:      "Stale steps that found no answer for the client while the gslbd engine could not answer.",
	}, []string{"server"})

	// staleEvictions counts stale-cache entries dropped: memory (least recently used, over
	// stale_memory) or expired (older than stale_max when asked for).
	staleEvictions = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: "gslb",
		Name:      "stale_evictions_total",
		Help:      "Stale-cache entries dropped, by reason (memory, expired).",
	}, []string{"server", "reason"})

	// staleEntries is the number of (name, type, client block) answers kept for stale use.
	staleEntries = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: plugin.Namespace,
		Subsystem: "gslb",
		Name:      "stale_entries",
		Help:      "Answers kept for stale use, one per name, type and client block.",
	}, []string{"server"})

	// staleBytes is the stale cache's estimated memory, bounded by stale_memory.
	staleBytes = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: plugin.Namespace,
		Subsystem: "gslb",
		Name:      "stale_bytes",
		Help:      "Estimated memory of the answers kept for stale use, in bytes.",
	}, []string{"server"})

	// engineUp is 1 while at least one connection to the engine's socket is up.
	engineUp = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: plugin.Namespace,
		Subsystem: "gslb",
		Name:      "engine_up",
		Help:      "1 while at least one connection to the gslbd engine is up.",
	}, []string{"socket"})
)
