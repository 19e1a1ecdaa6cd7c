// The fast path's template cache: question key (the query without ID and ECS address) → for each
// ECS scope seen, client block → reply template, with generations, the bounds and the rebuild that
// drops older generations' blocks. Apart from the N-API server (native/fast_path.cc) so that the
// block table's fuzzer (native/fuzz_block_table.cc) drives the same code against a reference model.
// Not thread-safe: the caller holds its lock (shared for `find` and `forEachCurrent`, unique else).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "block_table.h"

namespace gslbd {

/** Template bytes kept inside the template itself (a replay then reads one place, not two): quickstart-sized replies are 60–200 bytes. */
constexpr size_t kInlineTemplate = 192;
/** Largest template kept (the advertised UDP payload size is at most 4096). */
constexpr size_t kMaxTemplate = 4096;
/** Question keys and blocks kept before the cache starts afresh. */
constexpr size_t kMaxQuestions = 65536;
constexpr size_t kMaxBlocks = 1 << 20;

/**
 * A reply template and its answer class (the counters JavaScript adds it to when the threads replay
 * it), with what asked for it first — the ECS address bytes and the sender's address — so that
 * `templates()` can give JavaScript that query again to answer on the next snapshot. The bytes
 * live inline up to {@link kInlineTemplate}, on the heap beyond.
 */
struct Template {
  uint32_t answerClass = 0;
  uint16_t len = 0;
  uint8_t ecsLen = 0;
  uint8_t peerFamily = 0;  // AF_INET or AF_INET6
  /** A class template whose ECS scope byte is the client's class scope: a replay writes the client's own. */
  bool patchScope = false;
  uint8_t ecs[16];
  uint8_t peer[16];
  std::vector<uint8_t> large;
  uint8_t small[kInlineTemplate];

  const uint8_t* data() const { return len <= kInlineTemplate ? small : large.data(); }
  /** `n` ≤ kMaxTemplate. */
  void assign(const uint8_t* bytes, size_t n) {
    len = static_cast<uint16_t>(n);
    if (n <= kInlineTemplate) {
      std::memcpy(small, bytes, n);
      large.clear();
      large.shrink_to_fit();
    } else {
      large.assign(bytes, bytes + n);
    }
  }
};

/**
 * A question key's state: its generation, its id in the block table (a fresh one whenever it starts
 * a new generation, so the blocks of an older one are never found again and are dropped when the
 * table grows), and per client family (0 IPv4, 1 IPv6) the scopes it has templates at, one bit
 * each (bit s of word s / 64, scopes 0–128): a lookup probes them longest first.
 */
struct Question {
  uint32_t gen = 0;
  uint32_t id = 0;
  uint64_t scopes[2][3] = {{0, 0, 0}, {0, 0, 0}};
  /** The class table its class templates are keyed by (0: none; {@link kClassConflict}: two tables, none used). */
  uint32_t classTable = 0;
};

/** A question's class templates sit in the block table at this scope (no block scope is above 128), keyed by the class id. */
constexpr uint8_t kClassScope = 255;
/** `Question::classTable` after templates named two different tables on one generation: class lookups are off for it. */
constexpr uint32_t kClassConflict = UINT32_MAX;

/** The class lookup `TemplateCache::find` calls without class tables. */
struct NoClassTables {
  bool operator()(uint32_t, uint32_t&) const { return false; }
};

class TemplateCache {
 public:
  /**
   * `maxQuestions` question keys and `maxBlocks` blocks (≥ 1) at most; the fuzzer passes small bounds
   * and a `lastQuestionId` near 2^32 to reach the start-afresh paths in a few operations.
   */
  explicit TemplateCache(size_t maxQuestions = kMaxQuestions, size_t maxBlocks = kMaxBlocks, uint32_t lastQuestionId = 0)
      : maxQuestions_(maxQuestions), maxBlocks_(maxBlocks), lastQuestionId_(lastQuestionId) {}

  /**
   * The template of the client's longest block `key` has one at on generation `gen`, or nullptr.
   * `family` 0 (IPv4: `addr`'s first 4 bytes, the rest zero) or 1 (IPv6, 16 bytes).
   */
  const Template* find(const std::string& key, uint32_t gen, uint8_t family, const uint8_t addr[16]) const {
    bool byClass;
    return find(key, gen, family, addr, NoClassTables{}, byClass);
  }

  /**
   * {@link find}, then on a miss the question's class template: `classOf(table, classId)` sets the
   * client's class in the question's class table and returns false when it has none (the table was
   * dropped); `byClass` says which kind answered.
   */
  template <class ClassOf>
  const Template* find(const std::string& key, uint32_t gen, uint8_t family, const uint8_t addr[16], ClassOf classOf, bool& byClass) const {
    byClass = false;
    auto it = cache_.find(key);
    if (it == cache_.end() || it->second.gen != gen) return nullptr;
    const Question& question = it->second;
    // The client's block at each scope the question has templates at, longest first; every probe's
    // slot is prefetched before the first is read, so the table's cache misses overlap.
    uint8_t scopes[129];
    MaskedBlock masked[129];
    size_t homes[129];
    size_t n = 0;
    for (int word = 2; word >= 0; word--) {
      for (uint64_t bits = question.scopes[family][word]; bits != 0; n++) {
        const int bit = 63 - __builtin_clzll(bits);
        bits &= ~(1ull << bit);
        scopes[n] = static_cast<uint8_t>(word * 64 + bit);
        masked[n] = maskBlock(addr, scopes[n]);
        homes[n] = blocks_.home(question.id, family, scopes[n], masked[n]);
        blocks_.prefetch(homes[n]);
      }
    }
    for (size_t k = 0; k < n; k++) {
      const uint32_t* index = blocks_.findFrom(homes[k], question.id, family, scopes[k], masked[k]);
      if (index != nullptr) return &templates_[*index];
    }
    uint32_t classId;
    if (question.classTable == 0 || question.classTable == kClassConflict || !classOf(question.classTable, classId)) return nullptr;
    const uint32_t* index = blocks_.find(question.id, family, kClassScope, {classId, 0});
    if (index == nullptr) return nullptr;
    byClass = true;
    return &templates_[*index];
  }

  /**
   * The class template of `key` for class `classId` of class table `table` (≠ 0) and client family
   * `family` on generation `gen`, added empty when absent, for the caller to fill; nullptr when the
   * question's class templates name another table on this generation (then none of its class
   * templates is used again) or question ids ran out. The reference stays valid until the next
   * `slot` or `classSlot`.
   */
  Template* classSlot(const std::string& key, uint32_t gen, uint8_t family, uint32_t table, uint32_t classId) {
    makeRoom(gen);
    Question* question = current(key, gen);
    if (question == nullptr) return nullptr;
    if (question->classTable == 0) question->classTable = table;
    if (question->classTable != table) {
      question->classTable = kClassConflict;
      return nullptr;
    }
    bool added;
    const uint32_t index = blocks_.insert(question->id, family, kClassScope, {classId, 0}, static_cast<uint32_t>(templates_.size()), added);
    if (added) templates_.emplace_back();
    return &templates_[index];
  }

  /**
   * The template of `key`'s client block at `scope` (≤ 32 for family 0, ≤ 128 for 1) on generation
   * `gen`, added empty when absent, for the caller to fill; nullptr when question ids ran out and the
   * cache started afresh instead. The reference stays valid until the next `slot`.
   */
  Template* slot(const std::string& key, uint32_t gen, uint8_t family, unsigned scope, const uint8_t addr[16]) {
    makeRoom(gen);
    Question* current = this->current(key, gen);
    if (current == nullptr) return nullptr;
    Question& question = *current;
    question.scopes[family][scope / 64] |= 1ull << (scope % 64);
    bool added;
    const uint32_t index =
        blocks_.insert(question.id, family, static_cast<uint8_t>(scope), maskBlock(addr, scope), static_cast<uint32_t>(templates_.size()), added);
    if (added) templates_.emplace_back();
    return &templates_[index];
  }

  /**
   * Calls `f(key, template)` for every block template of generation `gen`, in table order, until `f`
   * returns false. Class templates are left out: each is the copy of a block template installed with it.
   */
  template <class F>
  void forEachCurrent(uint32_t gen, F f) const {
    std::unordered_map<uint32_t, const std::string*> keys;  // the current questions' keys, by id
    for (const auto& [key, question] : cache_)
      if (question.gen == gen && question.id != 0) keys.emplace(question.id, &key);
    for (const BlockSlot& s : blocks_.slots()) {
      if (s.question == 0 || s.scope == kClassScope) continue;
      const auto found = keys.find(s.question);
      if (found != keys.end() && !f(*found->second, templates_[s.value])) return;
    }
  }

  /** Question keys held (of any generation). */
  size_t questions() const { return cache_.size(); }
  /** Blocks held (of any generation: older ones until the next rebuild). */
  size_t blocks() const { return blocks_.size(); }
  /** The block table's slots. */
  size_t capacity() const { return blocks_.slots().size(); }

 private:
  /** `key`'s question on generation `gen`, started (a fresh id, no templates) when it is on an older one; nullptr when ids ran out and the cache started afresh. */
  Question* current(const std::string& key, uint32_t gen) {
    Question& question = cache_[key];
    if (question.gen != gen || question.id == 0) {
      if (lastQuestionId_ == UINT32_MAX) {
        // Ids would repeat: start afresh (after 4 billion generations of questions).
        clear();
        lastQuestionId_ = 0;
        return nullptr;
      }
      question = Question{};
      question.gen = gen;
      question.id = ++lastQuestionId_;
    }
    return &question;
  }

  void clear() {
    cache_.clear();
    blocks_.reset(0);
    templates_.clear();
  }

  /**
   * Makes room for one more block. When the table is half full or holds `maxBlocks_` blocks it is
   * rebuilt with the blocks of current questions only (older generations' are dropped, and their
   * templates), with room for as many again but never beyond `maxBlocks_`. The whole cache starts
   * afresh instead at `maxQuestions_` keys, or when the current blocks alone leave no room, or when
   * the table is at `maxBlocks_` and more than half of them are current (a rebuild would make room
   * for only a few more, and the next install would rebuild again).
   */
  void makeRoom(uint32_t gen) {
    if (!blocks_.full() && blocks_.size() < maxBlocks_ && cache_.size() < maxQuestions_) return;
    std::unordered_set<uint32_t> live;
    for (const auto& entry : cache_)
      if (entry.second.gen == gen && entry.second.id != 0) live.insert(entry.second.id);
    size_t kept = 0;
    for (const BlockSlot& s : blocks_.slots())
      if (s.question != 0 && live.count(s.question) != 0) kept++;
    if (cache_.size() >= maxQuestions_ || kept + 1 > maxBlocks_ || (blocks_.size() >= maxBlocks_ && kept * 2 + 1 > maxBlocks_)) {
      clear();
      return;
    }
    const std::vector<BlockSlot> old = blocks_.slots();
    std::vector<Template> templates;
    templates.reserve(kept);
    blocks_.reset(std::min(kept * 2 + 1, maxBlocks_));
    for (const BlockSlot& s : old) {
      if (s.question == 0 || live.count(s.question) == 0) continue;
      bool added;
      blocks_.insert(s.question, s.family, s.scope, {s.hi, s.lo}, static_cast<uint32_t>(templates.size()), added);
      templates.push_back(std::move(templates_[s.value]));
    }
    templates_ = std::move(templates);
  }

  size_t maxQuestions_;
  size_t maxBlocks_;
  std::unordered_map<std::string, Question> cache_;
  /** (question id, family, scope, masked client) → index in `templates_`. */
  BlockTable blocks_;
  std::vector<Template> templates_;
  /** The last question id given out (0 is the table's empty slot). */
  uint32_t lastQuestionId_;
};

}  // namespace gslbd
