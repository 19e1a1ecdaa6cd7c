#!/usr/bin/env bash
# The Go side of the CoreDNS bridge (coredns-bridge/), run by `npm test` (`npm run check:go`) and
# nowhere else: gofmt, go vet, staticcheck (the version test/setup.sh installs into .tmp/go/bin),
# the engine client's and the plugin's tests under the race detector (the packages with goroutines
# sharing state: the reader, the writers, the pending-request table, reconnects; the stale cache
# every query's handler reads and writes), then every other package's
# tests (frame codec against the shared golden vectors, the plugin with CoreDNS's test helpers).
# Modules come from the Go module cache that test/setup.sh filled; nothing is downloaded here.
set -euo pipefail
cd "$(dirname "$0")/../../coredns-bridge"
export GOTOOLCHAIN=local GOFLAGS="${GOFLAGS:+$GOFLAGS }-mod=readonly"
STATICCHECK=../.tmp/go/bin/staticcheck
[ -x "$STATICCHECK" ] || { echo "check:go: $STATICCHECK is missing: run bash test/setup.sh" >&2; exit 1; }

step() { echo "check:go: $*"; }

step "gofmt -l"
unformatted=$(gofmt -l .)
if [ -n "$unformatted" ]; then
  echo "check:go: gofmt would reformat (run gofmt -w coredns-bridge):" >&2
  echo "$unformatted" >&2
  exit 1
fi
step "go vet ./..."
go vet ./...
step "staticcheck ./... ($("$STATICCHECK" -version))"
"$STATICCHECK" ./...
step "go test -race ./internal/engine/... ./gslb/..."
go test -race -count=1 ./internal/engine/... ./gslb/...
step "go test (the other packages)"
# shellcheck disable=SC2046 # one argument per package
go test -count=1 $(go list ./... | grep -v -e '/internal/engine$' -e '/gslb$')
