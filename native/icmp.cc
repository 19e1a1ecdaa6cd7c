// Probe sockets for Node.js (the agent's probes, src/agent/probes/, and the test bed's userspace echo
// responder): Node has no raw or ping socket, and its UDP sockets expose neither a datagram's TTL nor
// the kernel's receive time.
//
// - IcmpSocket: ICMP echo over a raw socket (needs CAP_NET_RAW) filtered to echo replies (and
//   requests), or over a ping socket (SOCK_DGRAM + IPPROTO_ICMP / IPPROTO_ICMPV6: no capability, for
//   the groups of net.ipv4.ping_group_range), whose echo identifier the kernel sets.
// - UdpProbeSocket: a UDP socket for DNS probes.
//
// Each is non-blocking and watched by a uv_poll handle on Node's own event loop — so nothing blocks
// and no thread is used. Every datagram read is handed to the JS callback with
//   - the received TTL (IPv4: the IP header a raw socket delivers, else the IP_TTL control message;
//     IPv6: the IPV6_HOPLIMIT control message, RFC 3542 §6.3), from which the caller infers hops;
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

// RFC 1071 Internet checksum (ICMPv4 over a raw socket; the kernel computes ICMPv6's, RFC 3542 §3.1,
// and a ping socket's).
uint16_t Checksum(const uint8_t* data, size_t len) {
  uint32_t sum = 0;
  for (size_t i = 0; i + 1 < len; i += 2) sum += static_cast<uint32_t>(data[i] << 8 | data[i + 1]);
  if (len % 2 == 1) sum += static_cast<uint32_t>(data[len - 1] << 8);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum & 0xffff);
}

constexpr size_t kMaxPayload = 1400;

// A JS Error whose `code` is the errno's name (EPERM, EACCES…), so callers can tell a missing
// capability from other failures.
void ThrowErrno(Napi::Env env, const std::string& what, int err) {
  Napi::Error e = Napi::Error::New(env, what + ": " + std::strerror(err));
  e.Set("code", Napi::String::New(env, uv_err_name(-err)));
  e.ThrowAsJavaScriptException();
}

// Fills `to` with `address` (and `port`) of the socket's family; false when it is not one.
bool ParseAddress(bool v6, const std::string& address, uint16_t port, sockaddr_storage& to, socklen_t& toLen) {
  to = sockaddr_storage{};
  if (v6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&to);
    a->sin6_family = AF_INET6;
    a->sin6_port = htons(port);
    toLen = sizeof *a;
    return inet_pton(AF_INET6, address.c_str(), &a->sin6_addr) == 1;
  }
  auto* a = reinterpret_cast<sockaddr_in*>(&to);
  a->sin_family = AF_INET;
  a->sin_port = htons(port);
  toLen = sizeof *a;
  return inet_pton(AF_INET, address.c_str(), &a->sin_addr) == 1;
}

// One datagram read by ReadDatagram: its sender, the TTL of the control messages (-1: none), the
// kernel's receive time and its length in the buffer.
struct Datagram {
  char address[INET6_ADDRSTRLEN] = {0};
  uint16_t port = 0;
  int ttl = -1;
  double receivedAt = 0;
  size_t len = 0;
};

// Reads one queued datagram into buf with its control messages; false when none is queued (or on
// an error, which the next readable event retries).
bool ReadDatagram(int fd, bool v6, uint8_t* buf, size_t cap, Datagram& d) {
  alignas(cmsghdr) uint8_t control[256];
  sockaddr_storage from{};
  iovec iov{buf, cap};
  msghdr msg{};
  msg.msg_name = &from;
  msg.msg_namelen = sizeof from;
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n = recvmsg(fd, &msg, MSG_DONTWAIT);
  if (n < 0) return false;
  d = Datagram{};
  d.len = static_cast<size_t>(n);
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_TIMESTAMPNS) {
      timespec ts{};
      std::memcpy(&ts, CMSG_DATA(c), sizeof ts);
      d.receivedAt = static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
    } else if ((c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_HOPLIMIT) || (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TTL)) {
      int ttl = 0;
      std::memcpy(&ttl, CMSG_DATA(c), sizeof ttl);
      d.ttl = ttl;
    }
  }
  if (d.receivedAt == 0) d.receivedAt = RealtimeMs();
  if (v6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&from);
    inet_ntop(AF_INET6, &a->sin6_addr, d.address, sizeof d.address);
    d.port = ntohs(a->sin6_port);
  } else {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&from);
    inet_ntop(AF_INET, &a->sin_addr, d.address, sizeof d.address);
    d.port = ntohs(a->sin_port);
  }
  return true;
}

// A non-blocking socket watched by a uv_poll handle on Node's event loop, handing what it reads to a
// JS callback (T::Drain). An open socket holds a reference to itself and keeps the loop alive until
// close(), like Node's own sockets.
template <class T>
class PolledSocket : public Napi::ObjectWrap<T> {
 public:
  explicit PolledSocket(const Napi::CallbackInfo& info) : Napi::ObjectWrap<T>(info) {}
  ~PolledSocket() override { Shutdown(); }

 protected:
  // Takes ownership of fd_ (already set): watches it and calls onMessage for what it reads. On
  // failure the descriptor is closed and a JS exception is pending.
  void Watch(Napi::Env env, Napi::Function onMessage, const char* resource) {
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
    onMessage_ = Napi::Persistent(onMessage);
    context_ = std::make_unique<Napi::AsyncContext>(env, resource);
    env_ = env;
    uv_poll_start(poll_, UV_READABLE, &PolledSocket::OnReadable);
    this->Ref();
  }

  // Reads the constructor's first two arguments, (family: 4 | 6, onMessage: function), setting
  // v6_; false with a JS exception pending when they are not that (`usage` names the form).
  bool TakeFamily(const Napi::CallbackInfo& info, const char* usage) {
    Napi::Env env = info.Env();
    if (info.Length() < 2 || !info[0].IsNumber() || !info[1].IsFunction()) {
      Napi::TypeError::New(env, usage).ThrowAsJavaScriptException();
      return false;
    }
    int family = info[0].As<Napi::Number>().Int32Value();
    if (family != 4 && family != 6) {
      Napi::RangeError::New(env, "family must be 4 or 6").ThrowAsJavaScriptException();
      return false;
    }
    v6_ = family == 6;
    return true;
  }

  // Closes the descriptor after a failed set-up and throws the error of `what`.
  void FailSetup(Napi::Env env, const std::string& what) {
    int err = errno;
    close(fd_);
    fd_ = -1;
    ThrowErrno(env, what, err);
  }

  Napi::Value Close(const Napi::CallbackInfo& info) {
    if (fd_ >= 0) {
      Shutdown();
      this->Unref();
    }
    return info.Env().Undefined();
  }

  // Calls the JS callback; false when it threw (the exception is then reported as uncaught).
  bool Deliver(size_t argc, const napi_value* args) {
    onMessage_.MakeCallback(this->Value(), argc, args, *context_);
    Napi::Env env = env_;
    if (!env.IsExceptionPending()) return true;
    Napi::Error e = env.GetAndClearPendingException();
    napi_fatal_exception(env, e.Value());
    return false;
  }

  bool v6_ = false;
  int fd_ = -1;
  napi_env env_ = nullptr;

 private:
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
    if (status < 0) return;
    auto* self = static_cast<T*>(static_cast<PolledSocket*>(handle->data));
    Napi::HandleScope scope(self->env_);
    self->Drain();
  }

  uv_poll_t* poll_ = nullptr;
  Napi::FunctionReference onMessage_;
  std::unique_ptr<Napi::AsyncContext> context_;
};

class IcmpSocket : public PolledSocket<IcmpSocket> {
  friend class PolledSocket<IcmpSocket>;

 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "IcmpSocket",
                       {InstanceMethod<&IcmpSocket::Send>("send"), InstanceMethod("close", &IcmpSocket::Close),
                        InstanceMethod<&IcmpSocket::Ident>("ident")});
  }

  // new IcmpSocket(family: 4 | 6, onMessage(from, type, code, id, seq, ttl, receivedAtMs, payload), requests = false, ping = false):
  // echo replies only, or (a responder, raw only) echo requests too — on loopback a prober would read its own requests.
  // With `ping`, a ping socket: no capability needed, but the kernel sets each request's identifier to ident().
  explicit IcmpSocket(const Napi::CallbackInfo& info) : PolledSocket<IcmpSocket>(info) {
    Napi::Env env = info.Env();
    if (!TakeFamily(info, "new IcmpSocket(family: 4 | 6, onMessage: function)")) return;
    bool requests = info.Length() > 2 && info[2].ToBoolean().Value();
    ping_ = info.Length() > 3 && info[3].ToBoolean().Value();
    if (ping_ && requests) {
      Napi::TypeError::New(env, "a ping socket reads echo replies only").ThrowAsJavaScriptException();
      return;
    }
    int protocol = v6_ ? static_cast<int>(IPPROTO_ICMPV6) : static_cast<int>(IPPROTO_ICMP);
    fd_ = socket(v6_ ? AF_INET6 : AF_INET, (ping_ ? SOCK_DGRAM : SOCK_RAW) | SOCK_NONBLOCK | SOCK_CLOEXEC, protocol);
    if (fd_ < 0) {
      ThrowErrno(env, ping_ ? "ping socket (needs a group of net.ipv4.ping_group_range)" : "raw ICMP socket (needs CAP_NET_RAW)", errno);
      return;
    }
    int on = 1;
    if (setsockopt(fd_, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on) != 0) {
        FailSetup(env, "setsockopt SO_TIMESTAMPNS");
        return;
      }
    // Replies of many trains arrive in bursts: a 4 MiB receive buffer (beyond rmem_max with
    // CAP_NET_ADMIN, else as much as rmem_max allows) keeps a burst from overflowing it.
    int rcvbuf = 4 << 20;
    if (setsockopt(fd_, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof rcvbuf) != 0) setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    if (v6_) {
      if (setsockopt(fd_, IPPROTO_IPV6, IPV6_RECVHOPLIMIT, &on, sizeof on) != 0) {
        FailSetup(env, "setsockopt IPV6_RECVHOPLIMIT");
        return;
      }
    } else if (ping_) {
      // A ping socket delivers the ICMP message without the IP header: the TTL comes as a control message.
      if (setsockopt(fd_, IPPROTO_IP, IP_RECVTTL, &on, sizeof on) != 0) {
        FailSetup(env, "setsockopt IP_RECVTTL");
        return;
      }
    }
    if (ping_) {
      // Binding to port 0 makes the kernel pick the identifier now, so ident() can name it before the first send.
      sockaddr_storage any{};
      socklen_t anyLen = 0;
      ParseAddress(v6_, v6_ ? "::" : "0.0.0.0", 0, any, anyLen);
      if (bind(fd_, reinterpret_cast<sockaddr*>(&any), anyLen) != 0) {
        FailSetup(env, "bind ping socket");
        return;
      }
      sockaddr_storage bound{};
      socklen_t boundLen = sizeof bound;
      if (getsockname(fd_, reinterpret_cast<sockaddr*>(&bound), &boundLen) != 0) {
        FailSetup(env, "getsockname");
        return;
      }
      ident_ = v6_ ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port) : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    } else if (v6_) {
      icmp6_filter filter{};
      ICMP6_FILTER_SETBLOCKALL(&filter);
      if (requests) ICMP6_FILTER_SETPASS(ICMP6_ECHO_REQUEST, &filter);
      ICMP6_FILTER_SETPASS(ICMP6_ECHO_REPLY, &filter);
      if (setsockopt(fd_, IPPROTO_ICMPV6, ICMP6_FILTER, &filter, sizeof filter) != 0) {
        FailSetup(env, "setsockopt ICMP6_FILTER");
        return;
      }
    } else {
      // ICMP_FILTER (Linux raw(7)): a set bit blocks that type; keep echo reply (0) and, for a responder, request (8).
      icmp_filter filter{~((1U << ICMP_ECHOREPLY) | (requests ? 1U << ICMP_ECHO : 0U))};
      if (setsockopt(fd_, SOL_RAW, ICMP_FILTER, &filter, sizeof filter) != 0) {
        FailSetup(env, "setsockopt ICMP_FILTER");
        return;
      }
    }
    Watch(env, info[1].As<Napi::Function>(), "gslbd:icmp");
  }

 private:
  // ident() → the identifier the kernel writes into every request of a ping socket; -1 for a raw socket (the caller's).
  Napi::Value Ident(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), ping_ ? ident_ : -1); }

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
    socklen_t toLen = 0;
    if (!ParseAddress(v6_, address, 0, to, toLen)) {
      Napi::TypeError::New(env, std::string("not an IPv") + (v6_ ? "6" : "4") + " address: " + address).ThrowAsJavaScriptException();
      return env.Undefined();
    }
    if (!v6_ && !ping_) {
      uint16_t sum = Checksum(packet, len);
      packet[2] = static_cast<uint8_t>(sum >> 8);
      packet[3] = static_cast<uint8_t>(sum);
    }
    double sentAt = RealtimeMs();
    if (sendto(fd_, packet, len, 0, reinterpret_cast<sockaddr*>(&to), toLen) < 0) {
      ThrowErrno(env, "sendto " + address, errno);
      return env.Undefined();
    }
    return Napi::Number::New(env, sentAt);
  }

  // Reads every queued datagram and hands each echo to the callback.
  void Drain() {
    for (int i = 0; i < 256 && fd_ >= 0; i++) {
      uint8_t buf[65536];
      Datagram d;
      if (!ReadDatagram(fd_, v6_, buf, sizeof buf, d)) return;
      const uint8_t* icmp = buf;
      size_t len = d.len;
      if (!v6_ && !ping_) {
        // A raw IPv4 socket delivers the IP header: its length, then TTL at byte 8 (RFC 791 §3.1).
        if (len < 20) continue;
        size_t ihl = static_cast<size_t>(buf[0] & 0x0f) * 4;
        if (ihl < 20 || len < ihl) continue;
        d.ttl = buf[8];
        icmp += ihl;
        len -= ihl;
      }
      if (len < 8) continue;
      Napi::Env env = env_;
      napi_value args[8] = {
          Napi::String::New(env, d.address),
          Napi::Number::New(env, icmp[0]),
          Napi::Number::New(env, icmp[1]),
          Napi::Number::New(env, icmp[4] << 8 | icmp[5]),
          Napi::Number::New(env, icmp[6] << 8 | icmp[7]),
          Napi::Number::New(env, d.ttl),
          Napi::Number::New(env, d.receivedAt),
          Napi::Buffer<uint8_t>::Copy(env, icmp + 8, len - 8),
      };
      if (!Deliver(8, args)) return;
    }
  }

  bool ping_ = false;
  int ident_ = -1;
};

// A UDP socket for DNS probes: the kernel's receive timestamp and the reply's TTL (hop limit) of each
// datagram, which Node's dgram sockets do not expose.
class UdpProbeSocket : public PolledSocket<UdpProbeSocket> {
  friend class PolledSocket<UdpProbeSocket>;

 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "UdpProbeSocket", {InstanceMethod<&UdpProbeSocket::Send>("send"), InstanceMethod("close", &UdpProbeSocket::Close)});
  }

  // new UdpProbeSocket(family: 4 | 6, onMessage(from, port, ttl, receivedAtMs, payload)): bound to an
  // ephemeral port on the first send.
  explicit UdpProbeSocket(const Napi::CallbackInfo& info) : PolledSocket<UdpProbeSocket>(info) {
    Napi::Env env = info.Env();
    if (!TakeFamily(info, "new UdpProbeSocket(family: 4 | 6, onMessage: function)")) return;
    fd_ = socket(v6_ ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_UDP);
    if (fd_ < 0) {
      ThrowErrno(env, "UDP socket", errno);
      return;
    }
    int on = 1;
    if (setsockopt(fd_, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on) != 0) {
        FailSetup(env, "setsockopt SO_TIMESTAMPNS");
        return;
      }
    if (v6_ ? setsockopt(fd_, IPPROTO_IPV6, IPV6_RECVHOPLIMIT, &on, sizeof on) != 0 : setsockopt(fd_, IPPROTO_IP, IP_RECVTTL, &on, sizeof on) != 0) {
      {
        FailSetup(env, v6_ ? "setsockopt IPV6_RECVHOPLIMIT" : "setsockopt IP_RECVTTL");
        return;
      }
    }
    Watch(env, info[1].As<Napi::Function>(), "gslbd:udpProbe");
  }

 private:
  // send(address: string, port, payload: Buffer) → realtime ms just before sendto.
  Napi::Value Send(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (fd_ < 0) {
      Napi::Error::New(env, "the socket is closed").ThrowAsJavaScriptException();
      return env.Undefined();
    }
    if (info.Length() < 3 || !info[0].IsString() || !info[1].IsNumber() || !info[2].IsBuffer()) {
      Napi::TypeError::New(env, "send(address, port, payload: Buffer)").ThrowAsJavaScriptException();
      return env.Undefined();
    }
    std::string address = info[0].As<Napi::String>().Utf8Value();
    uint32_t port = info[1].As<Napi::Number>().Uint32Value();
    auto payload = info[2].As<Napi::Buffer<uint8_t>>();
    if (port == 0 || port > 65535) {
      Napi::RangeError::New(env, "port must be 1..65535").ThrowAsJavaScriptException();
      return env.Undefined();
    }
    if (payload.Length() > kMaxPayload) {
      Napi::RangeError::New(env, "payload too large").ThrowAsJavaScriptException();
      return env.Undefined();
    }
    sockaddr_storage to{};
    socklen_t toLen = 0;
    if (!ParseAddress(v6_, address, static_cast<uint16_t>(port), to, toLen)) {
      Napi::TypeError::New(env, std::string("not an IPv") + (v6_ ? "6" : "4") + " address: " + address).ThrowAsJavaScriptException();
      return env.Undefined();
    }
    double sentAt = RealtimeMs();
    if (sendto(fd_, payload.Data(), payload.Length(), 0, reinterpret_cast<sockaddr*>(&to), toLen) < 0) {
      ThrowErrno(env, "sendto " + address, errno);
      return env.Undefined();
    }
    return Napi::Number::New(env, sentAt);
  }

  // Reads every queued datagram and hands each to the callback.
  void Drain() {
    for (int i = 0; i < 256 && fd_ >= 0; i++) {
      uint8_t buf[65536];
      Datagram d;
      if (!ReadDatagram(fd_, v6_, buf, sizeof buf, d)) return;
      Napi::Env env = env_;
      napi_value args[5] = {
          Napi::String::New(env, d.address),
          Napi::Number::New(env, d.port),
          Napi::Number::New(env, d.ttl),
          Napi::Number::New(env, d.receivedAt),
          Napi::Buffer<uint8_t>::Copy(env, buf, d.len),
      };
      if (!Deliver(5, args)) return;
    }
  }
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
  exports.Set("UdpProbeSocket", UdpProbeSocket::Define(env));
  exports.Set("tcpRttMicros", Napi::Function::New(env, TcpRttMicros));
  return exports;
}

}  // namespace

NODE_API_MODULE(gslbd_icmp, Init)
