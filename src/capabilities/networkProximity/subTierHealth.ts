import { randomInt } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { isIPv6 } from 'node:net';
import dnsPacket from 'dns-packet';

/** A delegated proximity zone as the health checks see it: its id, its name servers, how often and how long to check them. */
export interface SubTierTarget {
  readonly zone: string;
  readonly nameServers: readonly { readonly name: string; readonly address: string; readonly port: number }[];
  readonly intervalMs: number;
  readonly timeoutMs: number;
}

/**
 * The keepalive of delegated proximity zones (docs/PRODUCT.md §5; seed 000: "keepalive state always
 * filters"): every `intervalMs`, one DNS query (its name server's own name, type A, RD clear) to
 * each name server of each delegated zone; a zone is down when none of its name servers sent a
 * DNS response (any rcode: the server answers DNS) within `timeoutMs`, and the network-proximity
 * stage then skips it (the next zone answers). A zone not checked yet counts as up (the cold-start
 * rule of the health monitors). Responses with another id or from another address are ignored
 * (RFC 5452 §4).
 */
export class SubTierHealth {
  private readonly down = new Set<string>();
  /** The zones checked now, and whether each has had a result yet. */
  private readonly checked = new Map<string, boolean>();
  private timers: NodeJS.Timeout[] = [];
  private generation = 0;

  /** Each delegated zone checked now: `up`, `down`, or `unchecked` (no result yet: counts as up). */
  states(): ReadonlyMap<string, 'up' | 'down' | 'unchecked'> {
    const out = new Map<string, 'up' | 'down' | 'unchecked'>();
    for (const [zone, done] of this.checked) out.set(zone, !done ? 'unchecked' : this.down.has(zone) ? 'down' : 'up');
    return out;
  }

  /** False when every name server of the delegated zone `zone` failed its last check. */
  isUp(zone: string): boolean {
    return !this.down.has(zone);
  }

  /** Checks `targets` from now on (every previous check is stopped); the first round starts at once. */
  start(targets: readonly SubTierTarget[]): void {
    this.stop();
    const generation = ++this.generation;
    for (const t of targets) {
      this.checked.set(t.zone, false);
      const round = (): void => {
        void this.checkZone(t).then((up) => {
          if (generation !== this.generation) return;
          this.checked.set(t.zone, true);
          if (up) this.down.delete(t.zone);
          else this.down.add(t.zone);
        });
      };
      round();
      const timer = setInterval(round, t.intervalMs);
      timer.unref();
      this.timers.push(timer);
    }
  }

  stop(): void {
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    this.generation++;
    this.down.clear();
    this.checked.clear();
  }

  /** True when one of the zone's name servers answers. */
  async checkZone(t: SubTierTarget): Promise<boolean> {
    const answers = await Promise.all(t.nameServers.map((ns) => answersDns(ns, t.timeoutMs)));
    return answers.includes(true);
  }
}

/** One UDP query to `ns`; resolves true when a DNS response with the query's id arrives from it within `timeoutMs`. Never rejects. */
function answersDns(ns: { readonly name: string; readonly address: string; readonly port: number }, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const id = randomInt(0, 65536);
    const socket = createSocket(isIPv6(ns.address) ? 'udp6' : 'udp4');
    let settled = false;
    const done = (up: boolean): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.close();
      resolve(up);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    socket.on('error', () => done(false));
    socket.on('message', (msg, from) => {
      if (from.port !== ns.port || from.address !== ns.address) return;
      try {
        const reply = dnsPacket.decode(msg);
        if (reply.id === id && reply.type === 'response') done(true);
      } catch {
        // Not a DNS message: keep waiting for the reply.
      }
    });
    const query = dnsPacket.encode({ type: 'query', id, flags: 0, questions: [{ type: 'A', name: ns.name }] });
    socket.send(query, ns.port, ns.address, (e) => {
      if (e) done(false);
    });
  });
}
