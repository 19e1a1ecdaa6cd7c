#!/usr/bin/env bash
# Builds the libFuzzer targets of the fast path with ASan and UBSan (clang from Debian: test/setup.sh
# installs it): the query parser (native/fuzz_query.cc) into .tmp/fuzz/fuzz_query, and the template
# cache and its block table against a reference model (native/fuzz_block_table.cc) into
# .tmp/fuzz/fuzz_block_table. By hand:
#   bash native/build-fuzzer.sh && .tmp/fuzz/fuzz_query -max_total_time=60 -max_len=512 native/fuzz-corpus
#   .tmp/fuzz/fuzz_block_table -max_total_time=60 -max_len=256 native/fuzz-corpus-blocks
# (give a scratch directory before the corpus to keep new inputs out of the repository).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .tmp/fuzz
build() {
  local out=.tmp/fuzz/$1
  shift
  clang++ -std=c++17 -O1 -g -fno-omit-frame-pointer \
    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
    -Wall -Wextra -Werror -Wno-missing-field-initializers \
    "$@" -o "$out.tmp"
  mv "$out.tmp" "$out"
  echo "fuzzer build: $out"
}
build fuzz_query native/fuzz_query.cc native/fast_query.cc
build fuzz_block_table native/fuzz_block_table.cc
