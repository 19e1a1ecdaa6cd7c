#!/usr/bin/env bash
# Installs and builds everything the tests need, once, before `npm test` (never inside test
# workers). Idempotent: a second run installs nothing. Run as root (apt) on Debian 12.
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian packages: real peers the tests talk to (dig) and the benchmark's load generator and
# native reference (dnsperf, gdnsd).
APT_PACKAGES=(dnsutils dnsperf gdnsd)
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # Debian enables services on install; nothing here may run in the background.
  for svc in gdnsd pdns; do
    if command -v systemctl >/dev/null 2>&1; then systemctl disable --now "$svc" >/dev/null 2>&1 || true; fi
    pkill -x "$svc" >/dev/null 2>&1 || true
  done
fi

# Node dependencies exactly as locked; compiles TypeScript.
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
npm run build --silent

for tool in dig dnsperf gdnsd; do
  command -v "$tool" >/dev/null 2>&1 || { echo "setup: $tool is missing after installation" >&2; exit 1; }
done
echo "setup: ready"
