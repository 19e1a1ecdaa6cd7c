// tun-delay-line: a point-to-point link between two network namespaces that holds every packet for
// a set time and drops a seeded share of them — the delay and loss emulation of the agent's probe
// tests on machines without `tc netem` or NFQUEUE (built by test/setup.sh into .tmp/tools/; driven
// by test/support/tunDelayLine.ts).
//
//   tun-delay-line NS_A NS_B DEV DELAY_AB_US DELAY_BA_US LOSS_AB SEED
//
// Creates a TUN device named DEV (IFF_TUN, no packet information: each read is one IP packet) in
// the named network namespace NS_A (/run/netns/NS_A, as `ip netns add` makes it) and another in
// NS_B, then forwards: a packet the kernel of A routes into its DEV is read here, held DELAY_AB_US
// microseconds from the moment it was read (so never less), and written into B's DEV, where B's
// kernel receives it as if it came over a wire; B → A likewise with DELAY_BA_US. A → B packets are
// dropped with probability LOSS_AB, drawn from splitmix64 seeded with SEED. The devices exist only
// while this process runs: it exits on SIGTERM or SIGINT (printing its counters), and the kernel
// removes both devices. Prints `ready` once both exist (the caller then addresses them and sets
// them up). Needs CAP_SYS_ADMIN (setns) and CAP_NET_ADMIN (TUNSETIFF).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

// Up to 4096 held packets per direction, each at most 2048 bytes (the devices' MTU is 1500).
enum { kSlots = 4096, kSlotBytes = 2048, kMaxPacket = 65536 };

// A FIFO of held packets: one delay per direction, so the packet read first is due first.
struct Queue {
  size_t head, count;
  uint64_t due_ns[kSlots];
  uint16_t len[kSlots];
  uint8_t data[kSlots][kSlotBytes];
};

struct Direction {
  int from, to;
  uint64_t delay_ns;
  double loss;
  uint64_t forwarded, dropped, overflowed, down;
  struct Queue queue;
};

static volatile sig_atomic_t stopping = 0;
static void OnSignal(int sig) {
  (void)sig;
  stopping = 1;
}

static uint64_t NowNs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t rng_state;
// splitmix64 (Steele, Lea, Flood 2014): a seeded, reproducible stream of 64-bit values.
static double NextUniform(void) {
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  z ^= z >> 31;
  return (double)(z >> 11) / 9007199254740992.0;  // [0, 1) from the top 53 bits
}

static void Die(const char* what) {
  fprintf(stderr, "tun-delay-line: %s: %s\n", what, strerror(errno));
  exit(1);
}

// Opens a TUN device named `dev` inside the network namespace `ns`: the device is created in the
// namespace of the thread that opens /dev/net/tun.
static int OpenTunIn(const char* ns, const char* dev) {
  char path[256];
  snprintf(path, sizeof path, "/run/netns/%s", ns);
  int nsfd = open(path, O_RDONLY | O_CLOEXEC);
  if (nsfd < 0) Die(path);
  if (setns(nsfd, CLONE_NEWNET) != 0) Die("setns");
  close(nsfd);
  int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) Die("/dev/net/tun");
  struct ifreq ifr;
  memset(&ifr, 0, sizeof ifr);
  ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
  if (strlen(dev) >= IFNAMSIZ) {
    fprintf(stderr, "tun-delay-line: device name too long: %s\n", dev);
    exit(2);
  }
  memcpy(ifr.ifr_name, dev, strlen(dev) + 1);
  if (ioctl(fd, TUNSETIFF, &ifr) != 0) Die("TUNSETIFF");
  return fd;
}

// Reads every packet waiting on d->from into the queue (or drops it: loss draw, full queue).
static void Drain(struct Direction* d) {
  uint8_t buf[kMaxPacket];
  for (;;) {
    ssize_t n = read(d->from, buf, sizeof buf);
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) return;
      Die("read");
    }
    uint64_t now = NowNs();
    if (d->loss > 0 && NextUniform() < d->loss) {
      d->dropped++;
      continue;
    }
    struct Queue* q = &d->queue;
    if (q->count == kSlots || (size_t)n > sizeof q->data[0]) {
      d->overflowed++;
      continue;
    }
    size_t slot = (q->head + q->count) % kSlots;
    q->due_ns[slot] = now + d->delay_ns;
    q->len[slot] = (uint16_t)n;
    memcpy(q->data[slot], buf, (size_t)n);
    q->count++;
  }
}

// Writes every packet that is due; returns the time (ns) until the next one, or -1 when none waits.
static int64_t Release(struct Direction* d) {
  struct Queue* q = &d->queue;
  while (q->count > 0) {
    uint64_t now = NowNs();
    if (q->due_ns[q->head] > now) return (int64_t)(q->due_ns[q->head] - now);
    // EIO: the receiving device is down (not yet set up, or being removed): the packet is lost, as on an unplugged cable.
    if (write(d->to, q->data[q->head], q->len[q->head]) >= 0)
      d->forwarded++;
    else if (errno == EIO)
      d->down++;
    else if (errno == EAGAIN)
      d->overflowed++;
    else
      Die("write");
    q->head = (q->head + 1) % kSlots;
    q->count--;
  }
  return -1;
}

int main(int argc, char** argv) {
  if (argc != 8) {
    fprintf(stderr, "usage: tun-delay-line NS_A NS_B DEV DELAY_AB_US DELAY_BA_US LOSS_AB SEED\n");
    return 2;
  }
  static struct Direction ab, ba;
  int fa = OpenTunIn(argv[1], argv[3]);
  int fb = OpenTunIn(argv[2], argv[3]);
  ab.from = ba.to = fa;
  ab.to = ba.from = fb;
  ab.delay_ns = strtoull(argv[4], NULL, 10) * 1000u;
  ba.delay_ns = strtoull(argv[5], NULL, 10) * 1000u;
  ab.loss = strtod(argv[6], NULL);
  rng_state = strtoull(argv[7], NULL, 10);
  // Wake-ups as precise as the kernel allows: the default 50 µs timer slack would add to every delay,
  // and on a loaded machine (the tests share it) a normal-priority process runs milliseconds late. The
  // line sleeps nearly all the time, so a real-time priority (best effort) costs the machine nothing.
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  struct sched_param rt = {.sched_priority = 10};
  if (sched_setscheduler(0, SCHED_FIFO, &rt) != 0) fprintf(stderr, "tun-delay-line: no real-time priority (%s): delays may run late under load\n", strerror(errno));
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = OnSignal;
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  // Signals are blocked except inside ppoll, so a stop request is seen without a race.
  sigset_t blocked, during_poll;
  sigemptyset(&blocked);
  sigaddset(&blocked, SIGTERM);
  sigaddset(&blocked, SIGINT);
  sigprocmask(SIG_BLOCK, &blocked, &during_poll);
  printf("ready\n");
  fflush(stdout);
  while (!stopping) {
    int64_t wait_ab = Release(&ab);
    int64_t wait_ba = Release(&ba);
    int64_t wait = wait_ab < 0 ? wait_ba : (wait_ba < 0 || wait_ab < wait_ba ? wait_ab : wait_ba);
    struct timespec timeout = {(time_t)(wait / 1000000000), (long)(wait % 1000000000)};
    struct pollfd fds[2] = {{fa, POLLIN, 0}, {fb, POLLIN, 0}};
    int ready = ppoll(fds, 2, wait < 0 ? NULL : &timeout, &during_poll);
    if (ready < 0) {
      if (errno == EINTR) continue;
      Die("ppoll");
    }
    if (fds[0].revents & POLLIN) Drain(&ab);
    if (fds[1].revents & POLLIN) Drain(&ba);
  }
  printf("ab forwarded %llu dropped %llu overflowed %llu down %llu\n", (unsigned long long)ab.forwarded, (unsigned long long)ab.dropped,
         (unsigned long long)ab.overflowed, (unsigned long long)ab.down);
  printf("ba forwarded %llu dropped %llu overflowed %llu down %llu\n", (unsigned long long)ba.forwarded, (unsigned long long)ba.dropped,
         (unsigned long long)ba.overflowed, (unsigned long long)ba.down);
  return 0;
}
