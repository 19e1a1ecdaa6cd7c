#include "fast_query.h"

namespace gslbd {

namespace {
inline uint16_t u16(const uint8_t* p) { return static_cast<uint16_t>((p[0] << 8) | p[1]); }
}  // namespace

bool parseFastQuery(const uint8_t* p, size_t n, FastQuery& out) {
  if (n < 12 || n > kMaxFastQuery) return false;
  // QR, opcode (4 bits), TC; RCODE nibble. AA, RD, Z, AD, CD are part of the key.
  if ((p[2] & 0xFA) != 0 || (p[3] & 0x0F) != 0) return false;
  if (u16(p + 4) != 1 || u16(p + 6) != 0 || u16(p + 8) != 0) return false;
  const uint16_t ar = u16(p + 10);
  if (ar > 1) return false;
  size_t pos = 12;
  size_t nameLen = 0;
  bool plain = true;
  for (;;) {
    if (pos >= n) return false;
    const uint8_t len = p[pos];
    if (len == 0) {
      pos++;
      nameLen++;
      break;
    }
    if (len > 63) return false;  // compression pointers and extended label types
    nameLen += 1 + len;
    if (nameLen + 1 > 255) return false;
    if (pos + 1 + len > n) return false;
    for (size_t i = pos + 1; i <= pos + len; i++) plain = plain && p[i] > 0x20 && p[i] < 0x7F && p[i] != '.' && p[i] != '\\';
    pos += 1 + len;
  }
  out.nameEnd = pos;
  out.foldCase = plain;
  if (pos + 4 > n) return false;
  if (u16(p + pos + 2) != 1) return false;  // class IN
  pos += 4;
  out.ecsAddrLen = 0;
  out.ecsClient = false;
  out.ecsFamily = 0;
  out.ecsMapped = false;
  if (ar == 0) {
    if (pos != n) return false;
    out.keyEnd = n;
    return true;
  }
  // OPT: root owner, type 41, class = payload size, TTL = ext RCODE/version/flags, RDLENGTH.
  if (pos + 11 > n) return false;
  if (p[pos] != 0 || u16(p + pos + 1) != 41) return false;
  if (p[pos + 5] != 0 || p[pos + 6] != 0 || p[pos + 7] != 0 || p[pos + 8] != 0) return false;
  const size_t rdlen = u16(p + pos + 9);
  pos += 11;
  if (pos + rdlen != n) return false;
  if (rdlen == 0) {
    out.keyEnd = n;
    return true;
  }
  // Exactly one option, ECS.
  if (rdlen < 8) return false;
  if (u16(p + pos) != 8) return false;
  const size_t optLen = u16(p + pos + 2);
  if (pos + 4 + optLen != n || optLen < 4) return false;
  const uint8_t family = static_cast<uint8_t>(u16(p + pos + 4));
  if (u16(p + pos + 4) != 1 && u16(p + pos + 4) != 2) return false;
  const unsigned source = p[pos + 6];
  const unsigned scope = p[pos + 7];
  if (source > (family == 1 ? 32u : 128u) || scope != 0) return false;
  const size_t addrLen = (source + 7) / 8;
  if (optLen - 4 != addrLen) return false;
  if (addrLen > 0 && source % 8 != 0) {
    const uint8_t mask = static_cast<uint8_t>(0xFF >> (source % 8));
    if ((p[n - 1] & mask) != 0) return false;
  }
  out.keyEnd = n - addrLen;
  out.ecsAddrLen = addrLen;
  const uint8_t* a = p + out.keyEnd;
  bool mapped = family == 2 && source >= 96;
  for (size_t i = 0; mapped && i < 12; i++) mapped = a[i] == (i < 10 ? 0x00 : 0xFF);
  out.ecsMapped = mapped;
  out.ecsClient = mapped ? source > 96 : source > 0;
  out.ecsFamily = family;
  return true;
}

void questionKey(const uint8_t* p, const FastQuery& q, std::string& key) {
  key.assign(reinterpret_cast<const char*>(p + 2), q.keyEnd - 2);
  if (!q.foldCase) return;
  // Length bytes are 1–63, never A–Z (0x41–0x5A): the whole name folds in one pass.
  for (size_t i = 12 - 2; i < q.nameEnd - 2; i++)
    if (key[i] >= 'A' && key[i] <= 'Z') key[i] = static_cast<char>(key[i] + ('a' - 'A'));
}

}  // namespace gslbd
