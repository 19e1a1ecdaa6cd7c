package gslb

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coredns/caddy"
)

func TestSetupParsesEveryProperty(t *testing.T) {
	c := caddy.NewTestController("dns", `gslb example.org example.net {
		socket /run/gslbd/engine.sock
		timeout 100ms
		connections 4
		on_error stale fallthrough
		stale_ttl 20s
		stale_max 30m
		stale_memory 8MiB
		bufsize 1400
		fallthrough example.org
	}`)
	g, opts, err := parse(c)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(g.Zones, []string{"example.org.", "example.net."}) || g.socket != "/run/gslbd/engine.sock" || opts.Path != g.socket {
		t.Errorf("zones %v socket %q", g.Zones, g.socket)
	}
	if g.timeout != 100*time.Millisecond || opts.Connections != 4 || g.staleTTL != 20 || g.stale.maxAge != 30*time.Minute {
		t.Errorf("timeout %v connections %d stale_ttl %d stale_max %v", g.timeout, opts.Connections, g.staleTTL, g.stale.maxAge)
	}
	if !slices.Equal(g.onError, []string{"stale", "fallthrough"}) || !g.Fall.Through("www.example.org.") || g.Fall.Through("www.example.net.") {
		t.Errorf("on_error %v fall %v", g.onError, g.Fall)
	}
	if g.stale.maxBytes != 8<<20 {
		t.Errorf("stale_memory %d", g.stale.maxBytes)
	}
	if g.bufsize != 1400 {
		t.Errorf("bufsize %d", g.bufsize)
	}
}

func TestSetupDefaults(t *testing.T) {
	c := caddy.NewTestController("dns", "gslb {\n socket e.sock\n}")
	c.ServerBlockKeys = []string{"example.org:53"}
	g, opts, err := parse(c)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(g.Zones, []string{"example.org."}) || g.timeout != defaultTimeout || !slices.Equal(g.onError, []string{"stale", "servfail"}) ||
		g.staleTTL != 10 || g.stale.maxAge != time.Hour || g.stale.maxBytes != 64<<20 || opts.Connections != 0 || g.Fall.Through("www.example.org.") || g.bufsize != 1232 {
		t.Errorf("defaults: %+v %+v", g, opts)
	}
}

func TestStaleMemorySizes(t *testing.T) {
	for input, want := range map[string]int64{"65536": 64 << 10, "64KiB": 64 << 10, "512MiB": 512 << 20, "2GiB": 2 << 30, "1048576B": 1 << 20} {
		g, _, err := parse(caddy.NewTestController("dns", "gslb {\n socket a\n stale_memory "+input+"\n}"))
		if err != nil || g.stale.maxBytes != want {
			t.Errorf("%s: %v %v, want %d", input, g, err, want)
		}
	}
}

func TestSetupRejectsBadInput(t *testing.T) {
	for _, tc := range []struct{ input, err string }{
		{"gslb example.org", "socket PATH is required"},
		{"gslb {\n socket\n}", "Wrong argument count"},
		{"gslb {\n socket a\n timeout 0s\n}", "not a duration"},
		{"gslb {\n socket a\n timeout soon\n}", "not a duration"},
		{"gslb {\n socket a\n connections 0\n}", "not a number between 1 and 64"},
		{"gslb {\n socket a\n on_error nxdomain\n}", "unknown step 'nxdomain'"},
		{"gslb {\n socket a\n on_error stale stale\n}", "listed twice"},
		{"gslb {\n socket a\n on_error\n}", "Wrong argument count"},
		{"gslb {\n socket a\n stale_memory -1\n}", "not a size"},
		{"gslb {\n socket a\n stale_memory 64\n}", "not a size between 64 KiB"},
		{"gslb {\n socket a\n stale_memory 65GiB\n}", "not a size"},
		{"gslb {\n socket a\n stale_memory 1.5MiB\n}", "not a size"},
		{"gslb {\n socket a\n stale_memory MiB\n}", "not a size"},
		{"gslb {\n socket a\n stale_size 100\n}", "replaced by stale_memory"},
		{"gslb {\n socket a\n bufsize 511\n}", "not a number between 512 and 4096"},
		{"gslb {\n socket a\n sokcet b\n}", "unknown property 'sokcet'"},
		{"gslb {\n socket a\n}\ngslb {\n socket b\n}", "this plugin"},
	} {
		_, _, err := parse(caddy.NewTestController("dns", tc.input))
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%q: error %v, want %q", tc.input, err, tc.err)
		}
	}
}

func TestSetupRegistersThePlugin(t *testing.T) {
	c := caddy.NewTestController("dns", "gslb example.org {\n socket /nonexistent/e.sock\n}")
	if err := setup(c); err != nil {
		t.Fatal(err)
	}
}
