#!/usr/bin/env bash
# Installs and builds everything the tests need, once, before `npm test` (never inside test
# workers). Idempotent: a second run installs nothing. Run as root (apt) on Debian 12.
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian packages: real peers the tests talk to (dig, pdns_server with its remote backend) and
# the benchmark's load generator and native references (dnsperf, gdnsd, PowerDNS's bind and
# geoip backends with the legacy GeoIP country data); systemd-analyze, which verifies the example
# units; the compilers node-gyp builds the location addon with (gcc also serves cgo for
# `go test -race`), and libmaxminddb for the location benchmark's C reference harness; curl, the
# HTTP client of the redirect door's tests; redis-server and redis-sentinel, which the shared-state
# tests start on loopback ports (never as system daemons). DNSSEC: unbound, the validating resolver
# the tests put in front of every door; bind9-utils (dnssec-keygen, dnssec-dsfromkey,
# dnssec-settime, dnssec-signzone) and bind9-dnsutils (delv, a second validator). haproxy, the load
# balancer `gslbd agent` reads service metrics from over its stats socket; prometheus for
# `promtool check metrics` on a live engine's /metrics (its server is not used).
# openssl makes the certificate authority and server certificate of the Redis TLS test.
# chromium: the operator console in a real headless browser (test/e2e/console.test.ts, via puppeteer-core).
# clang: the libFuzzer build of the fast path's query parser (native/build-fuzzer.sh).
# libclang-rt-dev: clang's compiler-rt (libFuzzer and the ASan runtime) for that build; clang only recommends it.
# redis-tools: redis-cli, which creates the shared-state tests' Redis Cluster (--cluster create).
# tcpdump and wireshark-common (dumpcap): the pcap and pcapng captures `gslbd simulate` replays (test/e2e/whatIfPcap.test.ts).
# fstrm-bin (fstrm_capture): writes the dnstap file unbound sends (test/e2e/whatIfDnstap.test.ts).
APT_PACKAGES=(openssl dnsutils dnsperf gdnsd systemd pdns-server pdns-backend-remote pdns-backend-bind pdns-backend-geoip geoip-database gcc g++ clang libclang-rt-dev make python3 libmaxminddb-dev curl redis-server redis-sentinel redis-tools unbound bind9-utils bind9-dnsutils haproxy prometheus chromium tcpdump wireshark-common fstrm-bin nftables)
DAEMONS=(gdnsd pdns_server redis-server redis-sentinel unbound haproxy prometheus)
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # Debian starts and enables services on install; nothing here may run in the background. A
  # policy-rc.d that denies every start keeps the maintainer scripts from starting them, and
  # daemons that started anyway (only those: not ones running before) are stopped afterwards.
  daemon_pids() { for d in "${DAEMONS[@]}"; do pgrep -x "$d" || true; done; }
  before=$(daemon_pids)
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
    chmod 755 /usr/sbin/policy-rc.d
    trap 'rm -f /usr/sbin/policy-rc.d' EXIT
  fi
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  for svc in gdnsd pdns redis-server redis-sentinel unbound haproxy prometheus; do
    if command -v systemctl >/dev/null 2>&1; then systemctl disable --now "$svc" >/dev/null 2>&1 || true; fi
  done
  for pid in $(daemon_pids); do
    grep -qx "$pid" <<<"$before" || kill "$pid" 2>/dev/null || true
  done
fi

# Node dependencies exactly as locked; compiles TypeScript.
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
# The native addons of binding.gyp (location lookups, sd_notify, ICMP sockets, the DNS fast path) when one
# is missing: a machine set up before a target was added has node_modules but not the new addon.
if [ ! -f build/Release/gslbd_geo.node ] || [ ! -f build/Release/gslbd_notify.node ] || [ ! -f build/Release/gslbd_icmp.node ] || [ ! -f build/Release/gslbd_fastpath.node ]; then
  npm run build:native --silent
fi
npm run build --silent

# CoreDNS with the gslb plugin (coredns-bridge/), built once from the Go module proxy with the
# local Go toolchain (never CoreDNS's Makefile, which forces a toolchain download). Modules stay
# in the Go module cache and compiled packages in the Go build cache, so later runs (and the
# `go test` that npm test runs) reuse them. Rebuilt when a Go source or go.sum is newer.
command -v go >/dev/null 2>&1 || { echo "setup: go (>= 1.25) is missing: CoreDNS v1.14 needs it" >&2; exit 1; }
COREDNS_BIN=coredns-bridge/bin/coredns-gslb
if [ ! -x "$COREDNS_BIN" ] || [ -n "$(find coredns-bridge -newer "$COREDNS_BIN" \( -name '*.go' -o -name go.sum -o -name go.mod \) -print -quit)" ]; then
  echo "setup: building $COREDNS_BIN"
  (cd coredns-bridge && GOTOOLCHAIN=local CGO_ENABLED=0 go build -trimpath -tags grpcnotrace -ldflags='-s -w' -o bin/coredns-gslb ./cmd/coredns-gslb)
fi
for plugin in gslb dnssec; do
  "$COREDNS_BIN" -plugins | grep -x "$plugin" >/dev/null || { echo "setup: $COREDNS_BIN lacks the $plugin plugin" >&2; exit 1; }
done

# The Go checks of `npm test` (test/go/check.sh): staticcheck at a pinned version, built from the
# Go module proxy into a repository-local bin (git-ignored .tmp/), rebuilt only when missing or of
# another version; and the race-detector build of the engine client's and the plugin's tests compiled once here
# (cgo, gcc), so npm test only links and runs it.
STATICCHECK_VERSION=0.8.2
GO_BIN=.tmp/go/bin
if ! "$GO_BIN/staticcheck" -version 2>/dev/null | grep -qF "($STATICCHECK_VERSION)"; then
  echo "setup: installing staticcheck v$STATICCHECK_VERSION into $GO_BIN"
  mkdir -p "$GO_BIN"
  GOBIN="$PWD/$GO_BIN" GOTOOLCHAIN=local go install "honnef.co/go/tools/cmd/staticcheck@v$STATICCHECK_VERSION"
fi
command -v gcc >/dev/null 2>&1 || { echo "setup: gcc is missing: go test -race needs cgo" >&2; exit 1; }
(cd coredns-bridge && GOTOOLCHAIN=local go test -race -count=1 -run '^$' ./internal/engine/... ./gslb/... >/dev/null)

# The native location addon: `npm ci` builds it (binding.gyp); rebuild when its sources changed.
addon=build/Release/gslbd_geo.node
if [ ! -f "$addon" ] || [ -n "$(find native binding.gyp -newer "$addon" -print -quit)" ]; then
  npm run build:native --silent
fi
[ -f "$addon" ] || { echo "setup: the native addon $addon did not build" >&2; exit 1; }
# Its ASan + UBSan build, which test/geo/sanitizer.test.ts runs the differential check against.
if [ ! -f .tmp/asan/gslbd_geo.node ] || [ ! -f .tmp/asan/gslbd_icmp.node ] || [ ! -f .tmp/asan/gslbd_fastpath.node ] || [ -n "$(find native -newer .tmp/asan/gslbd_geo.node -print -quit)" ]; then
  bash native/build-sanitized.sh
fi
# The libFuzzer targets of the fast path's query parser and template cache (clang, ASan + UBSan), run by src/doors/dns/fastPathFuzz.test.ts.
if [ ! -f .tmp/fuzz/fuzz_query ] || [ ! -f .tmp/fuzz/fuzz_block_table ] || [ -n "$(find native -newer .tmp/fuzz/fuzz_query -print -quit)" ]; then
  bash native/build-fuzzer.sh
fi
# The TUN delay line of the agent's probe tests (test/support/tunDelayLine.c): two network namespaces
# joined through a process that holds each packet a set time and drops a seeded share (no tc netem
# or NFQUEUE on these machines).
TUN_DELAY_LINE=.tmp/tools/tun-delay-line
if [ ! -x "$TUN_DELAY_LINE" ] || [ test/support/tunDelayLine.c -nt "$TUN_DELAY_LINE" ]; then
  mkdir -p .tmp/tools
  gcc -std=c11 -O2 -Wall -Wextra -Wpedantic -Werror -o "$TUN_DELAY_LINE" test/support/tunDelayLine.c
fi
# GeoLite2 City and Country from the npm packages, compiled for the differential tests, the
# ECS-scope acceptance test's country-to-DC map and the benchmarks (build outputs: never committed).
for data in city country; do
  image=.tmp/geo/geolite2-$data.gdb
  if [ ! -f "$image" ] || [ package-lock.json -nt "$image" ] || [ -n "$(find src/capabilities/geo src/core -name '*.ts' -newer "$image" -print -quit)" ]; then
    mkdir -p .tmp/geo
    node dist/src/cli/main.js geo build -o "$image" \
      "mmdb:@ip-location-db/geolite2-$data-mmdb/geolite2-$data-ipv4.mmdb" \
      "mmdb:@ip-location-db/geolite2-$data-mmdb/geolite2-$data-ipv6.mmdb"
  fi
done

for tool in dig dnsperf gdnsd pdns_server taskset unbound delv dnssec-keygen dnssec-dsfromkey; do
  command -v "$tool" >/dev/null 2>&1 || { echo "setup: $tool is missing after installation" >&2; exit 1; }
done
echo "setup: ready"
