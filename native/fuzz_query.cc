// libFuzzer target for the fast path's query parser (native/fast_query.h), built with ASan and
// UBSan by native/build-fuzzer.sh and run by src/doors/dns/fastPathFuzz.test.ts over the seed
// corpus in native/fuzz-corpus/. Besides memory safety it checks what the fast path relies on
// when it accepts a query: the key and the ECS address tile the datagram after the ID, the
// address is the option's declared length, and an IPv4-mapped client has its 4 bytes present.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "fast_query.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gslbd::FastQuery q{};
  if (!gslbd::parseFastQuery(data, size, q)) return 0;
  if (size < 17 || size > gslbd::kMaxFastQuery) abort();
  if (q.keyEnd < 17 || q.keyEnd + q.ecsAddrLen != size) abort();
  if (q.ecsAddrLen > 16) abort();
  if (q.ecsClient && q.ecsAddrLen == 0) abort();
  if (q.ecsMapped && q.ecsAddrLen < 13 && q.ecsClient) abort();
  if (q.ecsClient && q.ecsFamily == 1 && q.ecsAddrLen > 4) abort();
  return 0;
}
