package gslb

import (
	"container/list"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/gslbd/gslbd/coredns-bridge/internal/frame"
	"github.com/miekg/dns"
)

// Estimated bytes of the cache's own structures, beside the records' wire size (measured with
// Go 1.26 on amd64: map slot, list element, entry, key and the decoded RR structs).
const (
	entryOverhead = 320 // an entry: its map slot (with the map's growth slack), list element, staleEntry and the Answer struct
	rrOverhead    = 96  // a decoded dns.RR beyond its wire length: the struct, header and slice slot
	nameOverhead  = 160 // a name × type's prefix-length index and its map slot
)

// staleCache keeps the last good engine answer per (name, type, client block), to answer with
// while the engine is unreachable (RFC 8767 serve-stale in spirit). The block is the answer's own
// scope around the client that got it (the engine's ClientScope): an entry is served only to
// clients inside that block, and only while it is younger than maxAge. The cache is bounded by
// memory, not by a count per name: entries are estimated at their records' wire size plus the
// cache's own overhead, and the least recently used (stored or served) go first once the total
// passes maxBytes, so every recent client of a busy name keeps its own answer.
type staleCache struct {
	maxBytes int64
	maxAge   time.Duration

	mu      sync.Mutex
	entries map[staleKey]*list.Element // values are *staleEntry
	lru     list.List                  // front: most recently used
	names   map[nameKey]*nameIndex
	bytes   int64
}

type nameKey struct {
	name  string // lower-cased FQDN
	qtype uint16
}

// staleKey names one entry: a name and type, and the block of clients the answer is valid for
// (the zero Prefix for an answer of scope 0, valid for every client).
type staleKey struct {
	nameKey
	block netip.Prefix
}

type staleEntry struct {
	key    staleKey
	stored time.Time
	answer *frame.Answer
	size   int64
}

// nameIndex says which block lengths a name × type has entries at, so a lookup tries only those
// instead of every prefix length of the client's family.
type nameIndex struct {
	v4      uint64    // bit n: an IPv4 block of length n (0–32)
	v6      [3]uint64 // bit n: an IPv6 block of length n (0–128)
	global  bool      // an entry of scope 0
	entries int
}

// staleChange says what one call changed, for the metrics: entries dropped by reason (the
// evictions metric's label) and whether the entries or their estimated size changed otherwise.
type staleChange struct {
	memory  int  // least recently used, over the memory bound
	expired int  // older than maxAge when asked for
	grown   bool // an entry was added, or one changed size
}

func newStaleCache(maxBytes int64, maxAge time.Duration) *staleCache {
	return &staleCache{maxBytes: maxBytes, maxAge: maxAge, entries: map[staleKey]*list.Element{}, names: map[nameKey]*nameIndex{}}
}

// put remembers a positive authoritative answer for the block of client at the answer's scope,
// replacing the block's previous answer, and evicts the least recently used entries while the
// cache is over its memory bound.
func (s *staleCache) put(name string, qtype uint16, client netip.Addr, a *frame.Answer, now time.Time) staleChange {
	if a.Rcode != dns.RcodeSuccess || len(a.Answer) == 0 || a.Flags&frame.AnswerAA == 0 || !client.IsValid() {
		return staleChange{}
	}
	key := staleKey{nameKey: nameKey{name: strings.ToLower(name), qtype: qtype}}
	if a.ClientScope > 0 {
		block, err := client.Prefix(int(a.ClientScope))
		if err != nil {
			return staleChange{}
		}
		key.block = block
	}
	size := answerSize(key.name, a)
	s.mu.Lock()
	defer s.mu.Unlock()
	var ch staleChange
	if el, ok := s.entries[key]; ok {
		e := el.Value.(*staleEntry)
		ch.grown = size != e.size
		s.bytes += size - e.size
		e.stored, e.answer, e.size = now, a, size
		s.lru.MoveToFront(el)
	} else {
		idx := s.names[key.nameKey]
		if idx == nil {
			idx = &nameIndex{}
			s.names[key.nameKey] = idx
			s.bytes += nameOverhead + int64(len(key.name))
		}
		idx.add(key.block)
		s.entries[key] = s.lru.PushFront(&staleEntry{key: key, stored: now, answer: a, size: size})
		s.bytes += size
		ch.grown = true
	}
	for s.bytes > s.maxBytes && s.lru.Len() > 1 {
		s.remove(s.lru.Back())
		ch.memory++
	}
	return ch
}

// get returns the newest answer whose block holds client, skipping (and dropping) answers older
// than maxAge. Blocks of one name nest when the engine's answer classes changed between two
// answers (a reload, a health change, an override): the answer stored last is the engine's latest
// word for this client, whether its block is wider (it then covers the older, narrower block's
// clients too) or narrower than the others.
func (s *staleCache) get(name string, qtype uint16, client netip.Addr, now time.Time) (*frame.Answer, staleChange) {
	var ch staleChange
	nk := nameKey{name: strings.ToLower(name), qtype: qtype}
	s.mu.Lock()
	defer s.mu.Unlock()
	idx := s.names[nk]
	if idx == nil || !client.IsValid() {
		return nil, ch
	}
	var best *list.Element
	try := func(block netip.Prefix) {
		el, ok := s.entries[staleKey{nameKey: nk, block: block}]
		if !ok {
			return
		}
		e := el.Value.(*staleEntry)
		if now.Sub(e.stored) > s.maxAge {
			s.remove(el)
			ch.expired++
			return
		}
		if best == nil || e.stored.After(best.Value.(*staleEntry).stored) {
			best = el
		}
	}
	bits := 32
	if client.Is6() {
		bits = 128
	}
	// An expiry above may drop the name's last entry and its index: idx is then detached from
	// the cache, and its remaining bits only find no entry.
	for n := bits; n > 0; n-- {
		if idx.has(client.Is6(), n) {
			block, _ := client.Prefix(n) // n is within the family's bits
			try(block)
		}
	}
	if idx.global {
		try(netip.Prefix{})
	}
	if best == nil {
		return nil, ch
	}
	s.lru.MoveToFront(best)
	return best.Value.(*staleEntry).answer, ch
}

// size is the estimated memory the cache holds, in bytes, and its number of entries.
func (s *staleCache) size() (bytes int64, length int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bytes, s.lru.Len()
}

// remove drops one entry; its name's index goes with its last entry. Called with mu held.
func (s *staleCache) remove(el *list.Element) {
	e := s.lru.Remove(el).(*staleEntry)
	delete(s.entries, e.key)
	s.bytes -= e.size
	if idx := s.names[e.key.nameKey]; idx != nil {
		// The index keeps the entry's length bit: other entries may share it, and a bit without
		// an entry costs one map lookup, not a wrong answer.
		if idx.entries--; idx.entries == 0 {
			delete(s.names, e.key.nameKey)
			s.bytes -= nameOverhead + int64(len(e.key.name))
		}
	}
}

func (x *nameIndex) add(block netip.Prefix) {
	x.entries++
	switch {
	case !block.IsValid():
		x.global = true
	case block.Addr().Is4():
		x.v4 |= 1 << block.Bits()
	default:
		x.v6[block.Bits()/64] |= 1 << (block.Bits() % 64)
	}
}

func (x *nameIndex) has(v6 bool, n int) bool {
	if v6 {
		return x.v6[n/64]&(1<<(n%64)) != 0
	}
	return x.v4&(1<<n) != 0
}

// answerSize estimates the memory one entry holds: its records' uncompressed wire length, the
// decoded structs around them, the name of its key and the cache's own bookkeeping.
func answerSize(name string, a *frame.Answer) int64 {
	n := entryOverhead + len(name)
	for _, rrs := range [][]dns.RR{a.Answer, a.Ns, a.Extra} {
		for _, rr := range rrs {
			n += rrOverhead + dns.Len(rr)
		}
	}
	return int64(n)
}
