// Package gslb is a CoreDNS plugin that answers queries for its zones from the gslbd engine: it
// forwards each question, with the resolver's address and the query's ECS option, over the
// compact protocol on a Unix socket (docs/protocol.md) and writes the engine's answer. When the
// engine cannot answer it follows the configured ordered policy: a last good answer for the
// client's block, the next plugin, or SERVFAIL — never NXDOMAIN.
package gslb

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/metrics"
	"github.com/coredns/coredns/plugin/pkg/fall"
	"github.com/coredns/coredns/plugin/pkg/transport"
	"github.com/coredns/coredns/request"
	"github.com/gslbd/gslbd/coredns-bridge/internal/engine"
	"github.com/gslbd/gslbd/coredns-bridge/internal/frame"
	"github.com/miekg/dns"
)

// Name is the plugin's directive name; Name() must return it for the ready plugin to find us.
const Name = "gslb"

// onError steps, tried in order when the engine does not answer.
const (
	policyStale       = "stale"
	policyFallthrough = "fallthrough"
	policyServfail    = "servfail"
)

// GSLB is the plugin handler.
type GSLB struct {
	Next  plugin.Handler
	Zones []string
	// Fall: answers the engine marks not-ours (outside its zones) go to the next plugin for these names.
	Fall fall.F

	client   *engine.Client
	socket   string
	timeout  time.Duration
	onError  []string
	bufsize  int
	staleTTL uint32
	stale    *staleCache
	now      func() time.Time
}

// Name implements plugin.Handler.
func (g *GSLB) Name() string { return Name }

// Ready implements ready.Readiness: true while a connection to a serving engine is up.
func (g *GSLB) Ready() bool { return g.client.Up() }

// ServeDNS implements plugin.Handler.
func (g *GSLB) ServeDNS(ctx context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	state := request.Request{W: w, Req: r}
	qname := state.Name()
	if plugin.Zones(g.Zones).Matches(qname) == "" {
		return plugin.NextOrFailure(g.Name(), g.Next, ctx, w, r)
	}
	if r.Opcode != dns.OpcodeQuery {
		// NOTIFY: the one opcode besides QUERY that miekg/dns passes on (it answers UPDATE and the
		// others NOTIMP itself). The engine has no secondaries to notify nor zones to refresh: NOTIMP,
		// as its standalone listener answers; CoreDNS writes it (plugin.ClientWrite).
		return dns.RcodeNotImplemented, nil
	}
	ecs, ecsOptions := ecsOf(r)
	if ecsOptions > 1 {
		// RFC 7871 §7.1.1: malformed ECS is FORMERR; two options are, as on the standalone listener.
		return dns.RcodeFormatError, nil
	}
	if o := r.IsEdns0(); o != nil && int(o.UDPSize()) > g.bufsize {
		// As the bufsize plugin does: CoreDNS's ScrubWriter sizes the reply, and advertises in its
		// OPT, what the request's OPT says, so a UDP answer never exceeds g.bufsize (DNS flag day 2020).
		o.SetUDPSize(uint16(g.bufsize)) // #nosec G115 -- bufsize is at most 4096
	}
	server := metrics.WithServer(ctx)
	q := &frame.Query{
		Qtype:     state.QType(),
		Qclass:    state.QClass(),
		Transport: transportOf(ctx, state),
		Qname:     r.Question[0].Name,
	}
	q.Source, q.SourcePort = remote(w)
	if ecs != nil {
		q.ECS = ecsData(ecs)
	}
	client := clientAddr(ecs, q.Source)

	cctx, cancel := context.WithTimeout(ctx, g.timeout)
	started := time.Now()
	a, err := g.client.Query(cctx, q)
	cancel()
	if err != nil {
		return g.unavailable(ctx, w, r, server, qname, client, ecs, err)
	}
	engineDuration.WithLabelValues(server).Observe(time.Since(started).Seconds())

	if a.Flags&frame.AnswerNotOurs != 0 && g.Fall.Through(qname) {
		requestCount.WithLabelValues(server, "not_ours").Inc()
		return plugin.NextOrFailure(g.Name(), g.Next, ctx, w, r)
	}
	g.remember(server, qname, q.Qtype, client, a)
	requestCount.WithLabelValues(server, "answer").Inc()
	w.WriteMsg(reply(r, ecs, a, a.ECSScope, 0))
	// Written: a non-error code tells the server not to write again (plugin/plugin.go ClientWrite).
	return dns.RcodeSuccess, nil
}

// unavailable applies the onError steps in order; SERVFAIL when none of them answers.
func (g *GSLB) unavailable(ctx context.Context, w dns.ResponseWriter, r *dns.Msg, server, qname string, client netip.Addr, ecs *dns.EDNS0_SUBNET, cause error) (int, error) {
	engineErrors.WithLabelValues(server, reasonOf(cause)).Inc()
	for _, step := range g.onError {
		switch step {
		case policyStale:
			a, ch := g.stale.get(qname, r.Question[0].Qtype, client, g.now())
			g.staleMetrics(server, ch)
			if a != nil {
				requestCount.WithLabelValues(server, "stale").Inc()
				staleHits.WithLabelValues(server).Inc()
				w.WriteMsg(reply(r, ecs, a, ecsScopeFor(ecs, a.ClientScope), g.staleTTL))
				return dns.RcodeSuccess, nil
			}
			staleMisses.WithLabelValues(server).Inc()
		case policyFallthrough:
			requestCount.WithLabelValues(server, "fallthrough").Inc()
			return plugin.NextOrFailure(g.Name(), g.Next, ctx, w, r)
		}
		if step == policyServfail {
			break
		}
	}
	requestCount.WithLabelValues(server, "servfail").Inc()
	// Not written: the server writes SERVFAIL (never NXDOMAIN, which resolvers would cache).
	return dns.RcodeServerFailure, fmt.Errorf("plugin/gslb: engine: %w", cause)
}

// remember keeps an engine answer for stale use.
func (g *GSLB) remember(server, qname string, qtype uint16, client netip.Addr, a *frame.Answer) {
	g.staleMetrics(server, g.stale.put(qname, qtype, client, a, g.now()))
}

// staleMetrics counts a stale-cache call's evictions and, when it changed the entries, sets the
// size gauges (most answers refresh an entry of the same size: no gauge update on the hot path).
func (g *GSLB) staleMetrics(server string, ch staleChange) {
	if ch == (staleChange{}) {
		return
	}
	if ch.memory > 0 {
		staleEvictions.WithLabelValues(server, "memory").Add(float64(ch.memory))
	}
	if ch.expired > 0 {
		staleEvictions.WithLabelValues(server, "expired").Add(float64(ch.expired))
	}
	bytes, n := g.stale.size()
	staleEntries.WithLabelValues(server).Set(float64(n))
	staleBytes.WithLabelValues(server).Set(float64(bytes))
}

func reasonOf(err error) string {
	var ee *engine.EngineError
	switch {
	case errors.Is(err, engine.ErrDown):
		return "down"
	case errors.Is(err, engine.ErrTimeout):
		return "timeout"
	case errors.Is(err, engine.ErrOverload):
		return "overload"
	case errors.As(err, &ee):
		return "engine"
	}
	return "proto"
}

// reply builds the response: the question as asked (case preserved), AA and rcode from the
// engine, its records, and — when the query had EDNS — an OPT with the ECS option echoed
// (family, source prefix, address as sent) with scope. A non-zero ttl marks a stale answer:
// it overrides every record's TTL, and owners spelled as the question get this question's case
// (see staleCopy).
func reply(r *dns.Msg, ecs *dns.EDNS0_SUBNET, a *frame.Answer, scope uint8, ttl uint32) *dns.Msg {
	m := new(dns.Msg)
	m.SetReply(r)
	m.Authoritative = a.Flags&frame.AnswerAA != 0
	m.Rcode = int(a.Rcode)
	m.Answer, m.Ns, m.Extra = a.Answer, a.Ns, a.Extra
	if ttl > 0 {
		qname := r.Question[0].Name
		m.Answer, m.Ns, m.Extra = staleCopy(a.Answer, ttl, qname), staleCopy(a.Ns, ttl, qname), staleCopy(a.Extra, ttl, qname)
	}
	if o := r.IsEdns0(); o != nil {
		// Our own OPT: SizeAndDo keeps a reply's OPT options, but drops ECS from a copied one.
		m.SetEdns0(o.UDPSize(), o.Do())
		if ecs != nil && a.Rcode != dns.RcodeFormatError {
			ro := m.IsEdns0()
			ro.Option = append(ro.Option, &dns.EDNS0_SUBNET{
				Code:          dns.EDNS0SUBNET,
				Family:        ecs.Family,
				SourceNetmask: ecs.SourceNetmask,
				SourceScope:   scope,
				Address:       ecs.Address,
			})
		}
	}
	return m
}

// staleCopy copies a stale answer's records with every TTL set to ttl. The answer was stored from
// an earlier query, whose spelling of the name its owners kept (the engine writes the question's
// name as asked, other owners as configured), and names compare case-insensitively in ASCII
// (RFC 4343): owners equal to qname but for case are written as this question spells it, as the
// engine would answer it.
func staleCopy(rrs []dns.RR, ttl uint32, qname string) []dns.RR {
	if len(rrs) == 0 {
		return nil
	}
	canonical := dns.CanonicalName(qname)
	out := make([]dns.RR, len(rrs))
	for i, rr := range rrs {
		out[i] = dns.Copy(rr)
		h := out[i].Header()
		h.Ttl = ttl
		if h.Name != qname && dns.CanonicalName(h.Name) == canonical {
			h.Name = qname
		}
	}
	return out
}

// ecsOf returns the query's first ECS option, if any, and how many ECS options it has.
func ecsOf(r *dns.Msg) (*dns.EDNS0_SUBNET, int) {
	o := r.IsEdns0()
	if o == nil {
		return nil, 0
	}
	var first *dns.EDNS0_SUBNET
	n := 0
	for _, opt := range o.Option {
		if e, ok := opt.(*dns.EDNS0_SUBNET); ok {
			if n == 0 {
				first = e
			}
			n++
		}
	}
	return first, n
}

// ecsData rebuilds the ECS option data (RFC 7871 §6) for the engine, which validates it as its
// standalone listener does. miekg/dns has already parsed the option: it answered FORMERR itself
// for an unknown family, a prefix longer than the family, or family 0 with a prefix, and it
// copied the address into a zeroed 4- or 16-byte buffer, which loses how many octets were sent.
// So the data carries ceil(source/8) address bytes, extended to the last non-zero byte: an
// address with bits set beyond its prefix (a /0 with address bytes included) or non-zero extra
// octets reaches the engine as sent, and gets its FORMERR. Missing octets, or extra all-zero
// ones, are indistinguishable from the zero-padded prefix here and are answered as such
// (docs/protocol.md, QUERY).
func ecsData(e *dns.EDNS0_SUBNET) []byte {
	addr := e.Address
	if e.Family == 1 {
		addr = addr.To4()
	}
	if e.Family == 0 {
		addr = nil
	}
	n := (int(e.SourceNetmask) + 7) / 8
	for i := n; i < len(addr); i++ {
		if addr[i] != 0 {
			n = i + 1
		}
	}
	if n > len(addr) {
		n = len(addr)
	}
	b := make([]byte, 4, 4+n)
	b[0], b[1], b[2], b[3] = byte(e.Family>>8), byte(e.Family), e.SourceNetmask, e.SourceScope
	return append(b, addr[:n]...)
}

// clientAddr is the address the engine selects for (the same rule as the engine's clientFor):
// the ECS address when its source prefix, after folding IPv4-mapped IPv6, is > 0; else the
// resolver's address. Used to key stale answers, so it must agree with the engine.
func clientAddr(ecs *dns.EDNS0_SUBNET, source netip.Addr) netip.Addr {
	if ecs != nil && ecs.Family != 0 {
		if addr, ok := netip.AddrFromSlice(ecs.Address); ok {
			prefix := int(ecs.SourceNetmask)
			if ecs.Family == 2 && addr.Is4In6() {
				prefix -= 96
			}
			if prefix > 0 {
				return addr.Unmap()
			}
		}
	}
	return source.Unmap()
}

// ecsScopeFor is the reply scope for a stale answer valid for a block of clientScope bits: what
// the engine would send (RFC 7871 §7.2.1): 0 when the ECS prefix carries no client bits (source
// 0, or IPv4-mapped with a prefix ≤ 96), 96 + the IPv4 scope for IPv4-mapped ECS.
func ecsScopeFor(ecs *dns.EDNS0_SUBNET, clientScope uint8) uint8 {
	if ecs == nil || ecs.SourceNetmask == 0 || clientScope == 0 {
		return 0
	}
	if addr, ok := netip.AddrFromSlice(ecs.Address); ok && ecs.Family == 2 && addr.Is4In6() {
		if ecs.SourceNetmask <= 96 {
			return 0
		}
		return min(128, 96+clientScope)
	}
	if ecs.Family == 1 {
		return min(32, clientScope)
	}
	return min(128, clientScope)
}

// remote is the resolver's address and port.
func remote(w dns.ResponseWriter) (netip.Addr, uint16) {
	switch a := w.RemoteAddr().(type) {
	case *net.UDPAddr:
		ap := a.AddrPort()
		return ap.Addr().Unmap(), ap.Port()
	case *net.TCPAddr:
		ap := a.AddrPort()
		return ap.Addr().Unmap(), ap.Port()
	}
	if ap, err := netip.ParseAddrPort(w.RemoteAddr().String()); err == nil {
		return ap.Addr().Unmap(), ap.Port()
	}
	return netip.Addr{}, 0
}

// transportOf names the client's transport from the server's scheme (tls://, https://, …) or,
// for plain DNS, from the connection.
func transportOf(ctx context.Context, state request.Request) uint8 {
	if s, ok := ctx.Value(dnsserver.Key{}).(*dnsserver.Server); ok {
		scheme, _, _ := strings.Cut(s.Addr, "://")
		switch scheme {
		case transport.TLS:
			return frame.TransportTLS
		case transport.HTTPS:
			return frame.TransportHTTPS
		case transport.QUIC:
			return frame.TransportQUIC
		case transport.GRPC:
			return frame.TransportGRPC
		case transport.HTTPS3:
			return frame.TransportH3
		}
	}
	if state.Proto() == "tcp" {
		return frame.TransportTCP
	}
	return frame.TransportUDP
}
