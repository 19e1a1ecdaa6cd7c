// N-API bindings of the range index (node-addon-api for set-up, raw node_api.h for the two
// per-query calls, which saves 10-20 ns a call; docs/notes/lpm.md §3.5).
//
// open(buffer, layout) borrows a compiled location file held in a JS ArrayBuffer (no copy), checks
// every section lies inside it and the tilings are well formed (ascending starts, ids below the
// location count, a consistent direct index; a few ms in C++), and returns { lookup4, lookup6, lookup4Batch, lookup6Batch }, four functions bound to that table.
// The table keeps the ArrayBuffer alive until release() or until all its functions are garbage
// collected. release() (bound to the table as well) ends the table at once: every later lookup
// throws, and the reference to the buffer is dropped, so releaseBuffer(buffer) can then free the
// image without waiting for a collection (the geo capability retires a replaced table so, after
// the snapshot swap and the current turn: src/capabilities/geo/README.md "Reload").
//
// lookup6 takes no arguments: the caller writes the address into the instance's 16-byte scratch
// buffer (scratch6()) as four host-order uint32 words, which avoids a TypedArray argument per call.
#include <napi.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

#include "range_index.h"

namespace {

using gslbd::RangeIndex4;
using gslbd::RangeIndex6;

struct Table {
  RangeIndex4 v4;
  RangeIndex6 v6;
  napi_ref buffer = nullptr;  // null once released
  int owners = 0;             // bound functions still alive
  bool released = false;      // set by release(): v4/v6 point into memory that may be gone
};

struct Instance {
  Napi::Reference<Napi::ArrayBuffer> scratch;
  uint32_t* scratch_words = nullptr;
};

void ReleaseTable(napi_env env, void* data, void* /*hint*/) {
  auto* t = static_cast<Table*>(data);
  if (--t->owners > 0) return;
  if (t->buffer != nullptr) napi_delete_reference(env, t->buffer);
  delete t;
}

// The table a bound function was called on, or nullptr (with a JS Error thrown) once it was
// released: no lookup ever reads the memory of a released table.
Table* TableOf(napi_env env, napi_callback_info info, size_t* argc, napi_value* argv) {
  void* data = nullptr;
  napi_get_cb_info(env, info, argc, argv, nullptr, &data);
  auto* t = static_cast<Table*>(data);
  if (t->released) {
    napi_throw_error(env, "ERR_GSLBD_TABLE_RELEASED", "location table was released (a reload replaced it)");
    return nullptr;
  }
  return t;
}

// release() -> undefined: ends the table (idempotent). Later lookups throw; the buffer is no
// longer referenced by the table.
napi_value Release(napi_env env, napi_callback_info info) {
  void* data = nullptr;
  napi_get_cb_info(env, info, nullptr, nullptr, nullptr, &data);
  auto* t = static_cast<Table*>(data);
  if (!t->released) {
    t->released = true;
    t->v4 = RangeIndex4();
    t->v6 = RangeIndex6();
    napi_delete_reference(env, t->buffer);
    t->buffer = nullptr;
  }
  return nullptr;
}

napi_value Lookup4(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  Table* t = TableOf(env, info, &argc, argv);
  if (t == nullptr) return nullptr;
  uint32_t addr = 0;
  if (argc < 1 || napi_get_value_uint32(env, argv[0], &addr) != napi_ok) {
    napi_throw_type_error(env, nullptr, "lookup4 expects an unsigned 32-bit address");
    return nullptr;
  }
  napi_value out;
  napi_create_uint32(env, t->v4.Lookup(addr), &out);
  return out;
}

napi_value Lookup6(napi_env env, napi_callback_info info) {
  size_t argc = 0;
  Table* t = TableOf(env, info, &argc, nullptr);
  if (t == nullptr) return nullptr;
  Instance* inst = nullptr;
  napi_get_instance_data(env, reinterpret_cast<void**>(&inst));
  napi_value out;
  napi_create_uint32(env, t->v6.Lookup(inst->scratch_words), &out);
  return out;
}

// Unwraps a TypedArray argument of the expected type; throws and returns false otherwise.
template <typename T>
bool TypedArg(napi_env env, napi_value v, napi_typedarray_type want, T** data, size_t* length, const char* what) {
  bool is_typed = false;
  napi_is_typedarray(env, v, &is_typed);
  napi_typedarray_type type;
  void* raw = nullptr;
  if (!is_typed || napi_get_typedarray_info(env, v, &type, length, &raw, nullptr, nullptr) != napi_ok || type != want) {
    napi_throw_type_error(env, nullptr, what);
    return false;
  }
  *data = static_cast<T*>(raw);
  return true;
}

// lookupNBatch(addresses: Uint32Array, ids: Uint32Array, prefixes: Uint8Array) -> count
template <int Family>
napi_value LookupBatch(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  Table* t = TableOf(env, info, &argc, argv);
  if (t == nullptr) return nullptr;
  if (argc < 3) {
    napi_throw_type_error(env, nullptr, "batch lookup expects (addresses, ids, prefixes)");
    return nullptr;
  }
  uint32_t* addrs;
  uint32_t* ids;
  uint8_t* prefixes;
  size_t n_addr, n_ids, n_pre;
  if (!TypedArg(env, argv[0], napi_uint32_array, &addrs, &n_addr, "addresses must be a Uint32Array") ||
      !TypedArg(env, argv[1], napi_uint32_array, &ids, &n_ids, "ids must be a Uint32Array") ||
      !TypedArg(env, argv[2], napi_uint8_array, &prefixes, &n_pre, "prefixes must be a Uint8Array")) {
    return nullptr;
  }
  const size_t words = Family == 4 ? 1 : 4;
  if (n_addr % words != 0) {
    napi_throw_range_error(env, nullptr, "IPv6 addresses take 4 words each");
    return nullptr;
  }
  const size_t count = n_addr / words;
  if (n_ids < count || n_pre < count) {
    napi_throw_range_error(env, nullptr, "ids and prefixes must hold one entry per address");
    return nullptr;
  }
  if (count > 0) {
    if (Family == 4) {
      t->v4.LookupBatch(addrs, count, ids, prefixes);
    } else {
      t->v6.LookupBatch(addrs, count, ids, prefixes);
    }
  }
  napi_value out;
  napi_create_double(env, static_cast<double>(count), &out);
  return out;
}

// Reads layout[k] as uint32 or throws.
bool LayoutField(const Napi::Object& layout, const char* name, uint32_t* out) {
  Napi::Value v = layout.Get(name);
  if (!v.IsNumber()) {
    Napi::TypeError::New(layout.Env(), std::string("layout.") + name + " must be a number").ThrowAsJavaScriptException();
    return false;
  }
  double d = v.As<Napi::Number>().DoubleValue();
  if (!(d >= 0 && d <= 4294967295.0) || d != static_cast<double>(static_cast<uint32_t>(d))) {
    Napi::RangeError::New(layout.Env(), std::string("layout.") + name + " is out of range").ThrowAsJavaScriptException();
    return false;
  }
  *out = static_cast<uint32_t>(d);
  return true;
}

// Points `*view` at `count` uint32 values at byte `offset` of the buffer, after checking bounds
// and alignment.
bool Section(Napi::Env env, const uint8_t* base, size_t size, uint32_t offset, size_t count, const uint32_t** view,
             const char* what) {
  if (offset % 4 != 0 || offset > size || count > (size - offset) / 4) {
    Napi::RangeError::New(env, std::string("compiled location file: section ") + what + " lies outside the file")
        .ThrowAsJavaScriptException();
    return false;
  }
  *view = reinterpret_cast<const uint32_t*>(base + offset);
  return true;
}

bool Family(Napi::Env env, const Napi::Object& layout, const uint8_t* base, size_t size, const char* prefix,
            uint32_t words, uint32_t locations, const uint32_t** index, const uint32_t** starts, const uint32_t** ids, uint32_t* n,
            uint32_t* shift) {
  std::string p(prefix);
  uint32_t bits, index_off, starts_off, ids_off;
  if (!LayoutField(layout, (p + "Count").c_str(), n) || !LayoutField(layout, (p + "IndexBits").c_str(), &bits) ||
      !LayoutField(layout, (p + "IndexOffset").c_str(), &index_off) ||
      !LayoutField(layout, (p + "StartsOffset").c_str(), &starts_off) ||
      !LayoutField(layout, (p + "IdsOffset").c_str(), &ids_off)) {
    return false;
  }
  if (bits < 1 || bits > 24 || *n == 0 || *n >= (1u << 30)) {
    Napi::RangeError::New(env, "compiled location file: bad " + p + " index bits or range count")
        .ThrowAsJavaScriptException();
    return false;
  }
  const size_t entries = (static_cast<size_t>(1) << bits) + 1;
  if (!Section(env, base, size, index_off, entries, index, (p + " index").c_str()) ||
      !Section(env, base, size, starts_off, static_cast<size_t>(*n) * words, starts, (p + " starts").c_str()) ||
      !Section(env, base, size, ids_off, *n, ids, (p + " ids").c_str())) {
    return false;
  }
  const char* err = gslbd::ValidateIndex(*index, bits, *n);
  if (err == nullptr) err = gslbd::ValidateTiling(*starts, *ids, *n, words, locations);
  if (err != nullptr) {
    Napi::RangeError::New(env, "compiled location file: " + p + " " + err).ThrowAsJavaScriptException();
    return false;
  }
  *shift = 32 - bits;
  return true;
}

napi_value Bind(napi_env env, Table* t, const char* name, napi_callback cb) {
  napi_value fn;
  napi_create_function(env, name, NAPI_AUTO_LENGTH, cb, t, &fn);
  t->owners++;
  napi_add_finalizer(env, fn, t, ReleaseTable, nullptr, nullptr);
  return fn;
}

// open(buffer: ArrayBuffer, layout) -> { lookup4, lookup6, lookup4Batch, lookup6Batch, release }
Napi::Value Open(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsArrayBuffer() || !info[1].IsObject()) {
    Napi::TypeError::New(env, "open expects (ArrayBuffer, layout)").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  Napi::ArrayBuffer buffer = info[0].As<Napi::ArrayBuffer>();
  Napi::Object layout = info[1].As<Napi::Object>();
  const auto* base = static_cast<const uint8_t*>(buffer.Data());
  const size_t size = buffer.ByteLength();
  if (base == nullptr || reinterpret_cast<uintptr_t>(base) % 4 != 0) {
    Napi::RangeError::New(env, "compiled location file: buffer is empty or misaligned").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  uint32_t locations;
  if (!LayoutField(layout, "locationCount", &locations)) return env.Undefined();
  auto* t = new Table();
  if (!Family(env, layout, base, size, "v4", 1, locations, &t->v4.index, &t->v4.starts, &t->v4.ids, &t->v4.n, &t->v4.shift) ||
      !Family(env, layout, base, size, "v6", 4, locations, &t->v6.index, &t->v6.starts, &t->v6.ids, &t->v6.n, &t->v6.shift)) {
    delete t;
    return env.Undefined();
  }
  napi_create_reference(env, buffer, 1, &t->buffer);
  Napi::Object out = Napi::Object::New(env);
  out.Set("lookup4", Napi::Value(env, Bind(env, t, "lookup4", Lookup4)));
  out.Set("lookup6", Napi::Value(env, Bind(env, t, "lookup6", Lookup6)));
  out.Set("lookup4Batch", Napi::Value(env, Bind(env, t, "lookup4Batch", LookupBatch<4>)));
  out.Set("lookup6Batch", Napi::Value(env, Bind(env, t, "lookup6Batch", LookupBatch<6>)));
  out.Set("release", Napi::Value(env, Bind(env, t, "release", Release)));
  return out;
}

constexpr size_t kHugePage = size_t{2} << 20;

void Unmap(napi_env /*env*/, void* data, void* hint) {
  munmap(data, reinterpret_cast<size_t>(hint));
}

// hugePageBuffer(bytes) -> a zeroed ArrayBuffer of `bytes` in 2 MiB-aligned anonymous memory
// advised MADV_HUGEPAGE (transparent huge pages in `madvise` mode), or undefined when the kernel
// refuses the mapping or the advice. Unmapped when the ArrayBuffer is collected. The mapping ends
// at the next whole huge page when that adds at most half of one, else at the next ordinary page:
// the kernel backs only 2 MiB ranges lying wholly inside it with huge pages, so the tail then
// stays in ordinary pages and no memory is wasted.
Napi::Value HugePageBuffer(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsNumber()) {
    Napi::TypeError::New(env, "hugePageBuffer expects a byte count").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  const double want = info[0].As<Napi::Number>().DoubleValue();
  if (!(want >= 1 && want <= double{1ull << 40})) {
    Napi::RangeError::New(env, "hugePageBuffer: byte count out of range").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  const auto bytes = static_cast<size_t>(want);
  const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t whole = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  const size_t length = whole - bytes <= kHugePage / 2 ? whole : (bytes + page - 1) / page * page;
  // Map one huge page more than needed and trim both ends, so the start is 2 MiB-aligned.
  void* raw = mmap(nullptr, length + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return env.Undefined();
  const auto start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (start + kHugePage - 1) & ~(uintptr_t{kHugePage} - 1);
  if (aligned > start) munmap(raw, aligned - start);
  const uintptr_t tail = start + length + kHugePage - (aligned + length);
  if (tail > 0) munmap(reinterpret_cast<void*>(aligned + length), tail);
  void* data = reinterpret_cast<void*>(aligned);
  napi_value out;
  if (madvise(data, length, MADV_HUGEPAGE) != 0 ||
      napi_create_external_arraybuffer(env, data, bytes, Unmap, reinterpret_cast<void*>(length), &out) != napi_ok) {
    munmap(data, length);
    return env.Undefined();
  }
  return Napi::Value(env, out);
}

// releaseBuffer(buffer: ArrayBuffer) -> undefined: detaches the buffer, so its memory is freed now
// rather than when V8 collects it: V8 drops the backing store on detach (an ordinary buffer's
// memory is freed at once; a hugePageBuffer's is unmapped by its finalizer at the next turn of the
// event loop). Every view of it then has length 0, so JavaScript can never read freed memory.
// Throws for a buffer that cannot be detached (e.g. a WebAssembly memory).
Napi::Value ReleaseBuffer(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsArrayBuffer()) {
    Napi::TypeError::New(env, "releaseBuffer expects an ArrayBuffer").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  if (napi_detach_arraybuffer(env, info[0]) != napi_ok) {
    Napi::Error::New(env, "releaseBuffer: the buffer cannot be detached").ThrowAsJavaScriptException();
  }
  return env.Undefined();
}

// scratch6() -> the ArrayBuffer(16) that lookup6() reads.
Napi::Value Scratch6(const Napi::CallbackInfo& info) {
  return info.Env().GetInstanceData<Instance>()->scratch.Value();
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  auto* inst = new Instance();
  Napi::ArrayBuffer scratch = Napi::ArrayBuffer::New(env, 16);
  std::memset(scratch.Data(), 0, 16);
  inst->scratch = Napi::Persistent(scratch);
  inst->scratch_words = static_cast<uint32_t*>(scratch.Data());
  env.SetInstanceData(inst);
  exports.Set("open", Napi::Function::New(env, Open, "open"));
  exports.Set("scratch6", Napi::Function::New(env, Scratch6, "scratch6"));
  exports.Set("hugePageBuffer", Napi::Function::New(env, HugePageBuffer, "hugePageBuffer"));
  exports.Set("releaseBuffer", Napi::Function::New(env, ReleaseBuffer, "releaseBuffer"));
  exports.Set("abi", Napi::Number::New(env, 2));
  return exports;
}

}  // namespace

NODE_API_MODULE(gslbd_geo, Init)
