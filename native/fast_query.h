// The fast path's query parser: a strict subset of DNS queries whose reply, when the engine says it
// is the same for a whole client block, can be replayed from a template with only the ID, the
// question name's letter case and the ECS address patched. Everything outside the subset is left to
// the JavaScript path, which answers it (and its errors) as it always did. Pure function, no
// allocation: fuzzed by native/fuzz_query.cc. The question name's letter case is not part of the
// key (RFC 4343, DNS 0x20 resolvers randomise it): the key folds A–Z and a replay writes the
// query's name over the template's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace gslbd {

/** Largest query the fast path accepts (bytes); longer ones go to JavaScript. */
constexpr size_t kMaxFastQuery = 512;

/** What the parser found in an accepted query. */
struct FastQuery {
  /**
   * The key bytes are the query's bytes [2, keyEnd): everything but the ID and the ECS address,
   * with the question name's A–Z folded to a–z when `foldCase` (see {@link questionKey}).
   */
  size_t keyEnd;
  /** The question name is the bytes [12, nameEnd) (labels and the root label, uncompressed). */
  size_t nameEnd;
  /**
   * True when every byte of the name's labels is printable ASCII other than `.` and `\` (0x21–0x7E
   * but 0x2E, 0x5C): the names whose presentation form the JavaScript path writes back unchanged,
   * and only those are keyed case-insensitively. A name with other bytes keeps its letter case in
   * the key: the engine strips a presentation form's trailing dot (an escaped `.` ending the last
   * label), so its reply may hold query-cased labels outside the question.
   */
  bool foldCase;
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

/**
 * Sets `key` to the template key of the query `p` that `parseFastQuery` accepted into `q`: the bytes
 * [2, keyEnd), with A–Z in the question name folded to a–z when `q.foldCase` (RFC 4343 §3: only
 * ASCII letters fold). Case variants of one query have one key. Allocates only when `key`'s
 * capacity is short of keyEnd − 2 bytes.
 */
void questionKey(const uint8_t* p, const FastQuery& q, std::string& key);

}  // namespace gslbd
