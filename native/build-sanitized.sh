#!/usr/bin/env bash
# Builds the addon with AddressSanitizer + UndefinedBehaviorSanitizer into .tmp/asan/gslbd_geo.node
# for test/geo/sanitizer.test.ts (see native/README.md for running it by hand), and the ICMP socket
# into .tmp/asan/gslbd_icmp.node for src/agent/probes/icmpSanitizer.test.ts, and the fast path into
# .tmp/asan/gslbd_fastpath.node for src/doors/dns/fastPathSanitizer.test.ts. Same sources and
# defines as binding.gyp; any sanitizer finding aborts the process (-fno-sanitize-recover).
set -euo pipefail
cd "$(dirname "$0")/.."
out=.tmp/asan/gslbd_geo.node
mkdir -p "$(dirname "$out")"
nodedir=$(npm config get nodedir 2>/dev/null || true)
[ -n "$nodedir" ] && [ "$nodedir" != "undefined" ] || nodedir=/usr
g++ -std=c++17 -O1 -g -fno-omit-frame-pointer -fPIC -shared \
  -fsanitize=address,undefined -fno-sanitize-recover=all \
  -Wall -Wextra -Werror -Wno-missing-field-initializers \
  -DNAPI_VERSION=8 -DNAPI_DISABLE_CPP_EXCEPTIONS -DNODE_ADDON_API_DISABLE_DEPRECATED \
  -I"$nodedir/include/node" -I"$(node -p "require('node-addon-api').include_dir")" \
  native/addon.cc native/range_index.cc -o "$out.tmp"
mv "$out.tmp" "$out"
echo "sanitizer build: $out"
icmp=.tmp/asan/gslbd_icmp.node
g++ -std=c++17 -O1 -g -fno-omit-frame-pointer -fPIC -shared \
  -fsanitize=address,undefined -fno-sanitize-recover=all \
  -Wall -Wextra -Werror \
  -DNAPI_VERSION=8 -DNAPI_DISABLE_CPP_EXCEPTIONS -DNODE_ADDON_API_DISABLE_DEPRECATED \
  -I"$nodedir/include/node" -I"$(node -p "require('node-addon-api').include_dir")" \
  native/icmp.cc -o "$icmp.tmp"
mv "$icmp.tmp" "$icmp"
echo "sanitizer build: $icmp"
fastpath=.tmp/asan/gslbd_fastpath.node
g++ -std=c++17 -O1 -g -fno-omit-frame-pointer -fPIC -shared -pthread \
  -fsanitize=address,undefined -fno-sanitize-recover=all \
  -Wall -Wextra -Werror -Wno-missing-field-initializers \
  -DNAPI_VERSION=8 -DNAPI_DISABLE_CPP_EXCEPTIONS -DNODE_ADDON_API_DISABLE_DEPRECATED \
  -I"$nodedir/include/node" -I"$(node -p "require('node-addon-api').include_dir")" \
  native/fast_path.cc native/fast_query.cc native/rate_limit.cc -o "$fastpath.tmp"
mv "$fastpath.tmp" "$fastpath"
echo "sanitizer build: $fastpath"
