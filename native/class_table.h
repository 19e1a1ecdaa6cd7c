// The fast path's copy of one record's location class tables (src/pipeline/selection/answerClasses.ts,
// `LocationClasses`): per family, sorted range starts tiling the address space and the class id of
// each range, as `RangeTable4` / `RangeTable6` (src/core/lpm/rangeTable.ts) hold them, with the same
// direct index over the top 16 address bits. A lookup gives the client's class and the prefix length
// of the largest aligned block around it with that class — the same numbers as the TypeScript
// lookups, so a class template can be replayed to any client of the class with that client's ECS
// scope. The search and the prefix are the location index's own (native/range_index.h, views over
// this table's arrays). Immutable once built: the server swaps whole tables under its lock.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "range_index.h"

namespace gslbd {

/** 16 big-endian address bytes as one 128-bit value. */
inline u128 address128(const uint8_t a[16]) {
  u128 v = 0;
  for (int i = 0; i < 16; i++) v = (v << 8) | a[i];
  return v;
}

/** The first 4 address bytes as a 32-bit value. */
inline uint32_t address32(const uint8_t a[4]) {
  return (static_cast<uint32_t>(a[0]) << 24) | (static_cast<uint32_t>(a[1]) << 16) | (static_cast<uint32_t>(a[2]) << 8) | a[3];
}

/**
 * `ipv4BlocksScope` (src/core/net/ipv4InIpv6.ts) of an IPv6 client: the shortest ECS scope that
 * neither crosses into nor leaves the IPv6 blocks carrying IPv4 addresses (::ffff:0:0/96, ::/96,
 * ::ffff:0:0:0/96, 64:ff9b::/96, 2001::/32, 2002::/16). Always ≥ 1.
 */
inline unsigned ipv4BlocksFloor(u128 a) {
  struct Block {
    uint32_t w0, w1, w2;
    unsigned prefix;
  };
  static constexpr Block kBlocks[] = {
      {0, 0, 0xffff, 96}, {0, 0, 0, 96}, {0, 0, 0xffff0000u, 96}, {0x0064ff9bu, 0, 0, 96}, {0x20010000u, 0, 0, 32}, {0x20020000u, 0, 0, 16},
  };
  const u128 top96 = a >> 32;
  unsigned floor = 0;
  for (const Block& b : kBlocks) {
    const u128 net = (static_cast<u128>(b.w0) << 64) | (static_cast<u128>(b.w1) << 32) | b.w2;
    const u128 x = top96 ^ net;
    const unsigned shared = x == 0 ? 96 : RangeIndex6::Clz128(x) - 32;
    const unsigned scope = shared >= b.prefix ? b.prefix : shared + 1;
    if (scope > floor) floor = scope;
  }
  return floor;
}

class ClassTable {
 public:
  /**
   * A table from `RangeTable4`'s and `RangeTable6`'s arrays (`v6starts`: 4 words per start, most
   * significant first). Returns false, leaving `error` set, unless each family has at least one
   * range, its first start is 0, starts strictly ascend and there is one id per start.
   */
  bool build(const uint32_t* v4starts, size_t n4, const uint32_t* v4ids, size_t ids4, const uint32_t* v6words, size_t words6, const uint32_t* v6ids,
             size_t ids6, const char*& error) {
    if (n4 == 0 || n4 != ids4 || v4starts[0] != 0) return fail(error, "IPv4: one id per start and a first start of 0 expected");
    if (words6 % 4 != 0 || words6 / 4 != ids6 || ids6 == 0) return fail(error, "IPv6: four words per start and one id per start expected");
    for (size_t i = 1; i < n4; i++)
      if (v4starts[i] <= v4starts[i - 1]) return fail(error, "IPv4 starts must ascend strictly");
    starts4_.assign(v4starts, v4starts + n4);
    ids4_.assign(v4ids, v4ids + n4);
    for (size_t i = 1; i < ids6; i++)
      if (RangeIndex6::Key(v6words + 4 * i) <= RangeIndex6::Key(v6words + 4 * (i - 1))) return fail(error, "IPv6 starts must ascend strictly");
    if (RangeIndex6::Key(v6words) != 0) return fail(error, "IPv6: a first start of :: expected");
    words6_.assign(v6words, v6words + words6);
    ids6_.assign(v6ids, v6ids + ids6);
    // index[k]: the last range starting at or before /16 k (k = 65536: the last range), as `directIndex` in rangeTable.ts.
    index4_.resize(65537);
    index6_.resize(65537);
    size_t j = 0;
    for (uint64_t k = 0; k <= 65536; k++) {
      while (j + 1 < n4 && static_cast<uint64_t>(starts4_[j + 1]) <= (k << 16)) j++;
      index4_[k] = static_cast<uint32_t>(j);
    }
    j = 0;
    for (uint64_t k = 0; k <= 65536; k++) {
      while (j + 1 < ids6 && (k == 65536 || (start6(j + 1) >> 112) < k || ((start6(j + 1) >> 112) == k && (start6(j + 1) << 16) == 0))) j++;
      index6_[k] = static_cast<uint32_t>(j);
    }
    range4_ = {index4_.data(), starts4_.data(), ids4_.data(), static_cast<uint32_t>(n4), 16};
    range6_ = {index6_.data(), words6_.data(), ids6_.data(), static_cast<uint32_t>(ids6), 16};
    return true;
  }

  /** The class of IPv4 address `a`; `prefix` the largest aligned block around it inside its range (`RangeTable4.lookup`). */
  uint32_t lookup4(uint32_t a, unsigned& prefix) const {
    const uint32_t i = range4_.Find(a);
    prefix = range4_.Prefix(a, i);
    return ids4_[i];
  }

  /** The class of IPv6 address `a` and its block's prefix length (`RangeTable6.lookup`). */
  uint32_t lookup6(u128 a, unsigned& prefix) const {
    const uint32_t i = range6_.Find(a, static_cast<uint32_t>(a >> 96));
    prefix = range6_.Prefix(a, i);
    return ids6_[i];
  }

  /**
   * The client's class (`family` 0: IPv4 in `addr`'s first 4 bytes, 1: IPv6) and `scope`, the ECS
   * scope of a decision whose only client input is the class: max(`ipv4BlocksScope`, block prefix)
   * (`DecisionCache.scopeOf` with `LOCATION_READ`).
   */
  uint32_t classOf(uint8_t family, const uint8_t addr[16], unsigned& scope) const {
    unsigned prefix;
    if (family == 0) {
      const uint32_t id = lookup4(address32(addr), prefix);
      scope = prefix;
      return id;
    }
    const u128 a = address128(addr);
    const uint32_t id = lookup6(a, prefix);
    const unsigned floor = ipv4BlocksFloor(a);
    scope = prefix > floor ? prefix : floor;
    return id;
  }

  size_t bytes() const { return (starts4_.size() + ids4_.size() + words6_.size() + ids6_.size() + index4_.size() + index6_.size()) * 4; }

 private:
  static bool fail(const char*& error, const char* message) {
    error = message;
    return false;
  }

  /** The `i`-th IPv6 start as one value. */
  u128 start6(size_t i) const { return RangeIndex6::Key(words6_.data() + 4 * i); }

  std::vector<uint32_t> starts4_, ids4_, index4_;
  std::vector<uint32_t> words6_, ids6_, index6_;
  RangeIndex4 range4_;
  RangeIndex6 range6_;
};

}  // namespace gslbd
