// Longest-prefix location lookup over merged address ranges (a DXR-style range index).
//
// The address space of one family is tiled by ranges [start[i], start[i+1] - 1], each carrying a
// location id; neighbouring ranges with equal ids were merged when the table was compiled. A
// direct index over the top `bits` address bits gives, for each block, the first and last range
// that can contain an address of the block; a branch-free binary search inside that window finds
// the range. The prefix length returned is that of the largest aligned block around the address
// that stays inside the range, which is the ECS scope of a location-based answer (RFC 7871 §7.2.1).
//
// All arrays are borrowed views into a compiled location file (src/geo/compiledImage.ts describes
// the layout); nothing here allocates. See native/README.md for the structure and measurements.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gslbd {

// Packed result: location id * 256 + prefix length (ids are < 2^24, so the value fits 32 bits).
inline uint32_t Pack(uint32_t id, uint32_t prefix) { return id * 256u + prefix; }

struct RangeIndex4 {
  const uint32_t* index = nullptr;   // 2^bits + 1 entries: index[k] = range containing k << shift
  const uint32_t* starts = nullptr;  // n range starts, ascending, starts[0] == 0
  const uint32_t* ids = nullptr;     // n location ids
  uint32_t n = 0;
  uint32_t shift = 32;  // 32 - bits

  // Index of the range containing `addr`.
  uint32_t Find(uint32_t addr) const {
    const uint32_t top = addr >> shift;
    uint32_t base = index[top];
    uint32_t len = index[top + 1] - base + 1;
    while (len > 1) {
      const uint32_t half = len >> 1;
      // Both possible next probes are fetched now: the search is branch-free, so nothing else
      // would start the next cache miss before this comparison resolves.
      const uint32_t next = (len - half) >> 1;
      __builtin_prefetch(starts + base + next);
      __builtin_prefetch(starts + base + half + next);
      base = starts[base + half] <= addr ? base + half : base;
      len -= half;
    }
    return base;
  }

  uint32_t Prefix(uint32_t addr, uint32_t i) const {
    const uint32_t start = starts[i];
    const uint32_t from_low = start == 0 ? 0 : 1 + __builtin_clz(addr ^ (start - 1));
    const uint32_t from_high = i + 1 == n ? 0 : 1 + __builtin_clz(addr ^ starts[i + 1]);
    return from_low > from_high ? from_low : from_high;
  }

  uint32_t Lookup(uint32_t addr) const {
    const uint32_t i = Find(addr);
    return Pack(ids[i], Prefix(addr, i));
  }

  // Looks up `count` addresses. Lanes of kBatchLanes addresses advance their binary searches in
  // lockstep so the memory accesses of independent lookups overlap (the table does not fit in
  // cache; each step is a likely miss).
  void LookupBatch(const uint32_t* addrs, size_t count, uint32_t* out_ids, uint8_t* out_prefixes) const;
};

using u128 = unsigned __int128;

struct RangeIndex6 {
  const uint32_t* index = nullptr;   // 2^bits + 1 entries over the top bits of the first word
  const uint32_t* starts = nullptr;  // 4 words per range, most significant first
  const uint32_t* ids = nullptr;
  uint32_t n = 0;
  uint32_t shift = 32;

  static u128 Key(const uint32_t* w) {
    return (static_cast<u128>(w[0]) << 96) | (static_cast<u128>(w[1]) << 64) |
           (static_cast<u128>(w[2]) << 32) | static_cast<u128>(w[3]);
  }

  static uint32_t Clz128(u128 x) {
    const uint64_t hi = static_cast<uint64_t>(x >> 64);
    return hi != 0 ? __builtin_clzll(hi) : 64 + __builtin_clzll(static_cast<uint64_t>(x));
  }

  uint32_t Find(u128 addr, uint32_t top_word) const {
    const uint32_t top = top_word >> shift;
    uint32_t base = index[top];
    uint32_t len = index[top + 1] - base + 1;
    while (len > 1) {
      const uint32_t half = len >> 1;
      const uint32_t next = (len - half) >> 1;
      __builtin_prefetch(starts + 4 * static_cast<size_t>(base + next));
      __builtin_prefetch(starts + 4 * static_cast<size_t>(base + half + next));
      base = Key(starts + 4 * static_cast<size_t>(base + half)) <= addr ? base + half : base;
      len -= half;
    }
    return base;
  }

  uint32_t Prefix(u128 addr, uint32_t i) const {
    const u128 start = Key(starts + 4 * static_cast<size_t>(i));
    const uint32_t from_low = start == 0 ? 0 : 1 + Clz128(addr ^ (start - 1));
    const uint32_t from_high = i + 1 == n ? 0 : 1 + Clz128(addr ^ Key(starts + 4 * static_cast<size_t>(i + 1)));
    return from_low > from_high ? from_low : from_high;
  }

  // `w` is the address as four 32-bit words, most significant first.
  uint32_t Lookup(const uint32_t* w) const {
    const u128 addr = Key(w);
    const uint32_t i = Find(addr, w[0]);
    return Pack(ids[i], Prefix(addr, i));
  }

  void LookupBatch(const uint32_t* words, size_t count, uint32_t* out_ids, uint8_t* out_prefixes) const;
};

// Checks that a direct index is usable for memory-safe lookups: 2^bits + 1 entries, starting at 0,
// ending at n - 1, never decreasing. Returns an error message, or nullptr when valid.
const char* ValidateIndex(const uint32_t* index, uint32_t bits, uint32_t n);

// Checks a tiling: the first range starts at address 0, starts strictly ascend, and every id is
// below `locations`. `words` is 1 (IPv4) or 4 (IPv6). Returns an error message, or nullptr.
const char* ValidateTiling(const uint32_t* starts, const uint32_t* ids, uint32_t n, uint32_t words, uint32_t locations);

}  // namespace gslbd
