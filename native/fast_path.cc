// The standalone listener's native UDP path (src/doors/dns/README.md, "Fast path"): native threads
// read datagrams in batches (recvmmsg), answer queries whose reply the engine marked as the same
// for the client's whole block from a template (sendmmsg), and hand every other datagram to
// JavaScript in one call per batch through a thread-safe function. JavaScript answers them as the
// Node listener does, sends the replies through `reply()` and installs the reusable ones.
//
// Cache: question key (the query without ID and ECS address: flags, question with its name's letter
// case folded, OPT, ECS family and source prefix) → for each ECS scope seen, client block (address
// masked to the scope) → reply template. A hit patches the ID, the question name (the query's
// letter case: DNS 0x20) and the echoed ECS address into a copy of the template. The blocks of
// every question live in one flat table (native/block_table.h); a lookup prefetches the client's
// block at every scope the question has templates at, then takes the longest present. Every
// question carries the generation it was computed on; `bump()` (called when the engine publishes a
// snapshot or a state view) makes all of them stale at once, without stopping the threads: the
// first lookup after it misses.
//
// Class templates: a reply JavaScript marks as the same for every client of its location class (and
// family) is kept also under (question, family, class id), and the question remembers the class table
// (a record's `LocationClasses`, copied by `setClassTable`, native/class_table.h). On a block miss the
// client's class and ECS scope are looked up there and the class's template is replayed with the
// client's scope written into the ECS option's scope byte.
//
// Each template carries the answer class JavaScript gave it (what the answer adds to the engine's
// query counters); each thread counts its replays per class, and `classCounts()` sums them when
// `/metrics` is scraped, so a replayed query is counted as the one JavaScript would have answered.
//
// With response-rate limiting on (native/rate_limit.h) every datagram passes its source block's
// token bucket first, before the template lookup and before it could be handed to JavaScript: a
// limited one is dropped, or answered with an empty TC=1 reply every `slip`-th time.
#include <napi.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "class_table.h"
#include "fast_query.h"
#include "rate_limit.h"
#include "template_cache.h"

namespace {

using gslbd::ClassTable;
using gslbd::FastQuery;
using gslbd::parseFastQuery;
using gslbd::RateLimitConfig;
using gslbd::RateLimiter;
using gslbd::RateVerdict;
using gslbd::kMaxTemplate;
using gslbd::Template;

constexpr int kBatch = 64;
/** Datagrams longer than this are dropped (a query this long over UDP is not a query). */
constexpr size_t kRecvBuf = 4096;
/** Answer classes (what a replayed answer adds to the engine's query counters): ids below this, counted in chunks. */
constexpr size_t kClassChunk = 1024;
constexpr size_t kMaxClassChunks = 1024;
constexpr uint32_t kMaxClasses = kClassChunk * kMaxClassChunks;

struct Server;

/** One datagram handed to JavaScript. */
struct Miss {
  uint32_t off;
  uint32_t len;
  sockaddr_storage peer;
  socklen_t peerLen;
  bool fast;
  FastQuery q;
};

struct Batch {
  std::shared_ptr<Server> server;
  int fd;
  std::vector<uint8_t> data;
  std::vector<Miss> misses;
  /** Per datagram: 1 when it is a hit handed over for the query log (answered by JavaScript, logged there). */
  std::vector<uint8_t> sampled;
  bool anySampled = false;
};

/**
 * One thread's counters, on their own cache line so the threads never share one: written once
 * per batch by their thread, summed by `stats()` when `/metrics` is scraped.
 */
struct alignas(64) ThreadCounters {
  std::atomic<uint64_t> hits{0}, misses{0}, dropped{0}, sampled{0}, limited{0}, slipped{0}, classHits{0};
};

/**
 * One thread's replayed answers by answer class, so `classCounts()` can fold them into the
 * engine's per-zone, per-record, per-DC and per-rcode counters when `/metrics` is scraped. Only
 * the owning thread writes (a relaxed load and store: no locked instruction per hit); chunks of
 * `kClassChunk` counters are allocated by it on the first hit of a class in them and published
 * with release, so a scrape reads a missing chunk as zeros.
 */
class ClassCounts {
 public:
  ClassCounts() {
    for (auto& c : chunks_) c.store(nullptr, std::memory_order_relaxed);
  }
  ClassCounts(const ClassCounts&) = delete;
  ClassCounts& operator=(const ClassCounts&) = delete;
  ~ClassCounts() {
    for (auto& c : chunks_) delete[] c.load(std::memory_order_relaxed);
  }
  /** Owner thread only; `answerClass` < kMaxClasses. */
  void add(uint32_t answerClass) {
    std::atomic<uint64_t>* chunk = chunks_[answerClass / kClassChunk].load(std::memory_order_relaxed);
    if (chunk == nullptr) {
      chunk = new std::atomic<uint64_t>[kClassChunk];
      for (size_t i = 0; i < kClassChunk; i++) chunk[i].store(0, std::memory_order_relaxed);
      chunks_[answerClass / kClassChunk].store(chunk, std::memory_order_release);
    }
    std::atomic<uint64_t>& n = chunk[answerClass % kClassChunk];
    n.store(n.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  uint64_t get(uint32_t answerClass) const {
    const std::atomic<uint64_t>* chunk = chunks_[answerClass / kClassChunk].load(std::memory_order_acquire);
    return chunk == nullptr ? 0 : chunk[answerClass % kClassChunk].load(std::memory_order_relaxed);
  }

 private:
  std::atomic<std::atomic<uint64_t>*> chunks_[kMaxClassChunks];
};

struct Server {
  std::vector<int> fds;
  std::vector<std::thread> threads;
  std::atomic<bool> stopping{false};
  std::atomic<uint32_t> gen{1};
  std::vector<std::unique_ptr<ThreadCounters>> counters;  // one per thread, by socket index
  std::vector<std::unique_ptr<ClassCounts>> classCounts;   // one per thread, by socket index
  std::atomic<uint64_t> installed{0};
  /**
   * Hits handed to JavaScript for the query log: a hit is handed over when a 32-bit draw is below
   * this (rate × 2^32). Set at open and by `setSampleRate()` (a reload); each thread reads it once
   * per batch, so a new rate applies from the next batch on.
   */
  std::atomic<uint64_t> sampleBelow{0};
  std::shared_mutex lock;
  /** The templates (native/template_cache.h), under `lock`. */
  gslbd::TemplateCache cache;
  /** The records' location class tables JavaScript exported (`setClassTable`), by id (≥ 1), under `lock`. */
  std::unordered_map<uint32_t, std::shared_ptr<const ClassTable>> classTables;
  std::atomic<uint64_t> classInstalled{0};
  Napi::ThreadSafeFunction tsfn;
  bool closed = false;
  /** Response-rate limiting (null: off), shared by the threads of this address. */
  std::unique_ptr<RateLimiter> limiter;
};

/** The client of a parsed query: family index (0/1), 16 address bytes. */
void clientOf(const uint8_t* p, const FastQuery& q, const sockaddr_storage& peer, uint8_t& family, uint8_t addr[16], size_t& bytes) {
  std::memset(addr, 0, 16);
  if (q.ecsClient && q.ecsMapped) {
    family = 0;
    bytes = 4;
    std::memcpy(addr, p + q.keyEnd + 12, q.ecsAddrLen - 12);
    return;
  }
  if (q.ecsClient) {
    family = q.ecsFamily == 1 ? 0 : 1;
    bytes = family == 0 ? 4 : 16;
    std::memcpy(addr, p + q.keyEnd, q.ecsAddrLen);
    return;
  }
  if (peer.ss_family == AF_INET) {
    family = 0;
    bytes = 4;
    std::memcpy(addr, &reinterpret_cast<const sockaddr_in&>(peer).sin_addr, 4);
  } else {
    family = 1;
    bytes = 16;
    std::memcpy(addr, &reinterpret_cast<const sockaddr_in6&>(peer).sin6_addr, 16);
  }
}

/** The ECS scope byte of a reply for a client of class scope `scope` (`replyScope`, src/core/wire/ecsOption.ts: mapped addresses count from bit 96). */
inline uint8_t scopeByte(unsigned scope, bool mapped) {
  if (scope == 0) return 0;
  return static_cast<uint8_t>(mapped ? std::min(128u, 96 + scope) : scope);
}

/**
 * Writes the cached reply to `p` into `out` (returns its length) and its answer class, or 0 on a
 * miss; `byClass` is set when a class template answered (no template for the client's block, one
 * for its location class).
 */
size_t lookup(Server& s, const uint8_t* p, const FastQuery& q, const sockaddr_storage& peer, uint8_t* out, uint32_t& answerClass, bool& byClass) {
  uint8_t family, addr[16];
  size_t bytes;
  clientOf(p, q, peer, family, addr, bytes);
  // One key buffer per thread: its capacity is reused, so a lookup allocates nothing.
  thread_local std::string key;
  gslbd::questionKey(p, q, key);
  const uint32_t gen = s.gen.load(std::memory_order_acquire);
  std::shared_lock<std::shared_mutex> guard(s.lock);
  unsigned classScope = 0;
  const auto classOf = [&](uint32_t table, uint32_t& classId) {
    const auto it = s.classTables.find(table);
    if (it == s.classTables.end()) return false;
    classId = it->second->classOf(family, addr, classScope);
    return true;
  };
  const Template* t = s.cache.find(key, gen, family, addr, classOf, byClass);
  if (t == nullptr) return 0;
  answerClass = t->answerClass;
  std::memcpy(out, t->data(), t->len);
  out[0] = p[0];
  out[1] = p[1];
  // The question as asked, letter case included (install checked that the template echoes it at 12).
  std::memcpy(out + 12, p + 12, q.nameEnd - 12);
  std::memcpy(out + t->len - q.ecsAddrLen, p + q.keyEnd, q.ecsAddrLen);
  // A class template installed by a client of another block: this client's scope (install checked the byte's place).
  if (byClass && t->patchScope) out[t->len - q.ecsAddrLen - 1] = scopeByte(classScope, q.ecsMapped);
  return t->len;
}

/**
 * Stores `reply` as the template of the query's client block at `scope`, on the current generation,
 * counted in `answerClass` when replayed; with `classTable` ≠ 0 also as the question's class template
 * for class `classId` of that table, when the table gives the client that class and `scope` (else
 * JavaScript and the copy disagree: no class template).
 */
void install(Server& s, const uint8_t* p, const FastQuery& q, const sockaddr_storage& peer, const uint8_t* reply, size_t len, unsigned scope,
             uint32_t answerClass, uint32_t classTable = 0, uint32_t classId = 0) {
  if (len < q.nameEnd + q.ecsAddrLen || len > kMaxTemplate || answerClass >= kMaxClasses) return;
  // The reply must echo the ID and the question name (a hit writes the query's over them) and end
  // with the query's ECS address (the one option of the last record).
  if (reply[0] != p[0] || reply[1] != p[1]) return;
  if (std::memcmp(reply + 12, p + 12, q.nameEnd - 12) != 0) return;
  if (std::memcmp(reply + len - q.ecsAddrLen, p + q.keyEnd, q.ecsAddrLen) != 0) return;
  uint8_t family, addr[16];
  size_t bytes;
  clientOf(p, q, peer, family, addr, bytes);
  if (scope > bytes * 8) return;
  std::string key;
  gslbd::questionKey(p, q, key);
  const uint32_t gen = s.gen.load(std::memory_order_acquire);
  std::unique_lock<std::shared_mutex> guard(s.lock);
  Template* slot = s.cache.slot(key, gen, family, scope, addr);
  if (slot == nullptr) return;
  Template& t = *slot;
  t.assign(reply, len);
  t.answerClass = answerClass;
  t.patchScope = false;
  t.ecsLen = static_cast<uint8_t>(q.ecsAddrLen);
  std::memcpy(t.ecs, p + q.keyEnd, q.ecsAddrLen);
  t.peerFamily = static_cast<uint8_t>(peer.ss_family);
  if (peer.ss_family == AF_INET) std::memcpy(t.peer, &reinterpret_cast<const sockaddr_in&>(peer).sin_addr, 4);
  else std::memcpy(t.peer, &reinterpret_cast<const sockaddr_in6&>(peer).sin6_addr, 16);
  s.installed.fetch_add(1, std::memory_order_relaxed);
  if (classTable == 0) return;
  const auto table = s.classTables.find(classTable);
  if (table == s.classTables.end()) return;
  unsigned classScope;
  if (table->second->classOf(family, addr, classScope) != classId || classScope != scope) return;
  bool patch = false;
  if (q.ecsClient) {
    // The ECS option ends the reply: family (2), source prefix, scope, address. The scope byte is
    // this client's class scope (a positive answer) or 0 (a negative one, 0 for every client).
    const size_t at = len - q.ecsAddrLen - 1;
    if (at < 12 + 4 || reply[at - 1] != p[q.keyEnd - 2] || reply[at - 3] != p[q.keyEnd - 4] || reply[at - 2] != p[q.keyEnd - 3]) return;
    if (reply[at] == scopeByte(scope, q.ecsMapped)) patch = true;
    else if (reply[at] != 0) return;
  }
  Template copy = t;
  copy.patchScope = patch;
  Template* classSlot = s.cache.classSlot(key, gen, family, classTable, classId);
  if (classSlot == nullptr) return;
  *classSlot = std::move(copy);
  s.classInstalled.fetch_add(1, std::memory_order_relaxed);
}

void callJs(Napi::Env env, Napi::Function onBatch, Batch* batch) {
  std::unique_ptr<Batch> owned(batch);
  if (env == nullptr || batch->server->closed) return;
  const size_t n = batch->misses.size();
  Napi::Array packets = Napi::Array::New(env, n);
  Napi::Array peers = Napi::Array::New(env, n);
  Napi::Array ports = Napi::Array::New(env, n);
  for (size_t i = 0; i < n; i++) {
    const Miss& m = batch->misses[i];
    packets.Set(i, Napi::Buffer<uint8_t>::Copy(env, batch->data.data() + m.off, m.len));
    char text[INET6_ADDRSTRLEN] = "";
    unsigned port = 0;
    if (m.peer.ss_family == AF_INET) {
      const auto& a = reinterpret_cast<const sockaddr_in&>(m.peer);
      inet_ntop(AF_INET, &a.sin_addr, text, sizeof text);
      port = ntohs(a.sin_port);
    } else {
      const auto& a = reinterpret_cast<const sockaddr_in6&>(m.peer);
      inet_ntop(AF_INET6, &a.sin6_addr, text, sizeof text);
      port = ntohs(a.sin6_port);
    }
    peers.Set(i, Napi::String::New(env, text));
    ports.Set(i, Napi::Number::New(env, port));
  }
  Napi::Value sampled = env.Undefined();
  if (batch->anySampled) {
    Napi::Uint8Array flags = Napi::Uint8Array::New(env, n);
    std::memcpy(flags.Data(), batch->sampled.data(), n);
    sampled = flags;
  }
  Napi::External<Batch> handle = Napi::External<Batch>::New(env, owned.release(), [](Napi::Env, Batch* b) { delete b; });
  onBatch.Call({handle, packets, peers, ports, sampled});
}

/** xorshift32: the thread's draws for query-log sampling (not the engine's random source: JavaScript never sees these). */
inline uint32_t nextDraw(uint32_t& x) {
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  return x;
}

void serve(std::shared_ptr<Server> s, int fd, ThreadCounters* counters, ClassCounts* classCounts) {
  std::vector<uint8_t> in(kBatch * kRecvBuf), out(kBatch * kMaxTemplate);
  uint32_t draw = 0x9E3779B9u ^ static_cast<uint32_t>(fd * 2654435761u);
  if (draw == 0) draw = 1;
  mmsghdr msgs[kBatch], sends[kBatch];
  iovec iovs[kBatch], oiovs[kBatch];
  sockaddr_storage addrs[kBatch];
  for (int i = 0; i < kBatch; i++) {
    iovs[i] = {in.data() + i * kRecvBuf, kRecvBuf};
    msgs[i].msg_hdr = {};
    msgs[i].msg_hdr.msg_name = &addrs[i];
    msgs[i].msg_hdr.msg_namelen = sizeof addrs[i];
    msgs[i].msg_hdr.msg_iov = &iovs[i];
    msgs[i].msg_hdr.msg_iovlen = 1;
  }
  int got = 0;
  while (!s->stopping.load(std::memory_order_relaxed)) {
    // The kernel writes only the address length back (and msg_len, msg_flags): the last batch's headers are reset, not all 64.
    for (int i = 0; i < got; i++) msgs[i].msg_hdr.msg_namelen = sizeof addrs[i];
    got = recvmmsg(fd, msgs, kBatch, MSG_WAITFORONE, nullptr);
    if (got <= 0) {
      got = 0;
      continue;  // timeout (SO_RCVTIMEO), EINTR, or shutdown on close
    }
    int nsend = 0, nsampled = 0;
    // Replies are packed one after the other: a batch's replies touch a few cache lines, not a page each.
    size_t outPos = 0;
    Batch* batch = nullptr;
    const uint64_t sampleBelow = s->sampleBelow.load(std::memory_order_relaxed);
    int64_t now = 0;
    if (s->limiter) {
      timespec ts;
      clock_gettime(CLOCK_MONOTONIC, &ts);
      now = static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
    }
    uint64_t limited = 0, slipped = 0, classHits = 0;
    for (int i = 0; i < got; i++) {
      const uint8_t* p = in.data() + i * kRecvBuf;
      const size_t len = msgs[i].msg_len;
      if ((msgs[i].msg_hdr.msg_flags & MSG_TRUNC) != 0) {
        counters->dropped.fetch_add(1, std::memory_order_relaxed);
        continue;
      }
      if (s->limiter) {
        const RateVerdict verdict = s->limiter->check(addrs[i], now);
        if (verdict != RateVerdict::Pass) {
          uint8_t* o = out.data() + outPos;
          const size_t olen = verdict == RateVerdict::Slip ? gslbd::truncatedReply(p, len, o) : 0;
          if (olen == 0) {
            limited++;
            continue;
          }
          outPos += olen;
          oiovs[nsend] = {o, olen};
          sends[nsend].msg_hdr = {};
          sends[nsend].msg_hdr.msg_name = &addrs[i];
          sends[nsend].msg_hdr.msg_namelen = msgs[i].msg_hdr.msg_namelen;
          sends[nsend].msg_hdr.msg_iov = &oiovs[nsend];
          sends[nsend].msg_hdr.msg_iovlen = 1;
          nsend++;
          slipped++;
          continue;
        }
      }
      FastQuery q{};
      const bool fast = parseFastQuery(p, len, q);
      bool sampled = false;
      if (fast) {
        uint8_t* o = out.data() + outPos;
        uint32_t answerClass = 0;
        bool byClass = false;
        size_t olen = lookup(*s, p, q, addrs[i], o, answerClass, byClass);
        // A sampled hit goes to JavaScript, which answers it the same way and logs it.
        if (olen > 0 && sampleBelow > 0 && nextDraw(draw) < sampleBelow) sampled = true;
        else if (olen > 0) {
          outPos += olen;
          oiovs[nsend] = {o, olen};
          sends[nsend].msg_hdr = {};
          sends[nsend].msg_hdr.msg_name = &addrs[i];
          sends[nsend].msg_hdr.msg_namelen = msgs[i].msg_hdr.msg_namelen;
          sends[nsend].msg_hdr.msg_iov = &oiovs[nsend];
          sends[nsend].msg_hdr.msg_iovlen = 1;
          nsend++;
          if (byClass) classHits++;
          classCounts->add(answerClass);
          continue;
        }
      }
      if (batch == nullptr) {
        batch = new Batch{s, fd, {}, {}};
        batch->data.reserve(static_cast<size_t>(got) * 512);
      }
      Miss m{};
      m.off = static_cast<uint32_t>(batch->data.size());
      m.len = static_cast<uint32_t>(len);
      m.peer = addrs[i];
      m.peerLen = msgs[i].msg_hdr.msg_namelen;
      m.fast = fast;
      m.q = q;
      batch->data.insert(batch->data.end(), p, p + len);
      batch->misses.push_back(m);
      batch->sampled.push_back(sampled ? 1 : 0);
      if (sampled) {
        batch->anySampled = true;
        nsampled++;
      }
    }
    for (int done = 0; done < nsend;) {
      int sent = sendmmsg(fd, sends + done, nsend - done, 0);
      if (sent <= 0) break;  // the kernel's buffer is full: UDP may drop, as it would anyway
      done += sent;
    }
    if (nsend > 0) counters->hits.fetch_add(static_cast<uint64_t>(nsend) - slipped, std::memory_order_relaxed);
    if (classHits > 0) counters->classHits.fetch_add(classHits, std::memory_order_relaxed);
    if (limited > 0) counters->limited.fetch_add(limited, std::memory_order_relaxed);
    if (slipped > 0) counters->slipped.fetch_add(slipped, std::memory_order_relaxed);
    if (batch != nullptr) {
      counters->misses.fetch_add(batch->misses.size() - static_cast<size_t>(nsampled), std::memory_order_relaxed);
      if (nsampled > 0) counters->sampled.fetch_add(static_cast<uint64_t>(nsampled), std::memory_order_relaxed);
      if (s->tsfn.NonBlockingCall(batch, callJs) != napi_ok) {
        counters->dropped.fetch_add(batch->misses.size(), std::memory_order_relaxed);
        delete batch;
      }
    }
  }
}

Napi::Value Throw(Napi::Env env, const std::string& message) {
  Napi::Error::New(env, message).ThrowAsJavaScriptException();
  return env.Undefined();
}

std::shared_ptr<Server>* serverOf(const Napi::Value& v) {
  if (!v.IsExternal()) return nullptr;
  return v.As<Napi::External<std::shared_ptr<Server>>>().Data();
}

int openSocket(const std::string& address, unsigned port, bool reusePort, std::string& error) {
  sockaddr_storage ss{};
  socklen_t len;
  int family;
  auto& a4 = reinterpret_cast<sockaddr_in&>(ss);
  auto& a6 = reinterpret_cast<sockaddr_in6&>(ss);
  if (inet_pton(AF_INET, address.c_str(), &a4.sin_addr) == 1) {
    family = AF_INET;
    a4.sin_family = AF_INET;
    a4.sin_port = htons(static_cast<uint16_t>(port));
    len = sizeof a4;
  } else if (inet_pton(AF_INET6, address.c_str(), &a6.sin6_addr) == 1) {
    family = AF_INET6;
    a6.sin6_family = AF_INET6;
    a6.sin6_port = htons(static_cast<uint16_t>(port));
    len = sizeof a6;
  } else {
    error = "not an IP address: " + address;
    return -1;
  }
  int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    error = std::string("socket: ") + std::strerror(errno);
    return -1;
  }
  int one = 1;
  if (family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
  if (reusePort) setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
  timeval tv{0, 200000};  // the threads look at the stop flag at least this often
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  if (bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0) {
    error = "bind " + address + ":" + std::to_string(port) + ": " + std::strerror(errno);
    close(fd);
    return -1;
  }
  return fd;
}

// open(address, port, threads, onBatch, sampleRate[, rateLimit]) → server handle. Binds `threads` UDP sockets with SO_REUSEPORT.
// rateLimit: { rate, burst, slip, ipv4Prefix, ipv6Prefix, entries } (rate > 0) turns response-rate limiting on.
Napi::Value Open(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 5 || !info[0].IsString() || !info[1].IsNumber() || !info[2].IsNumber() || !info[3].IsFunction() || !info[4].IsNumber())
    return Throw(env, "open(address, port, threads, onBatch, sampleRate) expected");
  const std::string address = info[0].As<Napi::String>().Utf8Value();
  const int64_t port = info[1].As<Napi::Number>().Int64Value();
  const int64_t threads = info[2].As<Napi::Number>().Int64Value();
  const double rate = info[4].As<Napi::Number>().DoubleValue();
  if (port < 1 || port > 65535 || threads < 1 || threads > 256) return Throw(env, "port 1–65535 and threads 1–256 expected");
  if (!(rate >= 0 && rate <= 1)) return Throw(env, "sampleRate 0–1 expected");
  auto s = std::make_shared<Server>();
  if (info.Length() >= 6 && !info[5].IsUndefined()) {
    if (!info[5].IsObject()) return Throw(env, "rateLimit: object expected");
    Napi::Object o = info[5].As<Napi::Object>();
    const char* names[] = {"rate", "burst", "slip", "ipv4Prefix", "ipv6Prefix", "entries"};
    double v[6];
    for (int k = 0; k < 6; k++) {
      Napi::Value x = o.Get(names[k]);
      if (!x.IsNumber()) return Throw(env, std::string("rateLimit.") + names[k] + ": number expected");
      v[k] = x.As<Napi::Number>().DoubleValue();
    }
    if (!(v[0] > 0 && v[0] <= 1e7) || !(v[1] >= 1 && v[1] <= 1e7) || !(v[2] >= 0 && v[2] <= 10) || !(v[3] >= 0 && v[3] <= 32) ||
        !(v[4] >= 0 && v[4] <= 64) || !(v[5] >= 4 && v[5] <= (1 << 24)))
      return Throw(env, "rateLimit: rate 0–1e7 (exclusive of 0), burst 1–1e7, slip 0–10, ipv4Prefix 0–32, ipv6Prefix 0–64, entries 4–2^24 expected");
    RateLimitConfig c;
    c.ratePerSecond = v[0];
    c.burst = v[1];
    c.slip = static_cast<uint32_t>(v[2]);
    c.ipv4Prefix = static_cast<unsigned>(v[3]);
    c.ipv6Prefix = static_cast<unsigned>(v[4]);
    c.entries = static_cast<size_t>(v[5]);
    s->limiter = std::make_unique<RateLimiter>(c);
  }
  s->sampleBelow.store(static_cast<uint64_t>(rate * 4294967296.0));
  for (int64_t i = 0; i < threads; i++) {
    std::string error;
    int fd = openSocket(address, static_cast<unsigned>(port), threads > 1, error);
    if (fd < 0) {
      for (int open : s->fds) close(open);
      return Throw(env, error);
    }
    s->fds.push_back(fd);
  }
  s->tsfn = Napi::ThreadSafeFunction::New(env, info[3].As<Napi::Function>(), "gslbd fast path", 256, 1);
  for (size_t i = 0; i < s->fds.size(); i++) {
    s->counters.push_back(std::make_unique<ThreadCounters>());
    s->classCounts.push_back(std::make_unique<ClassCounts>());
  }
  for (size_t i = 0; i < s->fds.size(); i++) s->threads.emplace_back(serve, s, s->fds[i], s->counters[i].get(), s->classCounts[i].get());
  return Napi::External<std::shared_ptr<Server>>::New(env, new std::shared_ptr<Server>(s), [](Napi::Env, std::shared_ptr<Server>* p) { delete p; });
}

// reply(server, batch, replies: (Buffer|null)[], scopes: Int32Array, classes: Uint32Array[, classTables: Uint32Array,
// classIds: Uint32Array]): sends the replies, installs those with scope ≥ 0 as templates counted in their answer class, and
// those with a class table id ≠ 0 also as the class template of their client's location class.
Napi::Value Reply(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto* sp = info.Length() >= 5 ? serverOf(info[0]) : nullptr;
  if (sp == nullptr || !info[1].IsExternal() || !info[2].IsArray() || !info[3].IsTypedArray() || !info[4].IsTypedArray())
    return Throw(env, "reply(server, batch, replies, scopes, classes) expected");
  Server& s = **sp;
  Batch* batch = info[1].As<Napi::External<Batch>>().Data();
  Napi::Array replies = info[2].As<Napi::Array>();
  Napi::TypedArray ta = info[3].As<Napi::TypedArray>();
  if (ta.TypedArrayType() != napi_int32_array) return Throw(env, "scopes: Int32Array expected");
  Napi::Int32Array scopes = ta.As<Napi::Int32Array>();
  Napi::TypedArray ca = info[4].As<Napi::TypedArray>();
  if (ca.TypedArrayType() != napi_uint32_array) return Throw(env, "classes: Uint32Array expected");
  Napi::Uint32Array classes = ca.As<Napi::Uint32Array>();
  const size_t n = batch->misses.size();
  if (replies.Length() != n || scopes.ElementLength() != n || classes.ElementLength() != n)
    return Throw(env, "one reply, one scope and one class per datagram expected");
  const uint32_t* tables = nullptr;
  const uint32_t* classIds = nullptr;
  if (info.Length() >= 7 && !info[5].IsUndefined()) {
    if (!info[5].IsTypedArray() || info[5].As<Napi::TypedArray>().TypedArrayType() != napi_uint32_array || !info[6].IsTypedArray() ||
        info[6].As<Napi::TypedArray>().TypedArrayType() != napi_uint32_array)
      return Throw(env, "classTables, classIds: Uint32Array expected");
    Napi::Uint32Array t = info[5].As<Napi::Uint32Array>();
    Napi::Uint32Array c = info[6].As<Napi::Uint32Array>();
    if (t.ElementLength() != n || c.ElementLength() != n) return Throw(env, "one class table and one class id per datagram expected");
    tables = t.Data();
    classIds = c.Data();
  }
  if (s.closed) return env.Undefined();
  std::vector<mmsghdr> sends;
  std::vector<iovec> iovs(n);
  sends.reserve(n);
  for (size_t i = 0; i < n; i++) {
    Napi::Value r = replies.Get(i);
    if (!r.IsBuffer()) continue;
    Napi::Buffer<uint8_t> buf = r.As<Napi::Buffer<uint8_t>>();
    Miss& m = batch->misses[i];
    const uint8_t* p = batch->data.data() + m.off;
    if (m.fast && scopes[i] >= 0)
      install(s, p, m.q, m.peer, buf.Data(), buf.Length(), static_cast<unsigned>(scopes[i]), classes[i], tables ? tables[i] : 0, classIds ? classIds[i] : 0);
    iovs[i] = {buf.Data(), buf.Length()};
    mmsghdr h{};
    h.msg_hdr.msg_name = &m.peer;
    h.msg_hdr.msg_namelen = m.peerLen;
    h.msg_hdr.msg_iov = &iovs[i];
    h.msg_hdr.msg_iovlen = 1;
    sends.push_back(h);
  }
  for (size_t done = 0; done < sends.size();) {
    int sent = sendmmsg(batch->fd, sends.data() + done, static_cast<unsigned>(sends.size() - done), 0);
    if (sent <= 0) break;
    done += static_cast<size_t>(sent);
  }
  return env.Undefined();
}

// replyOne(server, batch, index, buffer): sends one reply that settled later (never installed).
Napi::Value ReplyOne(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto* sp = info.Length() >= 4 ? serverOf(info[0]) : nullptr;
  if (sp == nullptr || !info[1].IsExternal() || !info[2].IsNumber() || !info[3].IsBuffer()) return Throw(env, "replyOne(server, batch, index, buffer) expected");
  Batch* batch = info[1].As<Napi::External<Batch>>().Data();
  const int64_t i = info[2].As<Napi::Number>().Int64Value();
  if (i < 0 || static_cast<size_t>(i) >= batch->misses.size()) return Throw(env, "index out of range");
  if ((*sp)->closed) return env.Undefined();
  Napi::Buffer<uint8_t> buf = info[3].As<Napi::Buffer<uint8_t>>();
  const Miss& m = batch->misses[static_cast<size_t>(i)];
  sendto(batch->fd, buf.Data(), buf.Length(), 0, reinterpret_cast<const sockaddr*>(&m.peer), m.peerLen);
  return env.Undefined();
}

// templates(server, max) → [query: Buffer, peer: string][]: for at most `max` templates of the current generation, the query
// that installed it (ID 0, its name's letter case folded as in the key) and its sender, so that JavaScript can answer them again on a new snapshot and install the replies.
Napi::Value Templates(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto* sp = info.Length() >= 2 ? serverOf(info[0]) : nullptr;
  if (sp == nullptr || !info[1].IsNumber()) return Throw(env, "templates(server, max) expected");
  const int64_t max = info[1].As<Napi::Number>().Int64Value();
  Server& s = **sp;
  Napi::Array out = Napi::Array::New(env);
  const uint32_t gen = s.gen.load(std::memory_order_acquire);
  std::shared_lock<std::shared_mutex> guard(s.lock);
  uint32_t n = 0;
  s.cache.forEachCurrent(gen, [&](const std::string& key, const Template& t) {
    if (n >= max) return false;
    Napi::Buffer<uint8_t> query = Napi::Buffer<uint8_t>::New(env, 2 + key.size() + t.ecsLen);
    query.Data()[0] = 0;
    query.Data()[1] = 0;
    std::memcpy(query.Data() + 2, key.data(), key.size());
    std::memcpy(query.Data() + 2 + key.size(), t.ecs, t.ecsLen);
    char text[INET6_ADDRSTRLEN] = "";
    inet_ntop(t.peerFamily, t.peer, text, sizeof text);
    Napi::Array pair = Napi::Array::New(env, 2);
    pair.Set(0u, query);
    pair.Set(1u, Napi::String::New(env, text));
    out.Set(n++, pair);
    return true;
  });
  return out;
}

// install(server, query, peer, reply, scope, class[, classTable, classId]) → boolean: keeps `reply` as the template of `query` from
// `peer` on the current generation (what `reply()` does for a batch's datagram), and as its class template with a class table id ≠ 0;
// false when the query is outside the native subset or the reply does not fit.
Napi::Value Install(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto* sp = info.Length() >= 6 ? serverOf(info[0]) : nullptr;
  if (sp == nullptr || !info[1].IsBuffer() || !info[2].IsString() || !info[3].IsBuffer() || !info[4].IsNumber() || !info[5].IsNumber())
    return Throw(env, "install(server, query, peer, reply, scope, class) expected");
  Napi::Buffer<uint8_t> query = info[1].As<Napi::Buffer<uint8_t>>();
  Napi::Buffer<uint8_t> reply = info[3].As<Napi::Buffer<uint8_t>>();
  const int64_t scope = info[4].As<Napi::Number>().Int64Value();
  const int64_t answerClass = info[5].As<Napi::Number>().Int64Value();
  sockaddr_storage peer{};
  const std::string text = info[2].As<Napi::String>().Utf8Value();
  if (inet_pton(AF_INET, text.c_str(), &reinterpret_cast<sockaddr_in&>(peer).sin_addr) == 1) peer.ss_family = AF_INET;
  else if (inet_pton(AF_INET6, text.c_str(), &reinterpret_cast<sockaddr_in6&>(peer).sin6_addr) == 1) peer.ss_family = AF_INET6;
  else return Throw(env, "peer: an IP address expected");
  FastQuery q{};
  if (scope < 0 || scope > 128 || answerClass < 0 || answerClass >= kMaxClasses || (*sp)->closed || !parseFastQuery(query.Data(), query.Length(), q))
    return Napi::Boolean::New(env, false);
  uint32_t classTable = 0, classId = 0;
  if (info.Length() >= 8 && info[6].IsNumber() && info[7].IsNumber()) {
    const int64_t t = info[6].As<Napi::Number>().Int64Value(), c = info[7].As<Napi::Number>().Int64Value();
    if (t < 0 || t > UINT32_MAX - 1 || c < 0 || c > UINT32_MAX) return Napi::Boolean::New(env, false);
    classTable = static_cast<uint32_t>(t);
    classId = static_cast<uint32_t>(c);
  }
  const uint64_t before = (*sp)->installed.load();
  install(**sp, query.Data(), q, peer, reply.Data(), reply.Length(), static_cast<unsigned>(scope), static_cast<uint32_t>(answerClass), classTable, classId);
  return Napi::Boolean::New(env, (*sp)->installed.load() != before);
}

// bump(server): a new generation; every template installed before it is stale from now on.
Napi::Value Bump(const Napi::CallbackInfo& info) {
  auto* sp = info.Length() >= 1 ? serverOf(info[0]) : nullptr;
  if (sp == nullptr) return Throw(info.Env(), "bump(server) expected");
  return Napi::Number::New(info.Env(), (*sp)->gen.fetch_add(1, std::memory_order_acq_rel) + 1);
}

// setSampleRate(server, rate): the fraction of template hits handed to JavaScript for the query log from the threads' next batch on.
Napi::Value SetSampleRate(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto* sp = info.Length() >= 2 ? serverOf(info[0]) : nullptr;
  if (sp == nullptr || !info[1].IsNumber()) return Throw(env, "setSampleRate(server, rate) expected");
  const double rate = info[1].As<Napi::Number>().DoubleValue();
  if (!(rate >= 0 && rate <= 1)) return Throw(env, "sampleRate 0–1 expected");
  (*sp)->sampleBelow.store(static_cast<uint64_t>(rate * 4294967296.0), std::memory_order_relaxed);
  return env.Undefined();
}

// stats(server) → { hits, misses, sampled, dropped, limited, slipped, installed }: the threads' counters summed.
Napi::Value Stats(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto* sp = info.Length() >= 1 ? serverOf(info[0]) : nullptr;
  if (sp == nullptr) return Throw(env, "stats(server) expected");
  Server& s = **sp;
  uint64_t hits = 0, misses = 0, dropped = 0, sampled = 0, limited = 0, slipped = 0, classHits = 0;
  for (const auto& c : s.counters) {
    limited += c->limited.load(std::memory_order_relaxed);
    slipped += c->slipped.load(std::memory_order_relaxed);
    hits += c->hits.load(std::memory_order_relaxed);
    misses += c->misses.load(std::memory_order_relaxed);
    dropped += c->dropped.load(std::memory_order_relaxed);
    sampled += c->sampled.load(std::memory_order_relaxed);
    classHits += c->classHits.load(std::memory_order_relaxed);
  }
  Napi::Object o = Napi::Object::New(env);
  o.Set("hits", Napi::Number::New(env, static_cast<double>(hits)));
  o.Set("misses", Napi::Number::New(env, static_cast<double>(misses)));
  o.Set("sampled", Napi::Number::New(env, static_cast<double>(sampled)));
  o.Set("dropped", Napi::Number::New(env, static_cast<double>(dropped)));
  o.Set("limited", Napi::Number::New(env, static_cast<double>(limited)));
  o.Set("slipped", Napi::Number::New(env, static_cast<double>(slipped)));
  o.Set("installed", Napi::Number::New(env, static_cast<double>(s.installed.load())));
  o.Set("classHits", Napi::Number::New(env, static_cast<double>(classHits)));
  o.Set("classInstalled", Napi::Number::New(env, static_cast<double>(s.classInstalled.load())));
  return o;
}

// classCounts(server, out: Float64Array): out[c] = the template hits of answer class c answered natively since open, summed over the threads.
Napi::Value ClassCountsOf(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto* sp = info.Length() >= 2 ? serverOf(info[0]) : nullptr;
  if (sp == nullptr || !info[1].IsTypedArray() || info[1].As<Napi::TypedArray>().TypedArrayType() != napi_float64_array)
    return Throw(env, "classCounts(server, out: Float64Array) expected");
  Napi::Float64Array out = info[1].As<Napi::Float64Array>();
  const size_t n = std::min<size_t>(out.ElementLength(), kMaxClasses);
  for (size_t c = 0; c < n; c++) {
    uint64_t sum = 0;
    for (const auto& t : (*sp)->classCounts) sum += t->get(static_cast<uint32_t>(c));
    out[c] = static_cast<double>(sum);
  }
  return env.Undefined();
}

/** The Uint32Array argument `i`, or nullptr. */
const uint32_t* uint32Arg(const Napi::CallbackInfo& info, size_t i, size_t& n) {
  if (info.Length() <= i || !info[i].IsTypedArray() || info[i].As<Napi::TypedArray>().TypedArrayType() != napi_uint32_array) return nullptr;
  Napi::Uint32Array a = info[i].As<Napi::Uint32Array>();
  n = a.ElementLength();
  return a.Data();
}

// setClassTable(server, id, v4starts, v4ids, v6starts, v6ids): copies one record's location class tables (RangeTable4/RangeTable6
// arrays, v6starts 4 words per start) into native memory as table `id` (1 – 2^32 − 2), replacing the one of that id. The copy and
// its index are built before the server's lock is taken; the swap holds it for a pointer move.
Napi::Value SetClassTable(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto* sp = info.Length() >= 6 ? serverOf(info[0]) : nullptr;
  size_t n4 = 0, i4 = 0, w6 = 0, i6 = 0;
  const uint32_t* v4starts = uint32Arg(info, 2, n4);
  const uint32_t* v4ids = uint32Arg(info, 3, i4);
  const uint32_t* v6starts = uint32Arg(info, 4, w6);
  const uint32_t* v6ids = uint32Arg(info, 5, i6);
  if (sp == nullptr || !info[1].IsNumber() || !v4starts || !v4ids || !v6starts || !v6ids)
    return Throw(env, "setClassTable(server, id, v4starts, v4ids, v6starts, v6ids: Uint32Array) expected");
  const int64_t id = info[1].As<Napi::Number>().Int64Value();
  if (id < 1 || id > static_cast<int64_t>(UINT32_MAX) - 1) return Throw(env, "id 1 – 2^32 − 2 expected");
  auto table = std::make_shared<ClassTable>();
  const char* error = nullptr;
  if (!table->build(v4starts, n4, v4ids, i4, v6starts, w6, v6ids, i6, error)) return Throw(env, std::string("setClassTable: ") + error);
  std::shared_ptr<const ClassTable> old;
  {
    std::unique_lock<std::shared_mutex> guard((*sp)->lock);
    auto& slot = (*sp)->classTables[static_cast<uint32_t>(id)];
    old = std::move(slot);
    slot = std::move(table);
  }
  return env.Undefined();
}

// dropClassTable(server, id): forgets table `id`; class templates keyed by it are no longer found.
Napi::Value DropClassTable(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto* sp = info.Length() >= 2 ? serverOf(info[0]) : nullptr;
  if (sp == nullptr || !info[1].IsNumber()) return Throw(env, "dropClassTable(server, id) expected");
  const int64_t id = info[1].As<Napi::Number>().Int64Value();
  std::shared_ptr<const ClassTable> old;
  {
    std::unique_lock<std::shared_mutex> guard((*sp)->lock);
    const auto it = (*sp)->classTables.find(static_cast<uint32_t>(id));
    if (it == (*sp)->classTables.end()) return env.Undefined();
    old = std::move(it->second);
    (*sp)->classTables.erase(it);
  }
  return env.Undefined();
}

// classLookup(server, id, addresses: Uint32Array, families: Uint8Array, out: Float64Array): for tests — per address (4 words,
// IPv4 in the first, family 4 or 6) `classId * 65536 + prefix * 256 + scope`, scope as the replay computes it; −1 without table `id`.
Napi::Value ClassLookup(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto* sp = info.Length() >= 5 ? serverOf(info[0]) : nullptr;
  size_t words = 0;
  const uint32_t* addrs = uint32Arg(info, 2, words);
  if (sp == nullptr || !info[1].IsNumber() || !addrs || !info[3].IsTypedArray() || info[3].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array ||
      !info[4].IsTypedArray() || info[4].As<Napi::TypedArray>().TypedArrayType() != napi_float64_array)
    return Throw(env, "classLookup(server, id, addresses: Uint32Array, families: Uint8Array, out: Float64Array) expected");
  Napi::Uint8Array families = info[3].As<Napi::Uint8Array>();
  Napi::Float64Array out = info[4].As<Napi::Float64Array>();
  const size_t n = families.ElementLength();
  if (words != n * 4 || out.ElementLength() != n) return Throw(env, "4 words, one family and one result per address expected");
  const int64_t id = info[1].As<Napi::Number>().Int64Value();
  std::shared_lock<std::shared_mutex> guard((*sp)->lock);
  const auto it = (*sp)->classTables.find(static_cast<uint32_t>(id));
  for (size_t i = 0; i < n; i++) {
    if (it == (*sp)->classTables.end()) {
      out[i] = -1;
      continue;
    }
    uint8_t addr[16];
    for (int w = 0; w < 4; w++) {
      const uint32_t v = addrs[i * 4 + w];
      addr[w * 4] = static_cast<uint8_t>(v >> 24);
      addr[w * 4 + 1] = static_cast<uint8_t>(v >> 16);
      addr[w * 4 + 2] = static_cast<uint8_t>(v >> 8);
      addr[w * 4 + 3] = static_cast<uint8_t>(v);
    }
    const uint8_t family = families[i] == 4 ? 0 : 1;
    unsigned prefix, scope;
    const uint32_t classId = family == 0 ? it->second->lookup4(addrs[i * 4], prefix) : it->second->lookup6(gslbd::address128(addr), prefix);
    it->second->classOf(family, addr, scope);
    out[i] = static_cast<double>(classId) * 65536 + prefix * 256 + scope;
  }
  return env.Undefined();
}

// close(server): stops the threads (at most one receive timeout), closes the sockets.
Napi::Value Close(const Napi::CallbackInfo& info) {
  auto* sp = info.Length() >= 1 ? serverOf(info[0]) : nullptr;
  if (sp == nullptr) return Throw(info.Env(), "close(server) expected");
  Server& s = **sp;
  if (s.closed) return info.Env().Undefined();
  s.stopping.store(true);
  for (int fd : s.fds) shutdown(fd, SHUT_RDWR);
  for (std::thread& t : s.threads) t.join();
  for (int fd : s.fds) close(fd);
  s.closed = true;
  s.tsfn.Release();
  return info.Env().Undefined();
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("open", Napi::Function::New(env, Open, "open"));
  exports.Set("reply", Napi::Function::New(env, Reply, "reply"));
  exports.Set("replyOne", Napi::Function::New(env, ReplyOne, "replyOne"));
  exports.Set("bump", Napi::Function::New(env, Bump, "bump"));
  exports.Set("templates", Napi::Function::New(env, Templates, "templates"));
  exports.Set("install", Napi::Function::New(env, Install, "install"));
  exports.Set("setSampleRate", Napi::Function::New(env, SetSampleRate, "setSampleRate"));
  exports.Set("stats", Napi::Function::New(env, Stats, "stats"));
  exports.Set("classCounts", Napi::Function::New(env, ClassCountsOf, "classCounts"));
  exports.Set("close", Napi::Function::New(env, Close, "close"));
  exports.Set("setClassTable", Napi::Function::New(env, SetClassTable, "setClassTable"));
  exports.Set("dropClassTable", Napi::Function::New(env, DropClassTable, "dropClassTable"));
  exports.Set("classLookup", Napi::Function::New(env, ClassLookup, "classLookup"));
  exports.Set("abi", Napi::Number::New(env, 8));
  return exports;
}

}  // namespace

NODE_API_MODULE(gslbd_fastpath, Init)
