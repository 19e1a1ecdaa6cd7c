#include "range_index.h"

namespace gslbd {

namespace {
constexpr size_t kBatchLanes = 16;
}

void RangeIndex4::LookupBatch(const uint32_t* addrs, size_t count, uint32_t* out_ids, uint8_t* out_prefixes) const {
  uint32_t base[kBatchLanes];
  uint32_t len[kBatchLanes];
  for (size_t done = 0; done < count; done += kBatchLanes) {
    const size_t lanes = count - done < kBatchLanes ? count - done : kBatchLanes;
    const uint32_t* a = addrs + done;
    uint32_t longest = 1;
    for (size_t l = 0; l < lanes; l++) {
      const uint32_t top = a[l] >> shift;
      base[l] = index[top];
      len[l] = index[top + 1] - base[l] + 1;
      longest = len[l] > longest ? len[l] : longest;
    }
    // A lane whose window is down to one range stops moving (half == 0), so every lane can take
    // the same number of steps: that of the longest window.
    while (longest > 1) {
      longest -= longest >> 1;
      for (size_t l = 0; l < lanes; l++) {
        const uint32_t half = len[l] >> 1;
        base[l] = starts[base[l] + half] <= a[l] ? base[l] + half : base[l];
        len[l] -= half;
      }
    }
    for (size_t l = 0; l < lanes; l++) {
      out_ids[done + l] = ids[base[l]];
      out_prefixes[done + l] = static_cast<uint8_t>(Prefix(a[l], base[l]));
    }
  }
}

void RangeIndex6::LookupBatch(const uint32_t* words, size_t count, uint32_t* out_ids, uint8_t* out_prefixes) const {
  uint32_t base[kBatchLanes];
  uint32_t len[kBatchLanes];
  u128 key[kBatchLanes];
  for (size_t done = 0; done < count; done += kBatchLanes) {
    const size_t lanes = count - done < kBatchLanes ? count - done : kBatchLanes;
    const uint32_t* w = words + 4 * done;
    uint32_t longest = 1;
    for (size_t l = 0; l < lanes; l++) {
      key[l] = Key(w + 4 * l);
      const uint32_t top = w[4 * l] >> shift;
      base[l] = index[top];
      len[l] = index[top + 1] - base[l] + 1;
      longest = len[l] > longest ? len[l] : longest;
    }
    while (longest > 1) {
      longest -= longest >> 1;
      for (size_t l = 0; l < lanes; l++) {
        const uint32_t half = len[l] >> 1;
        base[l] = Key(starts + 4 * static_cast<size_t>(base[l] + half)) <= key[l] ? base[l] + half : base[l];
        len[l] -= half;
      }
    }
    for (size_t l = 0; l < lanes; l++) {
      out_ids[done + l] = ids[base[l]];
      out_prefixes[done + l] = static_cast<uint8_t>(Prefix(key[l], base[l]));
    }
  }
}

const char* ValidateIndex(const uint32_t* index, uint32_t bits, uint32_t n) {
  if (n == 0) return "a family has no ranges";
  const size_t entries = (static_cast<size_t>(1) << bits) + 1;
  if (index[0] != 0) return "direct index does not start at range 0";
  if (index[entries - 1] != n - 1) return "direct index does not end at the last range";
  for (size_t k = 1; k < entries; k++) {
    if (index[k] < index[k - 1]) return "direct index decreases";
  }
  return nullptr;
}

const char* ValidateTiling(const uint32_t* starts, const uint32_t* ids, uint32_t n, uint32_t words, uint32_t locations) {
  for (uint32_t w = 0; w < words; w++) {
    if (starts[w] != 0) return "ranges do not start at address 0";
  }
  if (words == 1) {
    for (uint32_t i = 1; i < n; i++) {
      if (starts[i] <= starts[i - 1]) return "range starts do not ascend";
    }
  } else {
    for (uint32_t i = 1; i < n; i++) {
      if (RangeIndex6::Key(starts + 4 * static_cast<size_t>(i)) <= RangeIndex6::Key(starts + 4 * static_cast<size_t>(i - 1))) {
        return "range starts do not ascend";
      }
    }
  }
  for (uint32_t i = 0; i < n; i++) {
    if (ids[i] >= locations) return "a range has an unknown location id";
  }
  return nullptr;
}

}  // namespace gslbd
