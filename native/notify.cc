// sd_notify(3) for Node.js: one datagram to the service manager's $NOTIFY_SOCKET.
//
// Node's dgram module speaks UDP only and cannot send to an AF_UNIX datagram socket, and spawning
// `systemd-notify` races (the manager looks up the sender's unit by its PID after the short-lived
// child has exited, and drops the message). This addon sends from the engine's own process, so
// the manager sees the main PID and Type=notify works with the default NotifyAccess=main.
// The protocol is the one libsystemd implements: a path (or an abstract name written with a
// leading '@'), one datagram of newline-separated KEY=VALUE assignments.
#include <napi.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace {

// notify(socketPath: string, message: string): void — throws Error with errno text on failure.
Napi::Value Notify(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsString() || !info[1].IsString()) {
    Napi::TypeError::New(env, "notify(socketPath, message): two strings expected").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  std::string path = info[0].As<Napi::String>().Utf8Value();
  std::string message = info[1].As<Napi::String>().Utf8Value();
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof(addr.sun_path) || (path[0] != '/' && path[0] != '@')) {
    Napi::RangeError::New(env, "NOTIFY_SOCKET must be an absolute path or an abstract name starting with @").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  std::memcpy(addr.sun_path, path.data(), path.size());
  if (path[0] == '@') addr.sun_path[0] = '\0';
  socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path.size());
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    Napi::Error::New(env, std::string("socket: ") + std::strerror(errno)).ThrowAsJavaScriptException();
    return env.Undefined();
  }
  ssize_t sent = sendto(fd, message.data(), message.size(), MSG_NOSIGNAL, reinterpret_cast<sockaddr*>(&addr), len);
  int err = errno;
  close(fd);
  if (sent < 0) {
    Napi::Error::New(env, std::string("sendto ") + path + ": " + std::strerror(err)).ThrowAsJavaScriptException();
  }
  return env.Undefined();
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("notify", Napi::Function::New(env, Notify, "notify"));
  return exports;
}

}  // namespace

NODE_API_MODULE(gslbd_notify, Init)
