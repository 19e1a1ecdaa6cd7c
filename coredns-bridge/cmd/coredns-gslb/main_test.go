package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/coredns/caddy"
)

func TestOnlyTheChosenPluginsAreRegisteredInChainOrder(t *testing.T) {
	want := []string{"reload", "bind", "ready", "health", "prometheus", "errors", "log", "dnssec", "gslb", "file"}
	if !slices.Equal(directives, want) {
		t.Fatalf("directives %v, want %v", directives, want)
	}
	var registered []string
	for _, name := range caddy.ListPlugins()["others"] {
		if plugin, ok := strings.CutPrefix(name, "dns."); ok {
			registered = append(registered, plugin)
		}
	}
	for _, name := range want {
		if !slices.Contains(registered, name) {
			t.Errorf("plugin %s is not registered (have %v)", name, registered)
		}
	}
	// file imports metadata and transfer, which register themselves; without a directive entry
	// a Corefile cannot use them (caddy rejects unknown directives).
	for _, name := range registered {
		if !slices.Contains(want, name) && name != "metadata" && name != "transfer" {
			t.Errorf("unexpected plugin %s compiled in", name)
		}
	}
}
