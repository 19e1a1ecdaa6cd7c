#!/usr/bin/env bash
# Builds the libFuzzer target of the fast path's query parser (native/fuzz_query.cc) with ASan and
# UBSan into .tmp/fuzz/fuzz_query (clang from Debian: test/setup.sh installs it). By hand:
#   bash native/build-fuzzer.sh && .tmp/fuzz/fuzz_query -max_total_time=60 -max_len=512 native/fuzz-corpus
# (give a scratch directory before native/fuzz-corpus to keep new inputs out of the repository).
set -euo pipefail
cd "$(dirname "$0")/.."
out=.tmp/fuzz/fuzz_query
mkdir -p "$(dirname "$out")"
clang++ -std=c++17 -O1 -g -fno-omit-frame-pointer \
  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
  -Wall -Wextra -Werror -Wno-missing-field-initializers \
  native/fuzz_query.cc native/fast_query.cc -o "$out.tmp"
mv "$out.tmp" "$out"
echo "fuzzer build: $out"
