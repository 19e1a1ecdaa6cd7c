// libFuzzer target for the fast path's query parser (native/fast_query.h), built with ASan and
// UBSan by native/build-fuzzer.sh and run by src/doors/dns/fastPathFuzz.test.ts over the seed
// corpus in native/fuzz-corpus/. Besides memory safety it checks what the fast path relies on
// when it accepts a query: the key and the ECS address tile the datagram after the ID, the
// address is the option's declared length, an IPv4-mapped client has its 4 bytes present, the
// question name lies between the header and the key's end, and the query with its name's letter
// case flipped (a DNS 0x20 variant) parses alike with the same key when the name folds, and
// another key when it does not and held a letter.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "fast_query.h"

namespace {
bool isLetter(uint8_t c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gslbd::FastQuery q{};
  if (!gslbd::parseFastQuery(data, size, q)) return 0;
  if (size < 17 || size > gslbd::kMaxFastQuery) abort();
  if (q.keyEnd < 17 || q.keyEnd + q.ecsAddrLen != size) abort();
  if (q.nameEnd < 13 || q.nameEnd + 4 > q.keyEnd || data[q.nameEnd - 1] != 0) abort();
  if (q.ecsAddrLen > 16) abort();
  if (q.ecsClient && q.ecsAddrLen == 0) abort();
  if (q.ecsMapped && q.ecsAddrLen < 13 && q.ecsClient) abort();
  if (q.ecsClient && q.ecsFamily == 1 && q.ecsAddrLen > 4) abort();
  std::string key;
  gslbd::questionKey(data, q, key);
  if (key.size() != q.keyEnd - 2) abort();
  // Flip the case of every letter of the name's labels (skipping the length bytes).
  std::vector<uint8_t> variant(data, data + size);
  bool letters = false;
  for (size_t pos = 12; variant[pos] != 0; pos += 1 + variant[pos]) {
    for (size_t i = pos + 1; i <= pos + variant[pos]; i++) {
      if (!isLetter(variant[i])) continue;
      variant[i] ^= 0x20;
      letters = true;
    }
  }
  gslbd::FastQuery v{};
  if (!gslbd::parseFastQuery(variant.data(), size, v)) abort();
  if (v.keyEnd != q.keyEnd || v.nameEnd != q.nameEnd || v.foldCase != q.foldCase || v.ecsAddrLen != q.ecsAddrLen || v.ecsClient != q.ecsClient) abort();
  std::string variantKey;
  gslbd::questionKey(variant.data(), v, variantKey);
  if (q.foldCase ? variantKey != key : letters && variantKey == key) abort();
  for (size_t i = 10; i < q.nameEnd - 2 && q.foldCase; i++)
    if (key[i] >= 'A' && key[i] <= 'Z') abort();
  return 0;
}
