package gslb

import (
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/gslbd/gslbd/coredns-bridge/internal/frame"
	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/miekg/dns"
)

// blocksPerName bounds the client blocks remembered for one name and type.
const blocksPerName = 16

// staleCache keeps the last good engine answer per (name, type, client block), to answer with
// while the engine is unreachable (RFC 8767 serve-stale in spirit). It is bounded twice: at most
// `size` names × types (least recently used go first) and blocksPerName blocks each.
type staleCache struct {
	names  *lru.Cache[staleKey, *staleSet]
	maxAge time.Duration
}

type staleKey struct {
	name  string // lower-cased FQDN
	qtype uint16
}

type staleSet struct {
	mu      sync.Mutex
	entries []staleEntry
}

type staleEntry struct {
	// block holds the clients the answer is valid for; everyone when global is set (scope 0).
	block  netip.Prefix
	global bool
	stored time.Time
	answer *frame.Answer
}

func newStaleCache(size int, maxAge time.Duration) *staleCache {
	names, _ := lru.New[staleKey, *staleSet](size) // only fails for size <= 0, which setup rejects
	return &staleCache{names: names, maxAge: maxAge}
}

// put remembers a positive authoritative answer for the block of client at the answer's scope.
func (s *staleCache) put(name string, qtype uint16, client netip.Addr, a *frame.Answer, now time.Time) {
	if a.Rcode != dns.RcodeSuccess || len(a.Answer) == 0 || a.Flags&frame.AnswerAA == 0 || !client.IsValid() {
		return
	}
	e := staleEntry{global: a.ClientScope == 0, stored: now, answer: a}
	if !e.global {
		block, err := client.Prefix(int(a.ClientScope))
		if err != nil {
			return
		}
		e.block = block
	}
	key := staleKey{name: strings.ToLower(name), qtype: qtype}
	set, ok := s.names.Get(key)
	if !ok {
		set = &staleSet{}
		if prev, found, _ := s.names.PeekOrAdd(key, set); found {
			set = prev
		}
	}
	set.mu.Lock()
	defer set.mu.Unlock()
	oldest := 0
	for i := range set.entries {
		if set.entries[i].global == e.global && set.entries[i].block == e.block {
			set.entries[i] = e
			return
		}
		if set.entries[i].stored.Before(set.entries[oldest].stored) {
			oldest = i
		}
	}
	if len(set.entries) < blocksPerName {
		set.entries = append(set.entries, e)
		return
	}
	set.entries[oldest] = e
}

// get returns the remembered answer whose block holds client, if it is younger than maxAge.
func (s *staleCache) get(name string, qtype uint16, client netip.Addr, now time.Time) *frame.Answer {
	set, ok := s.names.Get(staleKey{name: strings.ToLower(name), qtype: qtype})
	if !ok {
		return nil
	}
	set.mu.Lock()
	defer set.mu.Unlock()
	var best *staleEntry
	for i := range set.entries {
		e := &set.entries[i]
		if now.Sub(e.stored) > s.maxAge || !(e.global || e.block.Contains(client)) {
			continue
		}
		// The most specific block wins, as the engine's own answer for this client would have.
		if best == nil || (!e.global && (best.global || e.block.Bits() > best.block.Bits())) {
			best = e
		}
	}
	if best == nil {
		return nil
	}
	return best.answer
}
