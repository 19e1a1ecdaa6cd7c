// Differential libFuzzer target for the fast path's template cache and its block table
// (native/template_cache.h, native/block_table.h), built with ASan and UBSan by
// native/build-fuzzer.sh and run by src/doors/dns/fastPathFuzz.test.ts over native/fuzz-corpus-blocks/.
// The input drives installs, lookups, new generations, one client at many scopes, class templates
// looked up through mock class tables that come and go (with config bit 0x40) and bulk installs (enough to make the table
// grow, drop older generations' blocks and start afresh, with small bounds) on the cache and on a
// reference model of ordered maps that knows nothing of hashing, probing, question ids or inline
// bytes; any disagreement — a lookup's template, the current templates, the counts, the table's
// capacity, a bound — aborts. Template lengths cluster around the 192-byte inline boundary.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "template_cache.h"

namespace {

[[noreturn]] void disagree(const char* what) {
  std::fprintf(stderr, "block table and model disagree: %s\n", what);
  std::abort();
}

/** The input, one byte at a time; 0 once it is used up. */
struct Input {
  const uint8_t* data;
  size_t size;
  size_t pos = 0;
  bool more() const { return pos < size; }
  uint8_t next() { return pos < size ? data[pos++] : 0; }
};

/** Template bytes are a function of a seed (its 4 bytes at both ends of a fixed pattern), so the model keeps the seed only. */
std::vector<uint8_t> templateBytes(uint32_t seed, size_t len) {
  static const std::vector<uint8_t> pattern = [] {
    std::vector<uint8_t> p(gslbd::kMaxTemplate);
    for (size_t i = 0; i < p.size(); i++) p[i] = static_cast<uint8_t>(i * 131 >> 3);
    return p;
  }();
  std::vector<uint8_t> bytes(pattern.begin(), pattern.begin() + static_cast<std::ptrdiff_t>(len));
  for (size_t i = 0; i < 4 && i < len; i++) bytes[i] = bytes[len - 1 - i] = static_cast<uint8_t>(seed >> (8 * i));
  return bytes;
}

using Masked = std::vector<uint8_t>;

/** `addr` masked to its first `scope` bits, byte by byte (the table does it in two 64-bit words). */
Masked maskBytes(const uint8_t addr[16], unsigned scope) {
  Masked m(addr, addr + 16);
  for (unsigned i = 0; i < 16; i++) {
    const unsigned bits = scope > i * 8 ? scope - i * 8 : 0;
    m[i] &= bits >= 8 ? 0xFF : static_cast<uint8_t>(0xFF00 >> bits);
  }
  return m;
}

struct Value {
  uint16_t len;
  uint32_t seed;
  uint32_t answerClass;
};

/** What the cache should hold, kept the simple way, with the policy of template_cache.h's `makeRoom` spelled out. */
struct Model {
  size_t maxQuestions, maxBlocks;
  uint32_t lastId;
  // BlockTable's constructor asks for room for 1024 blocks (2048 slots); a rebuild or a fresh start for what it keeps (at least 1024 slots).
  size_t capacity = 2048;
  struct Q {
    uint32_t gen, id;
    uint32_t classTable = 0;  // 0: none; UINT32_MAX: two tables named on one generation
  };
  std::map<std::string, Q> questions;  // every key since the cache last started afresh
  // (question id, family, scope, masked client) → template; older generations' until a rebuild.
  std::map<std::tuple<uint32_t, uint8_t, uint8_t, Masked>, Value> stored;

  static size_t capacityFor(size_t entries) {
    size_t c = 1024;
    while (c < entries * 2) c *= 2;
    return c;
  }

  void clear() {
    questions.clear();
    stored.clear();
    capacity = 1024;
  }

  void makeRoom(uint32_t gen) {
    const bool full = (stored.size() + 1) * 2 > capacity;
    if (!full && stored.size() < maxBlocks && questions.size() < maxQuestions) return;
    std::set<uint32_t> live;
    for (const auto& [key, q] : questions)
      if (q.gen == gen) live.insert(q.id);
    size_t kept = 0;
    for (const auto& [k, v] : stored) kept += live.count(std::get<0>(k));
    if (questions.size() >= maxQuestions || kept + 1 > maxBlocks || (stored.size() >= maxBlocks && kept * 2 + 1 > maxBlocks)) {
      clear();
      return;
    }
    for (auto it = stored.begin(); it != stored.end();) it = live.count(std::get<0>(it->first)) ? std::next(it) : stored.erase(it);
    capacity = capacityFor(std::min(kept * 2 + 1, maxBlocks));
  }

  /** `key`'s question on `gen`, renewed when older; nullptr when question ids ran out (the cache started afresh and kept nothing). */
  Q* current(const std::string& key, uint32_t gen) {
    auto found = questions.find(key);
    if (found == questions.end() || found->second.gen != gen) {
      if (lastId == UINT32_MAX) {
        clear();
        lastId = 0;
        return nullptr;
      }
      questions[key] = Q{gen, ++lastId};
    }
    return &questions[key];
  }

  /** False when question ids ran out. */
  bool install(const std::string& key, uint32_t gen, uint8_t family, unsigned scope, const uint8_t addr[16], Value v) {
    makeRoom(gen);
    Q* q = current(key, gen);
    if (q == nullptr) return false;
    stored[{q->id, family, static_cast<uint8_t>(scope), maskBytes(addr, scope)}] = v;
    return true;
  }

  /** A class's key in `stored`: the class scope and the class id where the block's bytes would be (as the table's {classId, 0}). */
  static Masked classKey(uint32_t classId) {
    Masked m(16, 0);
    for (int i = 0; i < 4; i++) m[4 + i] = static_cast<uint8_t>(classId >> (24 - 8 * i));
    return m;
  }

  /** False when question ids ran out or the question's class templates named another table on this generation. */
  bool installClass(const std::string& key, uint32_t gen, uint8_t family, uint32_t table, uint32_t classId, Value v) {
    makeRoom(gen);
    Q* q = current(key, gen);
    if (q == nullptr) return false;
    if (q->classTable == 0) q->classTable = table;
    if (q->classTable != table) {
      q->classTable = UINT32_MAX;
      return false;
    }
    stored[{q->id, family, gslbd::kClassScope, classKey(classId)}] = v;
    return true;
  }

  const Value* find(const std::string& key, uint32_t gen, uint8_t family, const uint8_t addr[16]) const {
    auto q = questions.find(key);
    if (q == questions.end() || q->second.gen != gen) return nullptr;
    for (int scope = family == 0 ? 32 : 128; scope >= 0; scope--) {
      auto it = stored.find({q->second.id, family, static_cast<uint8_t>(scope), maskBytes(addr, static_cast<unsigned>(scope))});
      if (it != stored.end()) return &it->second;
    }
    return nullptr;
  }

  /** {@link find}, then the class template of the client's class in the question's table when that table is present. */
  const Value* findByClass(const std::string& key, uint32_t gen, uint8_t family, const uint8_t addr[16], const std::set<uint32_t>& present, bool& byClass) const {
    byClass = false;
    if (const Value* v = find(key, gen, family, addr)) return v;
    auto q = questions.find(key);
    if (q == questions.end() || q->second.gen != gen) return nullptr;
    const uint32_t table = q->second.classTable;
    if (table == 0 || table == UINT32_MAX || present.count(table) == 0) return nullptr;
    auto it = stored.find({q->second.id, family, gslbd::kClassScope, classKey(classOfClient(table, addr))});
    if (it == stored.end()) return nullptr;
    byClass = true;
    return &it->second;
  }

  /** The mock class tables: table t gives the client's first byte's residue modulo t + 2. */
  static uint32_t classOfClient(uint32_t table, const uint8_t addr[16]) { return addr[0] % (table + 2); }
};

void check(const gslbd::TemplateCache& cache, const Model& model, size_t maxBlocks) {
  if (cache.blocks() > maxBlocks) disagree("more blocks than the bound");
  if (cache.blocks() * 2 > cache.capacity()) disagree("table more than half full");
  if (cache.blocks() != model.stored.size()) disagree("block count");
  if (cache.questions() != model.questions.size()) disagree("question count");
  if (cache.capacity() != model.capacity) disagree("capacity");
}

void compare(const Value* want, const gslbd::Template* got, const char* what) {
  if ((want == nullptr) != (got == nullptr)) disagree(what);
  if (want == nullptr) return;
  if (got->len != want->len || got->answerClass != want->answerClass) disagree(what);
  if (std::memcmp(got->data(), templateBytes(want->seed, want->len).data(), want->len) != 0) disagree("template bytes");
}

/** A template length: mostly at the inline boundary (192 inline, 193 on the heap), sometimes anywhere up to kMaxTemplate. */
uint16_t lengthOf(uint8_t b) {
  static const uint16_t kLengths[] = {12, 60, 190, 191, 192, 193, 194, 255, 256, 512, 1232, 4096};
  if (b < 192) return kLengths[b % 12];
  return static_cast<uint16_t>(12 + (b - 192) * 63);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in{data, size};
  // Bounds small enough that a few operations reach them; question ids and generations near their wrap-around on demand.
  const uint8_t config = in.next();
  static const size_t kQuestionBounds[] = {3, 16, 200, gslbd::kMaxQuestions};
  static const size_t kBlockBounds[] = {600, 1024, 2048, 5000};
  const size_t maxQuestions = kQuestionBounds[config & 3];
  const size_t maxBlocks = kBlockBounds[(config >> 2) & 3];
  const uint32_t firstId = (config & 0x10) ? UINT32_MAX - 40 : 0;
  uint32_t gen = (config & 0x20) ? UINT32_MAX - 2 : 1;
  gslbd::TemplateCache cache(maxQuestions, maxBlocks, firstId);
  Model model{maxQuestions, maxBlocks, firstId};
  uint32_t seed = 0;

  auto install = [&](const std::string& key, uint8_t family, unsigned scope, const uint8_t addr[16], uint16_t len, uint32_t answerClass) {
    seed++;
    gslbd::Template* t = cache.slot(key, gen, family, scope, addr);
    const bool kept = model.install(key, gen, family, scope, addr, Value{len, seed, answerClass});
    if ((t != nullptr) != kept) disagree("install dropped");
    if (t == nullptr) return;
    t->assign(templateBytes(seed, len).data(), len);
    t->answerClass = answerClass;
    std::memcpy(t->ecs, &seed, sizeof seed);
  };
  auto readClient = [&](uint8_t family, uint8_t addr[16]) {
    std::memset(addr, 0, 16);
    for (int i = 0; i < 4; i++) addr[i] = in.next();
    if (family == 1) {
      addr[7] = in.next();
      addr[15] = in.next();
    }
  };

  // With config bit 0x40, two more operations: class templates (install, and lookups through mock class tables that come and go).
  const bool classes = (config & 0x40) != 0;
  std::set<uint32_t> present = {1, 2};
  while (in.more()) {
    const uint8_t op = in.next();
    const std::string key = "q" + std::to_string(in.next() % 8);
    const uint8_t family = op & 1;
    switch ((op >> 1) % (classes ? 9 : 7)) {
      case 7: {  // one class template: the table (1-3), the class (below the table's mock count), the template
        const uint32_t table = in.next() % 3 + 1;
        const uint32_t classId = in.next() % (table + 2);
        const uint16_t len = lengthOf(in.next());
        const uint32_t answerClass = in.next();
        seed++;
        gslbd::Template* t = cache.classSlot(key, gen, family, table, classId);
        const bool kept = model.installClass(key, gen, family, table, classId, Value{len, seed, answerClass});
        if ((t != nullptr) != kept) disagree("class install dropped");
        if (t == nullptr) break;
        t->assign(templateBytes(seed, len).data(), len);
        t->answerClass = answerClass;
        std::memcpy(t->ecs, &seed, sizeof seed);
        break;
      }
      case 8: {  // a table dropped or copied again, then a lookup through the class tables
        const uint32_t table = in.next() % 4;
        if (table != 0 && !present.erase(table)) present.insert(table);
        uint8_t addr[16];
        readClient(family, addr);
        bool wantByClass, gotByClass;
        const Value* want = model.findByClass(key, gen, family, addr, present, wantByClass);
        const auto classOf = [&](uint32_t t, uint32_t& classId) {
          if (present.count(t) == 0) return false;
          classId = Model::classOfClient(t, addr);
          return true;
        };
        compare(want, cache.find(key, gen, family, addr, classOf, gotByClass), "class lookup");
        if (want != nullptr && wantByClass != gotByClass) disagree("class lookup kind");
        break;
      }
      case 0: {  // one install
        const unsigned scope = in.next() % (family == 0 ? 33 : 129);
        uint8_t addr[16];
        readClient(family, addr);
        install(key, family, scope, addr, lengthOf(in.next()), in.next());
        break;
      }
      case 1: {  // one lookup
        uint8_t addr[16];
        readClient(family, addr);
        compare(model.find(key, gen, family, addr), cache.find(key, gen, family, addr), "lookup");
        break;
      }
      case 2:  // a new generation (wraps around past 2^32 - 1)
        gen++;
        break;
      case 3: {  // many blocks of one question: the table grows, drops older generations' blocks, starts afresh
        const size_t n = (in.next() % 16 + 1) * 128;
        const unsigned scope = family == 0 ? 16 + in.next() % 17 : 40 + in.next() % 89;
        const uint16_t len = lengthOf(in.next());
        uint8_t addr[16] = {};
        for (size_t i = 0; i < n; i++) {
          // Consecutive blocks at `scope`: the counter sits in the scope's last bits.
          const unsigned base = scope - 1;
          for (unsigned b = 0; b < 16 && b <= base; b++) {
            const unsigned bit = base - b;
            const uint8_t mask = static_cast<uint8_t>(0x80 >> (bit % 8));
            if ((i >> b) & 1) addr[bit / 8] |= mask;
            else addr[bit / 8] &= static_cast<uint8_t>(~mask);
          }
          install(key, family, scope, addr, len, static_cast<uint32_t>(i));
        }
        break;
      }
      case 4: {  // one block of many questions: the question bound
        const size_t n = in.next() % 64 + 1;
        uint8_t addr[16];
        readClient(family, addr);
        const unsigned scope = family == 0 ? 24 : 56;
        for (size_t i = 0; i < n; i++) install("k" + std::to_string(i), family, scope, addr, lengthOf(static_cast<uint8_t>(i)), 7);
        break;
      }
      case 6: {  // one client at up to 16 scopes (where its address has zero bits the blocks share their bytes and differ in scope only), then it and its neighbours looked up
        uint8_t addr[16];
        readClient(family, addr);
        const unsigned top = family == 0 ? 32 : 128, step = family == 0 ? 2 : 8;
        const unsigned scopes = static_cast<unsigned>(in.next()) << 8 | in.next();
        for (unsigned b = 0; b < 16; b++)
          if ((scopes >> b) & 1) install(key, family, top - b * step, addr, lengthOf(in.next()), b);
        for (int k = 0; k < 4; k++) {
          uint8_t near[16];
          std::memcpy(near, addr, 16);
          near[family == 0 ? 3 : 15] ^= in.next();
          compare(model.find(key, gen, family, near), cache.find(key, gen, family, near), "lookup");
        }
        break;
      }
      case 5: {  // the current templates (what `templates()` hands JavaScript to re-answer)
        std::multiset<std::tuple<std::string, uint32_t, uint32_t, uint16_t>> want, got;
        std::set<uint32_t> live;
        std::map<uint32_t, std::string> keyOf;
        for (const auto& [k, q] : model.questions)
          if (q.gen == gen) {
            live.insert(q.id);
            keyOf[q.id] = k;
          }
        for (const auto& [k, v] : model.stored)
          if (live.count(std::get<0>(k)) && std::get<2>(k) != gslbd::kClassScope) want.insert({keyOf[std::get<0>(k)], v.seed, v.answerClass, v.len});
        cache.forEachCurrent(gen, [&](const std::string& k, const gslbd::Template& t) {
          uint32_t s;
          std::memcpy(&s, t.ecs, sizeof s);
          got.insert({k, s, t.answerClass, t.len});
          return true;
        });
        if (want != got) disagree("current templates");
        break;
      }
    }
    check(cache, model, maxBlocks);
  }
  return 0;
}
