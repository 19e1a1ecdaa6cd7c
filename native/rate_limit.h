// Response-rate limiting of the fast path (src/doors/dns/README.md, "Abuse: response-rate
// limiting"): one token bucket per source block (an IPv4 /24 or an IPv6 /56 by default), kept as a
// GCRA "theoretical arrival time" in a bounded, 4-way set-associative table shared by the threads
// of one listener address (SO_REUSEPORT spreads one source's ports over several threads, so a
// per-thread table would let it through once per thread).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include <sys/socket.h>

namespace gslbd {

/** The limiter's settings; `ratePerSecond` 0 turns it off. */
struct RateLimitConfig {
  /** Responses per second per source block (tokens added per second). */
  double ratePerSecond = 0;
  /** Responses a source block may get at once after being idle (the bucket's size, ≥ 1). */
  double burst = 0;
  /** Every `slip`-th limited query of a block gets a truncated (TC=1) empty reply instead of none; 0: none ever. */
  uint32_t slip = 2;
  /** Source block prefix lengths: IPv4 0–32, IPv6 0–64. */
  unsigned ipv4Prefix = 24;
  unsigned ipv6Prefix = 56;
  /** Source blocks tracked at once (rounded up to a power of two, at least 4). */
  size_t entries = 65536;
};

/** What the limiter says about one datagram. */
enum class RateVerdict { Pass, Slip, Drop };

class RateLimiter {
 public:
  explicit RateLimiter(const RateLimitConfig& config);
  /**
   * Takes a token from the bucket of `peer`'s block at `nowNs` (CLOCK_MONOTONIC): Pass when there
   * was one; otherwise Slip for every `slip`-th limited datagram of the block, else Drop. A block
   * not in the table starts with a full bucket, taking the place of the entry of its set whose
   * bucket is fullest (an idle one first): the table never grows.
   */
  RateVerdict check(const sockaddr_storage& peer, int64_t nowNs);
  /** Bytes of the table (its memory bound). */
  size_t tableBytes() const { return entries_.size() * sizeof(Entry); }

 private:
  struct Entry {
    uint64_t key = 0;
    int64_t tat = 0;  // the bucket is full when tat ≤ now; empty when tat − now > burst interval
    uint32_t limited = 0;
    uint8_t family = 0;  // 0: unused
  };
  static constexpr size_t kWays = 4;
  static constexpr size_t kStripes = 256;
  int64_t intervalNs_;
  int64_t burstNs_;
  uint32_t slip_;
  uint64_t mask4_, mask6_;
  size_t sets_;
  std::vector<Entry> entries_;
  std::unique_ptr<std::mutex[]> locks_;
};

/**
 * Writes into `out` the slip reply to the query `p[0, n)`: its header and question with QR and TC
 * set, RCODE 0 and no records (so a real client retries over TCP, which the limiter does not
 * touch). Returns its length, or 0 when `p` is not a query with one uncompressed question.
 */
size_t truncatedReply(const uint8_t* p, size_t n, uint8_t* out);

}  // namespace gslbd
