// The fast path's block table: (question, client family, ECS scope, client address masked to the
// scope) → template index, as one flat open-addressing table (linear probing, power-of-two
// capacity, at most half full). A lookup probes it once per scope the question has templates at,
// longest first, and nearly every probe is a miss; here a probe is a multiply-and-shift hash and one
// 32-byte slot read — no division, no chain of heap nodes, no byte-wise hash (what
// `std::unordered_map` with an FNV-1a key cost: a quarter of the fast path's CPU per query).
// Not thread-safe: the caller holds its lock.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

namespace gslbd {

/** A client address masked to a scope: the 16 address bytes (IPv4: the first 4) as two big-endian words. */
struct MaskedBlock {
  uint64_t hi;
  uint64_t lo;
};

/** `addr` (16 bytes, an IPv4 address in the first 4, the rest zero) masked to its first `scope` bits (0–128). */
inline MaskedBlock maskBlock(const uint8_t addr[16], unsigned scope) {
  uint64_t hi = 0, lo = 0;
  for (int i = 0; i < 8; i++) hi = (hi << 8) | addr[i];
  for (int i = 8; i < 16; i++) lo = (lo << 8) | addr[i];
  if (scope == 0) return {0, 0};
  if (scope <= 64) return {hi & (~0ull << (64 - scope)), 0};
  if (scope >= 128) return {hi, lo};
  return {hi, lo & (~0ull << (128 - scope))};
}

/** One slot: empty when `question` is 0. */
struct BlockSlot {
  uint64_t hi;
  uint64_t lo;
  uint32_t question;
  uint8_t family;
  uint8_t scope;
  uint32_t value;
};

class BlockTable {
 public:
  BlockTable() { reset(kInitialCapacity); }

  /** The slot where the key's probe starts. */
  size_t home(uint32_t question, uint8_t family, uint8_t scope, const MaskedBlock& b) const { return hash(question, family, scope, b) & mask_; }

  /** Starts loading the cache line of slot `i` (a lookup probes several scopes: their misses then overlap instead of queueing). */
  void prefetch(size_t i) const { __builtin_prefetch(&slots_[i]); }

  /** The value stored for the key, or nullptr. `question` ≠ 0. */
  const uint32_t* find(uint32_t question, uint8_t family, uint8_t scope, const MaskedBlock& b) const {
    return findFrom(home(question, family, scope, b), question, family, scope, b);
  }

  /** `find` from the key's {@link home} slot. */
  const uint32_t* findFrom(size_t i, uint32_t question, uint8_t family, uint8_t scope, const MaskedBlock& b) const {
    for (;; i = (i + 1) & mask_) {
      const BlockSlot& s = slots_[i];
      if (s.question == 0) return nullptr;
      if (s.hi == b.hi && s.lo == b.lo && s.question == question && s.family == family && s.scope == scope) return &s.value;
    }
  }

  /**
   * The slot of the key, added (with value `fresh`) when absent: `added` says which. The caller
   * grows the table first ({@link full}); references stay valid until the next insert.
   */
  uint32_t& insert(uint32_t question, uint8_t family, uint8_t scope, const MaskedBlock& b, uint32_t fresh, bool& added) {
    for (size_t i = hash(question, family, scope, b) & mask_;; i = (i + 1) & mask_) {
      BlockSlot& s = slots_[i];
      if (s.question == 0) {
        s = {b.hi, b.lo, question, family, scope, fresh};
        used_++;
        added = true;
        return s.value;
      }
      if (s.hi == b.hi && s.lo == b.lo && s.question == question && s.family == family && s.scope == scope) {
        added = false;
        return s.value;
      }
    }
  }

  /** True when one more insert would make the table more than half full. */
  bool full() const { return (used_ + 1) * 2 > slots_.size(); }

  /** Slots in use. */
  size_t size() const { return used_; }

  const std::vector<BlockSlot>& slots() const { return slots_; }

  /** Empties the table, with room for `entries` inserts before it is full again. */
  void reset(size_t entries) {
    size_t capacity = kInitialCapacity;
    while (capacity < entries * 2) capacity *= 2;
    slots_.assign(capacity, BlockSlot{0, 0, 0, 0, 0, 0});
    mask_ = capacity - 1;
    used_ = 0;
  }

 private:
  static constexpr size_t kInitialCapacity = 1024;

  static size_t hash(uint32_t question, uint8_t family, uint8_t scope, const MaskedBlock& b) {
    uint64_t h = b.hi * 0x9E3779B97F4A7C15ull ^ b.lo * 0xC2B2AE3D27D4EB4Full ^
                 ((static_cast<uint64_t>(question) << 16) | (static_cast<uint64_t>(family) << 8) | scope) * 0x165667B19E3779F9ull;
    h ^= h >> 31;
    h *= 0xD6E8FEB86659FD93ull;
    h ^= h >> 29;
    return static_cast<size_t>(h);
  }

  std::vector<BlockSlot> slots_;
  size_t mask_ = 0;
  size_t used_ = 0;
};

}  // namespace gslbd
