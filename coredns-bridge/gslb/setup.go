package gslb

import (
	"strconv"
	"strings"
	"time"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
	"github.com/gslbd/gslbd/coredns-bridge/internal/engine"
)

func init() { plugin.Register(Name, setup) }

// Defaults of the Corefile properties (README.md).
const (
	defaultTimeout  = 250 * time.Millisecond
	defaultStaleTTL = 10 * time.Second
	defaultStaleMax = time.Hour
	defaultStaleMem = 64 << 20
	defaultBufsize  = 1232
	startupWait     = 100 * time.Millisecond
)

func setup(c *caddy.Controller) error {
	g, opts, err := parse(c)
	if err != nil {
		return plugin.Error(Name, err)
	}
	opts.OnUp = func(up bool) {
		v := 0.0
		if up {
			v = 1
		}
		engineUp.WithLabelValues(g.socket).Set(v)
	}
	g.client = engine.New(opts)
	engineUp.WithLabelValues(g.socket).Set(0)
	// Connect on start-up, and close on shutdown, so a reload's new instance takes over cleanly.
	// An absent engine never fails start-up: it is retried in the background.
	c.OnStartup(func() error {
		g.client.Start(startupWait)
		return nil
	})
	c.OnShutdown(func() error {
		g.client.Stop()
		return nil
	})
	dnsserver.GetConfig(c).AddPlugin(func(next plugin.Handler) plugin.Handler {
		g.Next = next
		return g
	})
	return nil
}

// parse reads one gslb block (README.md, Syntax).
func parse(c *caddy.Controller) (*GSLB, engine.Options, error) {
	g := &GSLB{
		timeout:  defaultTimeout,
		onError:  []string{policyStale, policyServfail},
		bufsize:  defaultBufsize,
		staleTTL: uint32(defaultStaleTTL / time.Second),
		now:      time.Now,
	}
	opts := engine.Options{Name: "coredns-gslb"}
	staleMax, staleMemory := defaultStaleMax, int64(defaultStaleMem)
	i := 0
	for c.Next() {
		if i > 0 {
			return nil, opts, plugin.ErrOnce
		}
		i++
		g.Zones = plugin.OriginsFromArgsOrServerBlock(c.RemainingArgs(), c.ServerBlockKeys)
		for c.NextBlock() {
			switch c.Val() {
			case "socket":
				if !c.NextArg() {
					return nil, opts, c.ArgErr()
				}
				g.socket = c.Val()
			case "timeout":
				d, err := durationArg(c, time.Millisecond, time.Minute)
				if err != nil {
					return nil, opts, err
				}
				g.timeout = d
			case "connections":
				n, err := intArg(c, 1, 64)
				if err != nil {
					return nil, opts, err
				}
				opts.Connections = n
			case "on_error":
				steps := c.RemainingArgs()
				if len(steps) == 0 {
					return nil, opts, c.ArgErr()
				}
				seen := map[string]bool{}
				for _, s := range steps {
					if s != policyStale && s != policyFallthrough && s != policyServfail {
						return nil, opts, c.Errf("on_error: unknown step '%s' (stale, fallthrough, servfail)", s)
					}
					if seen[s] {
						return nil, opts, c.Errf("on_error: '%s' listed twice", s)
					}
					seen[s] = true
				}
				g.onError = steps
			case "stale_ttl":
				d, err := durationArg(c, time.Second, time.Hour)
				if err != nil {
					return nil, opts, err
				}
				g.staleTTL = uint32(d / time.Second)
			case "stale_max":
				d, err := durationArg(c, time.Second, 7*24*time.Hour)
				if err != nil {
					return nil, opts, err
				}
				staleMax = d
			case "stale_memory":
				n, err := sizeArg(c, 64<<10, 64<<30)
				if err != nil {
					return nil, opts, err
				}
				staleMemory = n
			case "stale_size":
				return nil, opts, c.Err("stale_size was replaced by stale_memory SIZE (e.g. 64MiB): the stale cache is bounded by memory, not by names")
			case "bufsize":
				n, err := intArg(c, 512, 4096)
				if err != nil {
					return nil, opts, err
				}
				g.bufsize = n
			case "fallthrough":
				g.Fall.SetZonesFromArgs(c.RemainingArgs())
			default:
				return nil, opts, c.Errf("unknown property '%s'", c.Val())
			}
		}
	}
	if g.socket == "" {
		return nil, opts, c.Err("socket PATH is required")
	}
	opts.Path = g.socket
	g.stale = newStaleCache(staleMemory, staleMax)
	return g, opts, nil
}

func durationArg(c *caddy.Controller, lo, hi time.Duration) (time.Duration, error) {
	name := c.Val()
	if !c.NextArg() {
		return 0, c.ArgErr()
	}
	d, err := time.ParseDuration(c.Val())
	if err != nil || d < lo || d > hi {
		return 0, c.Errf("%s: '%s' is not a duration between %v and %v", name, c.Val(), lo, hi)
	}
	return d, nil
}

// sizeUnits are the suffixes sizeArg accepts (IEC binary units, as the memory a process holds is counted).
var sizeUnits = []struct {
	suffix string
	bytes  int64
}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}}

// sizeArg reads a memory size: a number of bytes, or a whole number with a suffix B, KiB, MiB or GiB.
func sizeArg(c *caddy.Controller, lo, hi int64) (int64, error) {
	name := c.Val()
	if !c.NextArg() {
		return 0, c.ArgErr()
	}
	text, unit := c.Val(), int64(1)
	for _, u := range sizeUnits {
		if strings.HasSuffix(text, u.suffix) {
			text, unit = strings.TrimSuffix(text, u.suffix), u.bytes
			break
		}
	}
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil || n < lo/unit || n > hi/unit || n*unit < lo {
		return 0, c.Errf("%s: '%s' is not a size between %d KiB and %d GiB (e.g. 64MiB)", name, c.Val(), lo>>10, hi>>30)
	}
	return n * unit, nil
}

func intArg(c *caddy.Controller, lo, hi int) (int, error) {
	name := c.Val()
	if !c.NextArg() {
		return 0, c.ArgErr()
	}
	n, err := strconv.Atoi(c.Val())
	if err != nil || n < lo || n > hi {
		return 0, c.Errf("%s: '%s' is not a number between %d and %d", name, c.Val(), lo, hi)
	}
	return n, nil
}
