// Raw ICMP echo sockets for Node.js (the agent's ICMP probes, src/agent/probes/icmpTrain.ts, and the
// test bed's userspace echo responder): Node has no raw socket and no access to a datagram's TTL.
//
// One IcmpSocket per family: a raw socket (needs CAP_NET_RAW) filtered to echo replies (and requests),
// non-blocking, watched by a uv_poll handle on Node's own event loop — so nothing blocks and no
// thread is used. Every datagram read is handed to the JS callback with
//   - the received TTL (IPv4: the IP header a raw socket delivers; IPv6: the IPV6_HOPLIMIT control
//     message, RFC 3542 §6.3), from which the caller infers hops;
//   - the kernel's receive timestamp (SO_TIMESTAMPNS, CLOCK_REALTIME), so an event loop that runs
//     late does not stretch the measured RTT; send() returns the same clock read just before sendto.
#include <napi.h>
#include <uv.h>

#include <arpa/inet.h>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <ctime>
#include <linux/icmp.h>
#include <memory>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string>
#include <sys/socket.h>
#include <unistd.h>

namespace {

double RealtimeMs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// RFC 1071 Internet checksum (ICMPv4; the kernel computes ICMPv6's, RFC 3542 §3.1).
uint16_t Checksum(const uint8_t* data, size_t len) {
  uint32_t sum = 0;
  for (size_t i = 0; i + 1 < len; i += 2) sum += static_cast<uint32_t>(data[i] << 8 | data[i + 1]);
  if (len % 2 == 1) sum += static_cast<uint32_t>(data[len - 1] << 8);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum & 0xffff);
}

constexpr size_t kMaxPayload = 1400;

class IcmpSocket : public Napi::ObjectWrap<IcmpSocket> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "IcmpSocket", {InstanceMethod<&IcmpSocket::Send>("send"), InstanceMethod<&IcmpSocket::Close>("close")});
  }

  // new IcmpSocket(family: 4 | 6, onMessage(from, type, code, id, seq, ttl, receivedAtMs, payload), requests = false):
  // echo replies only, or (a responder) echo requests too — on loopback a prober would read its own requests.
  explicit IcmpSocket(const Napi::CallbackInfo& info) : Napi::ObjectWrap<IcmpSocket>(info) {
    Napi::Env env = info.Env();
    if (info.Length() < 2 || !info[0].IsNumber() || !info[1].IsFunction()) {
      Napi::TypeError::New(env, "new IcmpSocket(family: 4 | 6, onMessage: function)").ThrowAsJavaScriptException();
      return;
    }
    int family = info[0].As<Napi::Number>().Int32Value();
    if (family != 4 && family != 6) {
      Napi::RangeError::New(env, "family must be 4 or 6").ThrowAsJavaScriptException();
      return;
    }
    v6_ = family == 6;
    bool requests = info.Length() > 2 && info[2].ToBoolean().Value();
    fd_ = socket(v6_ ? AF_INET6 : AF_INET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, v6_ ? static_cast<int>(IPPROTO_ICMPV6) : static_cast<int>(IPPROTO_ICMP));
    if (fd_ < 0) {
      Napi::Error::New(env, std::string("raw ICMP socket: ") + std::strerror(errno) + " (needs CAP_NET_RAW)").ThrowAsJavaScriptException();
      return;
    }
    int on = 1;
    bool ok = setsockopt(fd_, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on) == 0;
    // Replies of many trains arrive in bursts: a 4 MiB receive buffer (beyond rmem_max with
    // CAP_NET_ADMIN, else as much as rmem_max allows) keeps a burst from overflowing it.
    int rcvbuf = 4 << 20;
    if (setsockopt(fd_, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof rcvbuf) != 0) setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    if (v6_) {
      icmp6_filter filter{};
      ICMP6_FILTER_SETBLOCKALL(&filter);
      if (requests) ICMP6_FILTER_SETPASS(ICMP6_ECHO_REQUEST, &filter);
      ICMP6_FILTER_SETPASS(ICMP6_ECHO_REPLY, &filter);
      ok = ok && setsockopt(fd_, IPPROTO_ICMPV6, ICMP6_FILTER, &filter, sizeof filter) == 0;
      ok = ok && setsockopt(fd_, IPPROTO_IPV6, IPV6_RECVHOPLIMIT, &on, sizeof on) == 0;
    } else {
      // ICMP_FILTER (Linux raw(7)): a set bit blocks that type; keep echo reply (0) and, for a responder, request (8).
      icmp_filter filter{~((1U << ICMP_ECHOREPLY) | (requests ? 1U << ICMP_ECHO : 0U))};
      ok = ok && setsockopt(fd_, SOL_RAW, ICMP_FILTER, &filter, sizeof filter) == 0;
    }
    if (!ok) {
      int err = errno;
      close(fd_);
      fd_ = -1;
      Napi::Error::New(env, std::string("setsockopt: ") + std::strerror(err)).ThrowAsJavaScriptException();
      return;
    }
    uv_loop_t* loop = nullptr;
    napi_get_uv_event_loop(env, &loop);
    poll_ = new uv_poll_t;
    if (uv_poll_init(loop, poll_, fd_) != 0) {
      delete poll_;
      poll_ = nullptr;
      close(fd_);
      fd_ = -1;
      Napi::Error::New(env, "uv_poll_init failed").ThrowAsJavaScriptException();
      return;
    }
    poll_->data = this;
    onMessage_ = Napi::Persistent(info[1].As<Napi::Function>());
    context_ = std::make_unique<Napi::AsyncContext>(env, "gslbd:icmp");
    env_ = env;
    uv_poll_start(poll_, UV_READABLE, &IcmpSocket::OnReadable);
    // Open sockets stay alive (and keep the loop alive) until close(), like Node's own sockets.
    Ref();
  }

  ~IcmpSocket() override { Shutdown(); }

 private:
  // send(address: string, type, code, id, seq, payload: Buffer) → realtime ms just before sendto.
  Napi::Value Send(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (fd_ < 0) {
      Napi::Error::New(env, "the socket is closed").ThrowAsJavaScriptException();
      return env.Undefined();
    }
    if (info.Length() < 6 || !info[0].IsString() || !info[1].IsNumber() || !info[2].IsNumber() || !info[3].IsNumber() || !info[4].IsNumber() ||
        !info[5].IsBuffer()) {
      Napi::TypeError::New(env, "send(address, type, code, id, seq, payload: Buffer)").ThrowAsJavaScriptException();
      return env.Undefined();
    }
    std::string address = info[0].As<Napi::String>().Utf8Value();
    auto payload = info[5].As<Napi::Buffer<uint8_t>>();
    if (payload.Length() > kMaxPayload) {
      Napi::RangeError::New(env, "payload too large").ThrowAsJavaScriptException();
      return env.Undefined();
    }
    uint8_t packet[8 + kMaxPayload];
    packet[0] = static_cast<uint8_t>(info[1].As<Napi::Number>().Uint32Value());
    packet[1] = static_cast<uint8_t>(info[2].As<Napi::Number>().Uint32Value());
    packet[2] = packet[3] = 0;
    uint32_t id = info[3].As<Napi::Number>().Uint32Value();
    uint32_t seq = info[4].As<Napi::Number>().Uint32Value();
    packet[4] = static_cast<uint8_t>(id >> 8);
    packet[5] = static_cast<uint8_t>(id);
    packet[6] = static_cast<uint8_t>(seq >> 8);
    packet[7] = static_cast<uint8_t>(seq);
    if (payload.Length() > 0) std::memcpy(packet + 8, payload.Data(), payload.Length());
    size_t len = 8 + payload.Length();
    sockaddr_storage to{};
    socklen_t toLen;
    if (v6_) {
      auto* a = reinterpret_cast<sockaddr_in6*>(&to);
      a->sin6_family = AF_INET6;
      toLen = sizeof *a;
      if (inet_pton(AF_INET6, address.c_str(), &a->sin6_addr) != 1) {
        Napi::TypeError::New(env, "not an IPv6 address: " + address).ThrowAsJavaScriptException();
        return env.Undefined();
      }
    } else {
      auto* a = reinterpret_cast<sockaddr_in*>(&to);
      a->sin_family = AF_INET;
      toLen = sizeof *a;
      if (inet_pton(AF_INET, address.c_str(), &a->sin_addr) != 1) {
        Napi::TypeError::New(env, "not an IPv4 address: " + address).ThrowAsJavaScriptException();
        return env.Undefined();
      }
      uint16_t sum = Checksum(packet, len);
      packet[2] = static_cast<uint8_t>(sum >> 8);
      packet[3] = static_cast<uint8_t>(sum);
    }
    double sentAt = RealtimeMs();
    if (sendto(fd_, packet, len, 0, reinterpret_cast<sockaddr*>(&to), toLen) < 0) {
      Napi::Error::New(env, std::string("sendto ") + address + ": " + std::strerror(errno)).ThrowAsJavaScriptException();
      return env.Undefined();
    }
    return Napi::Number::New(env, sentAt);
  }

  Napi::Value Close(const Napi::CallbackInfo& info) {
    if (fd_ >= 0) {
      Shutdown();
      Unref();
    }
    return info.Env().Undefined();
  }

  void Shutdown() {
    if (poll_ != nullptr) {
      uv_poll_stop(poll_);
      uv_close(reinterpret_cast<uv_handle_t*>(poll_), [](uv_handle_t* h) { delete reinterpret_cast<uv_poll_t*>(h); });
      poll_ = nullptr;
    }
    if (fd_ >= 0) {
      close(fd_);
      fd_ = -1;
    }
  }

  static void OnReadable(uv_poll_t* handle, int status, int /*events*/) {
    auto* self = static_cast<IcmpSocket*>(handle->data);
    if (status < 0) return;
    self->Drain();
  }

  // Reads every queued datagram and hands each echo to the callback.
  void Drain() {
    Napi::HandleScope scope(env_);
    for (int i = 0; i < 256 && fd_ >= 0; i++) {
      uint8_t buf[65536];
      alignas(cmsghdr) uint8_t control[256];
      sockaddr_storage from{};
      iovec iov{buf, sizeof buf};
      msghdr msg{};
      msg.msg_name = &from;
      msg.msg_namelen = sizeof from;
      msg.msg_iov = &iov;
      msg.msg_iovlen = 1;
      msg.msg_control = control;
      msg.msg_controllen = sizeof control;
      ssize_t n = recvmsg(fd_, &msg, MSG_DONTWAIT);
      if (n < 0) return;  // EAGAIN: drained; any other error: the next readable event retries
      double receivedAt = 0;
      int ttl = -1;
      for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_TIMESTAMPNS) {
          timespec ts{};
          std::memcpy(&ts, CMSG_DATA(c), sizeof ts);
          receivedAt = static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
        } else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_HOPLIMIT) {
          int hops = 0;
          std::memcpy(&hops, CMSG_DATA(c), sizeof hops);
          ttl = hops;
        }
      }
      if (receivedAt == 0) receivedAt = RealtimeMs();
      const uint8_t* icmp = buf;
      size_t len = static_cast<size_t>(n);
      char address[INET6_ADDRSTRLEN] = {0};
      if (v6_) {
        inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(&from)->sin6_addr, address, sizeof address);
      } else {
        // A raw IPv4 socket delivers the IP header: its length, then TTL at byte 8 (RFC 791 §3.1).
        if (len < 20) continue;
        size_t ihl = static_cast<size_t>(buf[0] & 0x0f) * 4;
        if (ihl < 20 || len < ihl) continue;
        ttl = buf[8];
        icmp += ihl;
        len -= ihl;
        inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(&from)->sin_addr, address, sizeof address);
      }
      if (len < 8) continue;
      Napi::Env env = env_;
      napi_value args[8] = {
          Napi::String::New(env, address),
          Napi::Number::New(env, icmp[0]),
          Napi::Number::New(env, icmp[1]),
          Napi::Number::New(env, icmp[4] << 8 | icmp[5]),
          Napi::Number::New(env, icmp[6] << 8 | icmp[7]),
          Napi::Number::New(env, ttl),
          Napi::Number::New(env, receivedAt),
          Napi::Buffer<uint8_t>::Copy(env, icmp + 8, len - 8),
      };
      onMessage_.MakeCallback(Value(), 8, args, *context_);
      if (env.IsExceptionPending()) {
        Napi::Error e = env.GetAndClearPendingException();
        napi_fatal_exception(env, e.Value());
        return;
      }
    }
  }

  bool v6_ = false;
  int fd_ = -1;
  uv_poll_t* poll_ = nullptr;
  napi_env env_ = nullptr;
  Napi::FunctionReference onMessage_;
  std::unique_ptr<Napi::AsyncContext> context_;
};

// tcpRttMicros(fd) → the kernel's smoothed RTT of a connected TCP socket (TCP_INFO tcpi_rtt, µs), or
// undefined when the descriptor is not a TCP socket. Right after the handshake it is the one sample
// the kernel took, SYN sent to SYN-ACK received (both kernel clocks), so the agent's TCP probes are
// not stretched by an event loop that notices the connection late.
Napi::Value TcpRttMicros(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsNumber()) return env.Undefined();
  tcp_info ti{};
  socklen_t len = sizeof ti;
  if (getsockopt(info[0].As<Napi::Number>().Int32Value(), IPPROTO_TCP, TCP_INFO, &ti, &len) != 0 || len < offsetof(tcp_info, tcpi_rtt) + sizeof ti.tcpi_rtt) {
    return env.Undefined();
  }
  return Napi::Number::New(env, ti.tcpi_rtt);
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("IcmpSocket", IcmpSocket::Define(env));
  exports.Set("tcpRttMicros", Napi::Function::New(env, TcpRttMicros));
  return exports;
}

}  // namespace

NODE_API_MODULE(gslbd_icmp, Init)
