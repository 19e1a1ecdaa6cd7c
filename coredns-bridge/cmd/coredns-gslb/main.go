// Command coredns-gslb is CoreDNS with only the plugins a gslbd deployment needs: the gslb plugin
// (answers from the gslbd engine), dnssec (online signing of gslb's answers, NSEC black lies),
// file (static zones, e.g. a fail-safe zone behind gslb), and the operational ones: reload, bind,
// ready, health, prometheus, errors, log.
//
// It imports coremain and the chosen plugins instead of core/plugin, so no other plugin (and
// none of their dependencies) is compiled in. Build with GOTOOLCHAIN=local go build (README.md).
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/dnssec"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/file"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/metrics"
	_ "github.com/coredns/coredns/plugin/ready"
	_ "github.com/coredns/coredns/plugin/reload"
	_ "github.com/gslbd/gslbd/coredns-bridge/gslb"
)

// directives is the plugin chain order, as in upstream's plugin.cfg: dnssec wraps the plugins
// after it, so it signs what gslb (and file) write; gslb runs before file so that `fallthrough`
// (and on_error fallthrough) reach a static zone served by file. No cache: CoreDNS's cache
// ignores ECS and would hand one client block's answer to every client.
var directives = []string{
	"reload",
	"bind",
	"ready",
	"health",
	"prometheus",
	"errors",
	"log",
	"dnssec",
	"gslb",
	"file",
}

func init() { dnsserver.Directives = directives }

func main() { coremain.Run() }
