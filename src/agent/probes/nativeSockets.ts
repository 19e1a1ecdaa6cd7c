import { createRequire } from 'node:module';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { packageRoot } from '../../core/lpm/nativeAddon.js';

/** An ICMP socket of native/icmp.cc (raw or ping): echo replies (and, raw only, requests), with the TTL and the kernel's receive time of each. */
export interface NativeIcmpSocket {
  /** Sends one ICMP message; returns CLOCK_REALTIME in ms read just before `sendto`. @throws Error when the kernel refuses the send. */
  send(address: string, type: number, code: number, id: number, seq: number, payload: Buffer): number;
  /** The echo identifier the kernel writes into every request of a ping socket (the `id` given to `send` is ignored); -1 for a raw socket. */
  ident(): number;
  /** Closes the socket (idempotent); until then it keeps Node's event loop alive. */
  close(): void;
}

/** The callback of a {@link NativeIcmpSocket}: sender, ICMP type/code/identifier/sequence, received TTL (hop limit), kernel receive time (realtime ms), payload after the 8-byte header. */
export type IcmpMessageHandler = (
  from: string,
  type: number,
  code: number,
  id: number,
  seq: number,
  ttl: number,
  receivedAtMs: number,
  payload: Buffer,
) => void;

/** A UDP socket of native/icmp.cc for DNS probes: each datagram with its TTL (hop limit) and the kernel's receive time. */
export interface NativeUdpProbeSocket {
  /** Sends one datagram to `address`:`port` (bound to an ephemeral port on the first send); returns CLOCK_REALTIME in ms read just before `sendto`. @throws Error when the kernel refuses the send. */
  send(address: string, port: number, payload: Buffer): number;
  /** Closes the socket (idempotent); until then it keeps Node's event loop alive. */
  close(): void;
}

/** The callback of a {@link NativeUdpProbeSocket}: sender address and port, received TTL (hop limit; -1 when the kernel gave none), kernel receive time (realtime ms), the datagram. */
export type UdpMessageHandler = (from: string, port: number, ttl: number, receivedAtMs: number, payload: Buffer) => void;

interface ProbeAddon {
  IcmpSocket: new (family: 4 | 6, onMessage: IcmpMessageHandler, requests: boolean, ping: boolean) => NativeIcmpSocket;
  UdpProbeSocket: new (family: 4 | 6, onMessage: UdpMessageHandler) => NativeUdpProbeSocket;
  tcpRttMicros(fd: number): number | undefined;
}

let addon: ProbeAddon | undefined;

function loadAddon(): ProbeAddon {
  addon ??= createRequire(import.meta.url)(process.env.GSLBD_ICMP_ADDON ?? join(packageRoot(), 'build', 'Release', 'gslbd_icmp.node')) as ProbeAddon;
  return addon;
}

/** Set once a raw socket was refused for lack of CAP_NET_RAW: later probes go straight to ping sockets. */
let rawRefused = false;

/**
 * Opens an ICMP socket of `family` that reads echo replies — and echo requests when `requests` (a
 * responder; on loopback a prober would read its own requests) — (native/icmp.cc, built by `npm
 * install` with the location addon; `GSLBD_ICMP_ADDON` names another build, e.g. the sanitizer one of
 * native/build-sanitized.sh). A raw socket when the process may open one (CAP_NET_RAW); otherwise,
 * for replies only, a ping socket (`SOCK_DGRAM` + `IPPROTO_ICMP`/`IPPROTO_ICMPV6`, Linux icmp(7)),
 * which the kernel allows to the groups of `net.ipv4.ping_group_range` (both families) without any
 * capability; its requests carry the kernel's identifier ({@link NativeIcmpSocket.ident}).
 * @throws Error when the addon is missing (`npm run build:native`), or the process lacks CAP_NET_RAW
 * and its group is outside `net.ipv4.ping_group_range` (code EACCES), or `requests` without CAP_NET_RAW.
 */
export function openIcmpSocket(family: 4 | 6, onMessage: IcmpMessageHandler, requests = false): NativeIcmpSocket {
  const { IcmpSocket } = loadAddon();
  if (!rawRefused || requests) {
    try {
      return new IcmpSocket(family, onMessage, requests, false);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (requests || (code !== 'EPERM' && code !== 'EACCES')) throw e;
      rawRefused = true;
    }
  }
  return new IcmpSocket(family, onMessage, false, true);
}

/**
 * Opens a UDP socket of `family` for DNS probes (native/icmp.cc): Node's dgram sockets expose neither
 * the kernel's receive time (`SO_TIMESTAMPNS`) nor the TTL (`IP_RECVTTL`) or hop limit
 * (`IPV6_RECVHOPLIMIT`, RFC 3542 §6.5) of a datagram.
 * @throws Error when the addon is missing (`npm run build:native`) or the kernel refuses the socket.
 */
export function openUdpProbeSocket(family: 4 | 6, onMessage: UdpMessageHandler): NativeUdpProbeSocket {
  return new (loadAddon().UdpProbeSocket)(family, onMessage);
}

/**
 * The kernel's RTT of a TCP socket that just connected, in ms (native/icmp.cc `tcpRttMicros`:
 * TCP_INFO's `tcpi_rtt`, which right after the handshake is the kernel's one sample, SYN sent to
 * SYN-ACK received), so a TCP probe is not stretched by an event loop that runs late. Node exposes no
 * socket option: the descriptor is read from the socket's handle (`_handle.fd`, Node's own field on
 * Unix). Undefined when there is no descriptor, no addon or no TCP_INFO: the caller then times the
 * connect itself.
 */
export function kernelTcpRttMs(socket: Socket): number | undefined {
  const fd = (socket as unknown as { _handle?: { fd?: unknown } })._handle?.fd;
  if (typeof fd !== 'number' || fd < 0) return undefined;
  let micros: number | undefined;
  try {
    micros = loadAddon().tcpRttMicros(fd);
  } catch {
    return undefined;
  }
  return micros === undefined || micros <= 0 ? undefined : micros / 1000;
}
