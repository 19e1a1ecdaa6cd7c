#include "rate_limit.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace gslbd {

namespace {

uint64_t prefixMask(unsigned bits) { return bits == 0 ? 0 : ~uint64_t{0} << (64 - bits); }

}  // namespace

RateLimiter::RateLimiter(const RateLimitConfig& config)
    : intervalNs_(static_cast<int64_t>(std::llround(1e9 / config.ratePerSecond))),
      burstNs_(static_cast<int64_t>(std::llround(1e9 / config.ratePerSecond * std::max(1.0, config.burst)))),
      slip_(config.slip),
      mask4_(prefixMask(std::min(config.ipv4Prefix, 32u))),
      mask6_(prefixMask(std::min(config.ipv6Prefix, 64u))) {
  size_t sets = 1;
  while (sets * kWays < config.entries) sets <<= 1;
  sets_ = sets;
  entries_.resize(sets * kWays);
  locks_.reset(new std::mutex[kStripes]);
}

RateVerdict RateLimiter::check(const sockaddr_storage& peer, int64_t nowNs) {
  uint64_t key;
  uint8_t family;
  if (peer.ss_family == AF_INET) {
    uint32_t a;
    std::memcpy(&a, &reinterpret_cast<const sockaddr_in&>(peer).sin_addr, 4);
    key = (static_cast<uint64_t>(ntohl(a)) << 32) & mask4_;
    family = 1;
  } else {
    const uint8_t* b = reinterpret_cast<const sockaddr_in6&>(peer).sin6_addr.s6_addr;
    key = 0;
    for (int i = 0; i < 8; i++) key = (key << 8) | b[i];
    key &= mask6_;
    family = 2;
  }
  const uint64_t h = (key ^ family) * 0x9E3779B97F4A7C15ull;
  const size_t set = static_cast<size_t>(h >> 32) & (sets_ - 1);
  Entry* ways = &entries_[set * kWays];
  std::lock_guard<std::mutex> guard(locks_[set % kStripes]);
  Entry* e = nullptr;
  for (size_t i = 0; i < kWays && e == nullptr; i++)
    if (ways[i].family == family && ways[i].key == key) e = &ways[i];
  if (e == nullptr) {
    // A new block replaces the entry closest to a full bucket (smallest tat): an idle one first.
    e = &ways[0];
    for (size_t i = 1; i < kWays; i++)
      if (ways[i].family == 0 || (e->family != 0 && ways[i].tat < e->tat)) e = &ways[i];
    *e = Entry{key, nowNs, 0, family};
  }
  const int64_t tat = std::max(e->tat, nowNs);
  if (tat + intervalNs_ - nowNs <= burstNs_) {
    e->tat = tat + intervalNs_;
    return RateVerdict::Pass;
  }
  e->limited++;
  return slip_ != 0 && e->limited % slip_ == 0 ? RateVerdict::Slip : RateVerdict::Drop;
}

size_t truncatedReply(const uint8_t* p, size_t n, uint8_t* out) {
  if (n < 12 || (p[2] & 0x80) != 0 || p[4] != 0 || p[5] != 1) return 0;
  size_t i = 12;
  for (;;) {
    if (i >= n) return 0;
    const uint8_t len = p[i];
    if (len == 0) break;
    if (len > 63 || i - 12 + len + 1 > 255) return 0;
    i += 1 + len;
  }
  i += 1 + 4;
  if (i > n) return 0;
  std::memcpy(out, p, i);
  out[2] = static_cast<uint8_t>((p[2] & 0x79) | 0x80 | 0x02);  // QR, opcode and RD kept, AA clear, TC
  out[3] = static_cast<uint8_t>(p[3] & 0x10);                   // CD kept; RA, Z, AD and RCODE clear
  std::memset(out + 6, 0, 6);
  return i;
}

}  // namespace gslbd
