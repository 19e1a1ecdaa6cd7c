package gslb

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/plugin/pkg/dnstest"
	"github.com/coredns/coredns/plugin/test"
	"github.com/gslbd/gslbd/coredns-bridge/internal/engine"
	"github.com/gslbd/gslbd/coredns-bridge/internal/enginetest"
	"github.com/gslbd/gslbd/coredns-bridge/internal/frame"
	"github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// seen records the queries a fake engine received.
type seen struct {
	mu      sync.Mutex
	queries []*frame.Query
}

func (s *seen) add(q *frame.Query) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queries = append(s.queries, q)
}

func (s *seen) last() *frame.Query {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.queries[len(s.queries)-1]
}

// geoEngine answers www.example.org A by the client's /24 like a GSLB engine, with scope 24;
// v4only.example.org AAAA with NODATA; names outside example.org as not ours.
func geoEngine(s *seen) func(q *frame.Query, reply func(*frame.Answer)) {
	return func(q *frame.Query, reply func(*frame.Answer)) {
		s.add(q)
		soa := test.SOA("example.org. 300 IN SOA ns1.example.org. hostmaster.example.org. 1 7200 3600 1209600 300")
		switch {
		case !dns.IsSubDomain("example.org.", dns.Fqdn(q.Qname)):
			reply(&frame.Answer{Flags: frame.AnswerNotOurs, Rcode: dns.RcodeRefused})
		case q.Qtype == dns.TypeAAAA:
			reply(&frame.Answer{Flags: frame.AnswerAA, Ns: []dns.RR{soa}})
		default:
			ip := "192.0.2.10"
			if len(q.ECS) >= 7 && bytes.Equal(q.ECS[4:7], []byte{198, 51, 100}) {
				ip = "198.51.100.10"
			}
			var scope uint8 = 24
			ecsScope := uint8(0)
			if q.ECS != nil && q.ECS[2] > 0 {
				ecsScope = 24
			}
			reply(&frame.Answer{Flags: frame.AnswerAA, ECSScope: ecsScope, ClientScope: scope,
				Answer: []dns.RR{test.A(q.Qname + " 30 IN A " + ip)}})
		}
	}
}

func newTestGSLB(t *testing.T, socket, props string) *GSLB {
	t.Helper()
	g, opts, err := parse(caddy.NewTestController("dns", "gslb example.org {\n socket "+socket+"\n"+props+"\n}"))
	if err != nil {
		t.Fatal(err)
	}
	opts.BackoffMax = 50 * time.Millisecond
	g.client = engine.New(opts)
	g.client.Start(2 * time.Second)
	t.Cleanup(g.client.Stop)
	return g
}

func ecsQuery(name string, qtype uint16, subnet string) *dns.Msg {
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	m.SetEdns0(1232, false)
	if subnet != "" {
		p := netip.MustParsePrefix(subnet)
		family := uint16(1)
		if p.Addr().Is6() {
			family = 2
		}
		m.IsEdns0().Option = append(m.IsEdns0().Option, &dns.EDNS0_SUBNET{Code: dns.EDNS0SUBNET, Family: family,
			SourceNetmask: uint8(p.Bits()), Address: net.IP(p.Addr().AsSlice())})
	}
	return m
}

// newGeoGSLB starts a geoEngine on a fresh socket and a plugin with the default options in front
// of it; the returned seen lists the queries that reached the engine.
func newGeoGSLB(t *testing.T) (*GSLB, *seen) {
	t.Helper()
	sock := enginetest.ShortSocket(t)
	s := &seen{}
	enginetest.Start(t, sock, geoEngine(s))
	return newTestGSLB(t, sock, ""), s
}

func serve(t *testing.T, g *GSLB, r *dns.Msg, remote string) (*dnstest.Recorder, int, error) {
	t.Helper()
	rec := dnstest.NewRecorder(&test.ResponseWriter{RemoteIP: remote})
	rcode, err := g.ServeDNS(context.TODO(), rec, r)
	return rec, rcode, err
}

func ecsOfReply(t *testing.T, m *dns.Msg) *dns.EDNS0_SUBNET {
	t.Helper()
	if m.IsEdns0() == nil {
		t.Fatal("no OPT in the reply")
	}
	e, _ := ecsOf(m)
	if e == nil {
		t.Fatal("no ECS option in the reply")
	}
	return e
}

func TestAnswerCarriesAAAndTheEnginesECSScopeAndKeepsTheQuestionCase(t *testing.T) {
	g, s := newGeoGSLB(t)
	g.Next = test.NextHandler(dns.RcodeRefused, nil)

	rec, rcode, err := serve(t, g, ecsQuery("WwW.Example.ORG.", dns.TypeA, "198.51.100.0/24"), "192.0.2.53")
	if err != nil || rcode != dns.RcodeSuccess {
		t.Fatalf("rcode %d err %v", rcode, err)
	}
	tc := test.Case{Qname: "WwW.Example.ORG.", Qtype: dns.TypeA,
		Answer: []dns.RR{test.A("WwW.Example.ORG. 30 IN A 198.51.100.10")},
		Extra:  []dns.RR{test.OPT(1232, false)}}
	if err := test.SortAndCheck(rec.Msg, tc); err != nil {
		t.Fatal(err)
	}
	if !rec.Msg.Authoritative || rec.Msg.Question[0].Name != "WwW.Example.ORG." {
		t.Errorf("AA %v question %q", rec.Msg.Authoritative, rec.Msg.Question[0].Name)
	}
	e := ecsOfReply(t, rec.Msg)
	if e.Family != 1 || e.SourceNetmask != 24 || e.SourceScope != 24 || !e.Address.Equal(net.ParseIP("198.51.100.0")) {
		t.Errorf("ECS %v", e)
	}
	q := s.last()
	if q.Source != netip.MustParseAddr("192.0.2.53") || q.SourcePort != 40212 || q.Transport != frame.TransportUDP ||
		q.Qname != "WwW.Example.ORG." || !bytes.Equal(q.ECS, []byte{0, 1, 24, 0, 198, 51, 100}) {
		t.Errorf("engine saw %+v", q)
	}
}

func TestNoOPTWithoutEDNSAndTCPIsReported(t *testing.T) {
	g, s := newGeoGSLB(t)
	r := new(dns.Msg)
	r.SetQuestion("www.example.org.", dns.TypeA)
	rec := dnstest.NewRecorder(&test.ResponseWriter{RemoteIP: "2001:db8::53", TCP: true})
	if _, err := g.ServeDNS(context.TODO(), rec, r); err != nil {
		t.Fatal(err)
	}
	if rec.Msg.IsEdns0() != nil {
		t.Error("OPT in the reply to a query without EDNS")
	}
	if q := s.last(); q.Transport != frame.TransportTCP || q.Source != netip.MustParseAddr("2001:db8::53") || q.ECS != nil {
		t.Errorf("engine saw %+v", q)
	}
}

func TestMissingFamilyIsNODATANotSERVFAIL(t *testing.T) {
	sock := enginetest.ShortSocket(t)
	enginetest.Start(t, sock, geoEngine(&seen{}))
	g := newTestGSLB(t, sock, "")
	rec, rcode, err := serve(t, g, ecsQuery("v4only.example.org.", dns.TypeAAAA, "198.51.100.0/24"), "192.0.2.53")
	if err != nil || rcode != dns.RcodeSuccess {
		t.Fatal(rcode, err)
	}
	tc := test.Case{Qname: "v4only.example.org.", Qtype: dns.TypeAAAA, Rcode: dns.RcodeSuccess,
		Ns:    []dns.RR{test.SOA("example.org. 300 IN SOA ns1.example.org. hostmaster.example.org. 1 7200 3600 1209600 300")},
		Extra: []dns.RR{test.OPT(1232, false)}}
	if err := test.SortAndCheck(rec.Msg, tc); err != nil {
		t.Fatal(err)
	}
	if !rec.Msg.Authoritative || ecsOfReply(t, rec.Msg).SourceScope != 0 {
		t.Errorf("AA %v", rec.Msg.Authoritative)
	}
}

func TestNotOursGoesToTheNextPluginOnlyWithFallthrough(t *testing.T) {
	sock := enginetest.ShortSocket(t)
	enginetest.Start(t, sock, geoEngine(&seen{}))
	g := newTestGSLB(t, sock, "")
	g.Zones = []string{"."}
	g.Next = test.NextHandler(dns.RcodeNameError, nil)
	rec, rcode, _ := serve(t, g, ecsQuery("www.example.com.", dns.TypeA, ""), "192.0.2.53")
	if rcode != dns.RcodeSuccess || rec.Msg.Rcode != dns.RcodeRefused || rec.Msg.Authoritative {
		t.Errorf("without fallthrough: rcode %d reply %v", rcode, rec.Msg)
	}
	g.Fall.SetZonesFromArgs(nil)
	_, rcode, _ = serve(t, g, ecsQuery("www.example.com.", dns.TypeA, ""), "192.0.2.53")
	if rcode != dns.RcodeNameError {
		t.Errorf("with fallthrough: rcode %d, want the next plugin's", rcode)
	}
}

func TestNamesOutsideTheZonesNeverReachTheEngine(t *testing.T) {
	g, s := newGeoGSLB(t)
	g.Next = test.NextHandler(dns.RcodeNotImplemented, nil)
	if _, rcode, _ := serve(t, g, ecsQuery("www.example.com.", dns.TypeA, ""), "192.0.2.53"); rcode != dns.RcodeNotImplemented {
		t.Errorf("rcode %d", rcode)
	}
	if len(s.queries) != 0 {
		t.Error("the engine was asked")
	}
}

func TestEngineUnreachableStaleThenFallthroughThenServfailNeverNXDOMAIN(t *testing.T) {
	sock := enginetest.ShortSocket(t)
	fake := enginetest.Start(t, sock, geoEngine(&seen{}))
	g := newTestGSLB(t, sock, "on_error stale fallthrough\nstale_ttl 7s")
	next := &countingHandler{rcode: dns.RcodeSuccess}
	g.Next = next
	if _, rcode, err := serve(t, g, ecsQuery("www.example.org.", dns.TypeA, "198.51.100.0/24"), "192.0.2.53"); rcode != 0 || err != nil {
		t.Fatal(rcode, err)
	}
	if !g.Ready() {
		t.Fatal("not ready with the engine up")
	}
	fake.Stop()
	deadline := time.Now().Add(2 * time.Second)
	for g.Ready() && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if g.Ready() {
		t.Fatal("still ready with the engine gone")
	}

	// Same /24 (another host, ECS /32): the stale answer, short TTL, scope of the stored block.
	rec, rcode, err := serve(t, g, ecsQuery("www.example.org.", dns.TypeA, "198.51.100.77/32"), "192.0.2.53")
	if rcode != dns.RcodeSuccess || err != nil {
		t.Fatal(rcode, err)
	}
	tc := test.Case{Qname: "www.example.org.", Qtype: dns.TypeA,
		Answer: []dns.RR{test.A("www.example.org. 7 IN A 198.51.100.10")}, Extra: []dns.RR{test.OPT(1232, false)}}
	if err := test.SortAndCheck(rec.Msg, tc); err != nil {
		t.Fatal(err)
	}
	if e := ecsOfReply(t, rec.Msg); e.SourceNetmask != 32 || e.SourceScope != 24 {
		t.Errorf("stale ECS %v", e)
	}

	// Another block: nothing stale for it, so the next plugin answers.
	if _, rcode, _ := serve(t, g, ecsQuery("www.example.org.", dns.TypeA, "203.0.113.0/24"), "192.0.2.53"); rcode != dns.RcodeSuccess || next.calls != 1 {
		t.Errorf("fallthrough: rcode %d next called %d times", rcode, next.calls)
	}

	// Only servfail: nothing written, SERVFAIL returned for the server to write.
	g.onError = []string{policyServfail}
	rec, rcode, err = serve(t, g, ecsQuery("www.example.org.", dns.TypeA, "198.51.100.0/24"), "192.0.2.53")
	if rcode != dns.RcodeServerFailure || err == nil || rec.Msg != nil {
		t.Errorf("servfail: rcode %d err %v written %v", rcode, err, rec.Msg)
	}

	// stale without a hit and no other step: SERVFAIL, never NXDOMAIN.
	g.onError = []string{policyStale}
	_, rcode, _ = serve(t, g, ecsQuery("other.example.org.", dns.TypeA, ""), "192.0.2.53")
	if rcode != dns.RcodeServerFailure {
		t.Errorf("stale miss: rcode %d", rcode)
	}

	// The engine comes back: answers resume without a restart.
	enginetest.Start(t, sock, geoEngine(&seen{}))
	deadline = time.Now().Add(3 * time.Second)
	for !g.Ready() && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	rec, rcode, err = serve(t, g, ecsQuery("www.example.org.", dns.TypeA, "198.51.100.0/24"), "192.0.2.53")
	if rcode != dns.RcodeSuccess || err != nil || rec.Msg.Answer[0].Header().Ttl != 30 {
		t.Fatalf("after restart: %d %v %v", rcode, err, rec.Msg)
	}
}

func TestEngineTimeoutIsBoundedByTheConfiguredTimeout(t *testing.T) {
	sock := enginetest.ShortSocket(t)
	enginetest.Start(t, sock, func(q *frame.Query, reply func(*frame.Answer)) {})
	g := newTestGSLB(t, sock, "timeout 50ms\non_error servfail")
	started := time.Now()
	_, rcode, err := serve(t, g, ecsQuery("www.example.org.", dns.TypeA, ""), "192.0.2.53")
	if rcode != dns.RcodeServerFailure || err == nil {
		t.Fatal(rcode, err)
	}
	if d := time.Since(started); d < 50*time.Millisecond || d > 3*time.Second {
		t.Errorf("took %v", d)
	}
}

func TestClientAddressAndStaleScopeFollowTheEnginesRules(t *testing.T) {
	src := netip.MustParseAddr("192.0.2.53")
	mapped := &dns.EDNS0_SUBNET{Family: 2, SourceNetmask: 120, Address: net.ParseIP("::ffff:198.51.100.0")}
	short := &dns.EDNS0_SUBNET{Family: 2, SourceNetmask: 96, Address: net.ParseIP("::ffff:0.0.0.0")}
	v4 := &dns.EDNS0_SUBNET{Family: 1, SourceNetmask: 24, Address: net.ParseIP("198.51.100.0")}
	zero := &dns.EDNS0_SUBNET{Family: 1, SourceNetmask: 0, Address: net.ParseIP("0.0.0.0")}
	for _, tc := range []struct {
		ecs    *dns.EDNS0_SUBNET
		client string
		scope  uint8
	}{
		{nil, "192.0.2.53", 0},
		{v4, "198.51.100.0", 20},
		{mapped, "198.51.100.0", 116},
		{short, "192.0.2.53", 0},
		{zero, "192.0.2.53", 0},
	} {
		if got := clientAddr(tc.ecs, src); got.String() != tc.client {
			t.Errorf("%v: client %v, want %s", tc.ecs, got, tc.client)
		}
		if got := ecsScopeFor(tc.ecs, 20); got != tc.scope {
			t.Errorf("%v: scope %d, want %d", tc.ecs, got, tc.scope)
		}
	}
}

// parsedECS is the ECS option miekg/dns parses from option data `wire`, as CoreDNS hands it to ServeDNS.
func parsedECS(t *testing.T, wire []byte) *dns.EDNS0_SUBNET {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion("www.example.org.", dns.TypeA)
	m.SetEdns0(1232, false)
	m.IsEdns0().Option = []dns.EDNS0{&dns.EDNS0_LOCAL{Code: dns.EDNS0SUBNET, Data: wire}}
	packed, err := m.Pack()
	if err != nil {
		t.Fatal(err)
	}
	parsed := new(dns.Msg)
	if err := parsed.Unpack(packed); err != nil {
		t.Fatalf("%x: %v", wire, err)
	}
	e, n := ecsOf(parsed)
	if e == nil || n != 1 {
		t.Fatalf("%x: %d ECS options parsed", wire, n)
	}
	return e
}

func TestECSDataCarriesWhatTheEngineNeedsToValidate(t *testing.T) {
	for _, tc := range []struct {
		name       string
		wire, sent []byte
	}{
		{"v4 /22, bits within the prefix", []byte{0, 1, 22, 0, 198, 51, 100}, nil},
		{"bits beyond the prefix", []byte{0, 1, 22, 0, 198, 51, 103}, nil},
		{"a non-zero octet too many", []byte{0, 1, 24, 0, 8, 8, 8, 5}, nil},
		{"source /0 with an address", []byte{0, 1, 0, 0, 8}, nil},
		{"non-zero scope in a query", []byte{0, 1, 24, 16, 8, 8, 8}, nil},
		{"family 0, /0 (dig +subnet=0)", []byte{0, 0, 0, 0}, nil},
		{"IPv4-mapped /120", []byte{0, 2, 120, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 51, 100}, nil},
		// Lost in miekg/dns's parse (a zeroed fixed-size buffer): sent as the zero-padded prefix.
		{"an octet missing", []byte{0, 1, 24, 0, 8, 8}, []byte{0, 1, 24, 0, 8, 8, 0}},
		{"a zero octet too many", []byte{0, 1, 24, 0, 8, 8, 8, 0}, []byte{0, 1, 24, 0, 8, 8, 8}},
	} {
		want := tc.sent
		if want == nil {
			want = tc.wire
		}
		if got := ecsData(parsedECS(t, tc.wire)); !bytes.Equal(got, want) {
			t.Errorf("%s: ECS data %x, want %x", tc.name, got, want)
		}
	}
}

func staleAnswer(scope uint8, ip string) *frame.Answer {
	return &frame.Answer{Flags: frame.AnswerAA, ClientScope: scope, Answer: []dns.RR{test.A("a.example.org. 30 IN A " + ip)}}
}

// Every recent client block of a busy name keeps its own answer: the bound is memory, not a
// number of blocks per name (the cache used to keep 16, so most clients of a busy name got the
// fail-safe during an engine outage).
func TestStaleCacheKeepsEveryBlockOfABusyName(t *testing.T) {
	c := newStaleCache(defaultStaleMem, time.Hour)
	now := time.Now()
	block := func(i int) netip.Addr { return netip.AddrFrom4([4]byte{10, byte(i >> 8), byte(i), 1}) }
	for i := 0; i < 5000; i++ {
		c.put("a.example.org.", dns.TypeA, block(i), staleAnswer(24, fmt.Sprintf("192.0.2.%d", i%250)), now)
	}
	for i := 0; i < 5000; i++ {
		a, _ := c.get("A.Example.ORG.", dns.TypeA, block(i).Next(), now)
		if a == nil || a.Answer[0].(*dns.A).A.String() != fmt.Sprintf("192.0.2.%d", i%250) {
			t.Fatalf("block %d: %v", i, a)
		}
	}
	if bytes, n := c.size(); n != 5000 || bytes > 5000*1024 {
		t.Errorf("%d entries, %d bytes", n, bytes)
	}
}

func TestStaleCacheIsBoundedByMemoryLeastRecentlyUsedFirst(t *testing.T) {
	now := time.Now()
	one := answerSize("a.example.org.", staleAnswer(24, "192.0.2.1"))
	c := newStaleCache(10*one+nameOverhead+int64(len("a.example.org.")), time.Hour)
	client := func(i int) netip.Addr { return netip.AddrFrom4([4]byte{10, 0, byte(i), 1}) }
	var evicted int
	for i := 0; i < 10; i++ {
		evicted += c.put("a.example.org.", dns.TypeA, client(i), staleAnswer(24, "192.0.2.1"), now).memory
	}
	if _, n := c.size(); n != 10 || evicted != 0 {
		t.Fatalf("%d entries, %d evicted; want 10 kept", n, evicted)
	}
	// Block 0 is served (used again); block 1 is now the least recently used.
	if a, _ := c.get("a.example.org.", dns.TypeA, client(0), now); a == nil {
		t.Fatal("block 0 missing")
	}
	ch := c.put("a.example.org.", dns.TypeA, client(10), staleAnswer(24, "192.0.2.1"), now)
	if ch.memory != 1 || !ch.grown {
		t.Errorf("change %+v, want one eviction for memory", ch)
	}
	if a, _ := c.get("a.example.org.", dns.TypeA, client(1), now); a != nil {
		t.Error("the least recently used block was kept")
	}
	for _, i := range []int{0, 2, 10} {
		if a, _ := c.get("a.example.org.", dns.TypeA, client(i), now); a == nil {
			t.Errorf("block %d was evicted", i)
		}
	}
	if bytes, _ := c.size(); bytes > c.maxBytes {
		t.Errorf("%d bytes held, bound %d", bytes, c.maxBytes)
	}
	// Refreshing a block replaces its answer in place: no new entry, no eviction.
	if ch := c.put("a.example.org.", dns.TypeA, client(0), staleAnswer(24, "192.0.2.2"), now); ch != (staleChange{}) {
		t.Errorf("refresh changed %+v", ch)
	}
	if a, _ := c.get("a.example.org.", dns.TypeA, client(0), now); a == nil || a.Answer[0].(*dns.A).A.String() != "192.0.2.2" {
		t.Errorf("refreshed block answers %v", a)
	}
}

func TestStaleEntriesAreServedOnlyInsideTheirBlockAndWithinStaleMax(t *testing.T) {
	c := newStaleCache(defaultStaleMem, time.Minute)
	now := time.Now()
	c.put("a.example.org.", dns.TypeA, netip.MustParseAddr("10.1.2.3"), staleAnswer(16, "192.0.2.16"), now)
	c.put("a.example.org.", dns.TypeA, netip.MustParseAddr("10.1.200.3"), staleAnswer(24, "192.0.2.24"), now.Add(time.Second))
	c.put("a.example.org.", dns.TypeA, netip.MustParseAddr("2001:db8:1::1"), staleAnswer(48, "192.0.2.48"), now)
	for _, tc := range []struct{ client, want string }{
		{"10.1.77.1", "192.0.2.16"},   // inside the /16 only
		{"10.1.200.77", "192.0.2.24"}, // the /24 is more specific than the /16 around it
		{"10.2.0.1", ""},              // outside every block
		{"2001:db8:1:ffff::9", "192.0.2.48"},
		{"2001:db8:2::1", ""},
	} {
		a, _ := c.get("a.example.org.", dns.TypeA, netip.MustParseAddr(tc.client), now.Add(30*time.Second))
		got := ""
		if a != nil {
			got = a.Answer[0].(*dns.A).A.String()
		}
		if got != tc.want {
			t.Errorf("%s: %q, want %q", tc.client, got, tc.want)
		}
	}
	if a, _ := c.get("a.example.org.", dns.TypeAAAA, netip.MustParseAddr("10.1.77.1"), now); a != nil {
		t.Error("served for another type")
	}
	// Older than stale_max: not served, and dropped when a lookup meets it (the /16 around the
	// /24 client is met on the way to the /24).
	a, ch := c.get("a.example.org.", dns.TypeA, netip.MustParseAddr("10.1.200.77"), now.Add(time.Minute+500*time.Millisecond))
	if a == nil || a.Answer[0].(*dns.A).A.String() != "192.0.2.24" || ch.expired != 1 {
		t.Errorf("the /24 (stored a second later) is still young, the /16 expired: %v %+v", a, ch)
	}
	a, ch = c.get("a.example.org.", dns.TypeA, netip.MustParseAddr("10.1.77.1"), now.Add(time.Minute+500*time.Millisecond))
	if a != nil || ch.expired != 0 {
		t.Errorf("expired /16: %v %+v", a, ch)
	}
	if _, n := c.size(); n != 2 {
		t.Errorf("%d entries after the expiry, want 2", n)
	}
	// Scope 0: one entry for every client, of either family.
	c.put("g.example.org.", dns.TypeA, netip.MustParseAddr("10.1.2.3"), staleAnswer(0, "192.0.2.1"), now)
	for _, client := range []string{"192.0.2.99", "2001:db8::1"} {
		if a, _ := c.get("g.example.org.", dns.TypeA, netip.MustParseAddr(client), now); a == nil {
			t.Errorf("scope-0 answer not served to %s", client)
		}
	}
	negative := &frame.Answer{Flags: frame.AnswerAA, Rcode: dns.RcodeNameError}
	nodata := &frame.Answer{Flags: frame.AnswerAA}
	notAA := &frame.Answer{ClientScope: 24, Answer: staleAnswer(24, "192.0.2.1").Answer}
	for _, bad := range []*frame.Answer{negative, nodata, notAA} {
		c.put("d.example.org.", dns.TypeA, netip.MustParseAddr("10.0.0.1"), bad, now)
	}
	if a, _ := c.get("d.example.org.", dns.TypeA, netip.MustParseAddr("10.0.0.1"), now); a != nil {
		t.Error("a negative, empty or non-authoritative answer was kept for stale use")
	}
}

// Where blocks of one name nest (the engine's answer classes changed between two answers), the
// answer stored last wins: a wider block stored after a narrower one covers the narrower one's
// clients, as the engine's latest answer for them did; a narrower one stored later wins inside
// itself only. IPv4 and IPv6 clients never see each other's blocks.
func TestStaleCacheServesTheNewestAnswerWhoseBlockHoldsTheClient(t *testing.T) {
	c := newStaleCache(defaultStaleMem, time.Hour)
	now := time.Now()
	at := func(s int) time.Time { return now.Add(time.Duration(s) * time.Second) }
	c.put("a.example.org.", dns.TypeA, netip.MustParseAddr("10.1.200.3"), staleAnswer(24, "192.0.2.24"), at(0))
	c.put("a.example.org.", dns.TypeA, netip.MustParseAddr("10.1.7.3"), staleAnswer(16, "192.0.2.16"), at(1))
	c.put("a.example.org.", dns.TypeA, netip.MustParseAddr("10.1.9.3"), staleAnswer(28, "192.0.2.28"), at(2))
	c.put("a.example.org.", dns.TypeA, netip.MustParseAddr("2001:db8::1"), staleAnswer(0, "192.0.2.99"), at(0))
	for _, tc := range []struct{ client, want string }{
		{"10.1.200.77", "192.0.2.16"}, // the /16 was stored after the /24 inside it
		{"10.1.9.12", "192.0.2.28"},   // the /28 was stored after the /16 around it
		{"10.1.9.17", "192.0.2.16"},   // outside the /28
		{"10.2.0.1", "192.0.2.99"},    // the scope-0 answer holds every client
	} {
		a, _ := c.get("a.example.org.", dns.TypeA, netip.MustParseAddr(tc.client), at(3))
		got := ""
		if a != nil {
			got = a.Answer[0].(*dns.A).A.String()
		}
		if got != tc.want {
			t.Errorf("%s: %q, want %q", tc.client, got, tc.want)
		}
	}
}

// The memory bound is meant in Go heap: the store's estimate of what it holds stays close to the
// heap its entries take (answers of one and of four records, over many names), so stale_memory
// bounds the process's memory, not an abstract count.
func TestStaleCacheEstimateMatchesTheHeapItHolds(t *testing.T) {
	answers := []*frame.Answer{staleAnswer(24, "192.0.2.1"), {Flags: frame.AnswerAA, ClientScope: 24, Answer: []dns.RR{
		test.A("a.example.org. 30 IN A 192.0.2.1"), test.A("a.example.org. 30 IN A 192.0.2.2"),
		test.A("a.example.org. 30 IN A 192.0.2.3"), test.A("a.example.org. 30 IN A 192.0.2.4"),
	}}}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	c := newStaleCache(1<<30, time.Hour)
	now := time.Now()
	for i := 0; i < 40000; i++ {
		// A fresh copy per entry, as every engine answer is decoded afresh.
		a := *answers[i%2]
		a.Answer = make([]dns.RR, len(answers[i%2].Answer))
		for j, rr := range answers[i%2].Answer {
			a.Answer[j] = dns.Copy(rr)
		}
		c.put(fmt.Sprintf("n%d.example.org.", i%400), dns.TypeA, netip.AddrFrom4([4]byte{10, byte(i >> 8), byte(i), 1}), &a, now)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	estimate, n := c.size()
	heap := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	ratio := float64(estimate) / float64(heap)
	t.Logf("%d entries: estimated %d bytes, heap %d bytes (ratio %.3f)", n, estimate, heap, ratio)
	if ratio < 0.85 || ratio > 1.2 {
		t.Errorf("estimate %d bytes vs %d bytes of heap (ratio %.3f)", estimate, heap, ratio)
	}
	runtime.KeepAlive(c)
}

// Many handlers share one cache (CoreDNS serves each query on its own goroutine): run with -race.
func TestStaleCacheUnderConcurrentPutsAndGets(t *testing.T) {
	one := answerSize("a.example.org.", staleAnswer(24, "192.0.2.1"))
	c := newStaleCache(200*one, time.Hour)
	now := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 2000; i++ {
				client := netip.AddrFrom4([4]byte{10, byte(w), byte(i), 1})
				c.put("a.example.org.", dns.TypeA, client, staleAnswer(24, "192.0.2.1"), now)
				if a, _ := c.get("a.example.org.", dns.TypeA, client, now); a != nil && a.Answer[0].(*dns.A).A.String() != "192.0.2.1" {
					t.Errorf("client %s: %v", client, a)
				}
			}
		}()
	}
	wg.Wait()
	if bytes, n := c.size(); bytes > c.maxBytes || n == 0 {
		t.Errorf("%d entries, %d bytes, bound %d", n, bytes, c.maxBytes)
	}
}

// metricValue reads a counter's or gauge's current value.
func metricValue(t *testing.T, m prometheus.Metric) float64 {
	t.Helper()
	var d dto.Metric
	if err := m.Write(&d); err != nil {
		t.Fatal(err)
	}
	if d.Counter != nil {
		return d.Counter.GetValue()
	}
	return d.Gauge.GetValue()
}

// The metrics of the stale cache: hits when a stale answer is served, misses when none holds the
// client, evictions by reason, and the entries and bytes gauges.
func TestStaleCacheMetrics(t *testing.T) {
	sock := enginetest.ShortSocket(t)
	fake := enginetest.Start(t, sock, geoEngine(&seen{}))
	g := newTestGSLB(t, sock, "on_error stale servfail\nstale_memory 64KiB")
	server, ctx := "", context.TODO() // no dnsserver.Server in the context: the server label is empty
	hits := metricValue(t, staleHits.WithLabelValues(server))
	misses := metricValue(t, staleMisses.WithLabelValues(server))
	evicted := metricValue(t, staleEvictions.WithLabelValues(server, "memory"))
	for i := 0; i < 400; i++ {
		rec := dnstest.NewRecorder(&test.ResponseWriter{RemoteIP: "192.0.2.53"})
		if _, err := g.ServeDNS(ctx, rec, ecsQuery("www.example.org.", dns.TypeA, fmt.Sprintf("10.%d.%d.0/24", i/256, i%256))); err != nil {
			t.Fatal(err)
		}
	}
	bytes, n := g.stale.size()
	if n == 0 || n >= 400 || bytes > 64<<10 {
		t.Fatalf("%d entries, %d bytes within a 64 KiB bound", n, bytes)
	}
	if got := metricValue(t, staleEvictions.WithLabelValues(server, "memory")) - evicted; got != float64(400-n) {
		t.Errorf("memory evictions %v, want %d", got, 400-n)
	}
	if got := metricValue(t, staleEntries.WithLabelValues(server)); got != float64(n) {
		t.Errorf("entries gauge %v, want %d", got, n)
	}
	if got := metricValue(t, staleBytes.WithLabelValues(server)); got != float64(bytes) {
		t.Errorf("bytes gauge %v, want %d", got, bytes)
	}
	fake.Stop()
	deadline := time.Now().Add(2 * time.Second)
	for g.Ready() && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	rec := dnstest.NewRecorder(&test.ResponseWriter{RemoteIP: "192.0.2.53"})
	if rcode, err := g.ServeDNS(ctx, rec, ecsQuery("www.example.org.", dns.TypeA, "10.1.143.0/24")); rcode != dns.RcodeSuccess || err != nil {
		t.Fatalf("the most recent block is not served stale: %d %v", rcode, err)
	}
	if got := metricValue(t, staleHits.WithLabelValues(server)) - hits; got != 1 {
		t.Errorf("stale hits %v, want 1", got)
	}
	// A block nobody asked for while the engine was up: a miss, and the next step answers.
	rec = dnstest.NewRecorder(&test.ResponseWriter{RemoteIP: "192.0.2.53"})
	if rcode, _ := g.ServeDNS(ctx, rec, ecsQuery("www.example.org.", dns.TypeA, "172.16.0.0/24")); rcode != dns.RcodeServerFailure {
		t.Fatalf("a block never answered: rcode %d, want SERVFAIL", rcode)
	}
	if got := metricValue(t, staleMisses.WithLabelValues(server)) - misses; got != 1 {
		t.Errorf("stale misses %v, want 1", got)
	}
}

type countingHandler struct {
	rcode int
	calls int
}

func (h *countingHandler) ServeDNS(ctx context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	h.calls++
	m := new(dns.Msg)
	m.SetReply(r)
	w.WriteMsg(m)
	return h.rcode, nil
}

func (h *countingHandler) Name() string { return "counting" }

func TestNotifyAndTwoECSOptionsAreAnsweredWithoutTheEngine(t *testing.T) {
	g, s := newGeoGSLB(t)

	notify := new(dns.Msg)
	notify.SetNotify("example.org.")
	rec, rcode, err := serve(t, g, notify, "192.0.2.53")
	if err != nil || rcode != dns.RcodeNotImplemented || rec.Msg != nil {
		t.Errorf("NOTIFY: rcode %d err %v written %v; want NOTIMP left to CoreDNS to write", rcode, err, rec.Msg)
	}

	two := ecsQuery("www.example.org.", dns.TypeA, "198.51.100.0/24")
	o := two.IsEdns0()
	o.Option = append(o.Option, &dns.EDNS0_SUBNET{Code: dns.EDNS0SUBNET, Family: 1, SourceNetmask: 24, Address: net.ParseIP("192.0.2.0").To4()})
	rec, rcode, err = serve(t, g, two, "192.0.2.53")
	if err != nil || rcode != dns.RcodeFormatError || rec.Msg != nil {
		t.Errorf("two ECS options: rcode %d err %v written %v; want FORMERR left to CoreDNS to write", rcode, err, rec.Msg)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queries) != 0 {
		t.Errorf("%d queries reached the engine", len(s.queries))
	}
}

func TestUDPPayloadSizeIsCappedAtBufsize(t *testing.T) {
	sock := enginetest.ShortSocket(t)
	enginetest.Start(t, sock, geoEngine(&seen{}))
	for _, tc := range []struct {
		props         string
		asked, capped uint16
	}{
		{"", 4096, 1232},
		{"", 1000, 1000},
		{"bufsize 1400", 4096, 1400},
	} {
		g := newTestGSLB(t, sock, tc.props)
		q := ecsQuery("www.example.org.", dns.TypeA, "")
		q.IsEdns0().SetUDPSize(tc.asked)
		rec, _, err := serve(t, g, q, "192.0.2.53")
		if err != nil {
			t.Fatal(err)
		}
		// CoreDNS's ScrubWriter truncates to, and advertises, the request's size: capped in place.
		if got := q.IsEdns0().UDPSize(); got != tc.capped {
			t.Errorf("%q, asked %d: request size %d, want %d", tc.props, tc.asked, got, tc.capped)
		}
		if got := rec.Msg.IsEdns0().UDPSize(); got != tc.capped {
			t.Errorf("%q, asked %d: reply advertises %d, want %d", tc.props, tc.asked, got, tc.capped)
		}
	}
}

// A stale answer was stored from another query, in that query's case: served to a query that
// spells the name differently, its owners carry the new question's case, as the engine's own
// answer would (the engine writes the question's name as asked; other owners as configured).
func TestStaleAnswerKeepsTheQuestionCase(t *testing.T) {
	sock := enginetest.ShortSocket(t)
	fake := enginetest.Start(t, sock, func(q *frame.Query, reply func(*frame.Answer)) {
		reply(&frame.Answer{Flags: frame.AnswerAA, ClientScope: 24, ECSScope: 24, Answer: []dns.RR{
			test.CNAME(q.Qname + " 300 IN CNAME edge.example.org."),
			test.A("edge.example.org. 30 IN A 198.51.100.10"),
		}})
	})
	g := newTestGSLB(t, sock, "on_error stale\nstale_ttl 7s")
	if _, rcode, err := serve(t, g, ecsQuery("WwW.Example.ORG.", dns.TypeA, "198.51.100.0/24"), "192.0.2.53"); rcode != 0 || err != nil {
		t.Fatal(rcode, err)
	}
	fake.Stop()
	deadline := time.Now().Add(2 * time.Second)
	for g.Ready() && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	for _, name := range []string{"www.EXAMPLE.org.", "www.example.org.", "WwW.Example.ORG."} {
		rec, rcode, err := serve(t, g, ecsQuery(name, dns.TypeA, "198.51.100.9/32"), "192.0.2.53")
		if rcode != dns.RcodeSuccess || err != nil || rec.Msg == nil || len(rec.Msg.Answer) != 2 {
			t.Fatalf("%s: rcode %d err %v reply %v", name, rcode, err, rec.Msg)
		}
		var got []string
		for _, rr := range rec.Msg.Answer {
			got = append(got, rr.String())
		}
		want := []string{name + "\t7\tIN\tCNAME\tedge.example.org.", "edge.example.org.\t7\tIN\tA\t198.51.100.10"}
		if got[0] != want[0] || got[1] != want[1] || rec.Msg.Question[0].Name != name {
			t.Errorf("%s: answer %q, want %q", name, got, want)
		}
	}
}
