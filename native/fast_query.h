// The fast path's query parser: a strict subset of DNS queries whose reply, when the engine says
// it is the same for a whole client block, can be replayed from a template with only the ID and
// the ECS address patched. Everything outside the subset is left to the JavaScript path, which
// answers it (and its errors) as it always did. Pure function, no allocation: fuzzed by
// native/fuzz_query.cc.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gslbd {

/** Largest query the fast path accepts (bytes); longer ones go to JavaScript. */
constexpr size_t kMaxFastQuery = 512;

/** What the parser found in an accepted query. */
struct FastQuery {
  /** The key bytes are the query's bytes [2, keyEnd): everything but the ID and the ECS address. */
  size_t keyEnd;
  /** The ECS address bytes are [keyEnd, keyEnd + ecsAddrLen) — the last bytes of the query. */
  size_t ecsAddrLen;
  /** True when an ECS option with a source prefix > 0 names the client (RFC 7871 §7.1.1). */
  bool ecsClient;
  /** ECS family (1 IPv4, 2 IPv6) when ecsClient. */
  uint8_t ecsFamily;
  /** An IPv6 ECS address in ::ffff:0:0/96: the client is the IPv4 address in its last 4 bytes (src/core/net/ipAddress.ts). */
  bool ecsMapped;
};

/**
 * Accepts `p[0, n)` when it is exactly: a header with QR, opcode, TC and RCODE clear, QDCOUNT 1,
 * ANCOUNT and NSCOUNT 0, ARCOUNT 0 or 1; one question with an uncompressed name (labels 1–63
 * bytes, at most 255 bytes in all) and class IN; when ARCOUNT is 1, an OPT record (RFC 6891) owned
 * by the root with extended RCODE, version and flags all zero (so DO clear) whose options are at
 * most one well-formed ECS option (RFC 7871 §6: family 1 or 2, source prefix within the family,
 * scope 0, address exactly ceil(source / 8) bytes with no bits set beyond the prefix); and
 * nothing after that. Returns false for anything else.
 */
bool parseFastQuery(const uint8_t* p, size_t n, FastQuery& out);

}  // namespace gslbd
