import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { REPO_ROOT } from './engineProcess.js';

/** Network namespaces this test created, with an agent side and a target side. */
export interface TestNetwork {
  /** Namespace the prober runs in, and its IPv4 address. */
  readonly agentNs: string;
  readonly agentAddress: string;
  /** Namespace of the probed peer, and its IPv4 address. */
  readonly targetNs: string;
  readonly targetAddress: string;
  /** The agent's and the target's IPv6 addresses when the network has IPv6 (else undefined). */
  readonly agentAddress6: string | undefined;
  readonly targetAddress6: string | undefined;
  /** Every namespace of the network, agent first. */
  readonly namespaces: readonly string[];
  /**
   * Runs a compiled script of this repository (`dist/…js`, relative to the repository) with `node` inside `ns`, under the command
   * `wrapper` when given (e.g. `setpriv --reuid=nobody …`); stdout and stderr are piped.
   */
  run(ns: string, script: string, args: readonly string[], wrapper?: readonly string[]): ChildProcess;
  /** Stops the children started by {@link run} and deletes the namespaces (and with them their links). */
  destroy(): Promise<void>;
}

/** A chain of network namespaces: the agent's, `routers` forwarding ones, the target's; the target is `routers` hops away. */
export type RoutedPath = TestNetwork;

let made = 0;

/** A name prefix unique to this process and call, short enough for interface and namespace names. */
export function testNetworkTag(): string {
  return `gslbd${process.pid % 100_000}p${made++}`;
}

/** Runs `ip …` (throws with its stderr on failure). */
export function ip(...args: string[]): void {
  execFileSync('ip', args, { stdio: 'pipe' });
}

/** Sets one sysctl inside namespace `ns`. */
export function sysctl(ns: string, key: string, value: string): void {
  execFileSync('ip', ['netns', 'exec', ns, 'sysctl', '-q', '-w', `${key}=${value}`], { stdio: 'pipe' });
}

/**
 * Adds namespace `ns` with loopback up; IPv6 off (no router solicitation, DAD or MLD traffic) unless
 * `ipv6`, in which case duplicate address detection is off so addresses are usable at once.
 */
export function addNamespace(ns: string, ipv6: boolean): void {
  ip('netns', 'add', ns);
  if (ipv6) {
    sysctl(ns, 'net.ipv6.conf.all.accept_dad', '0');
    sysctl(ns, 'net.ipv6.conf.default.accept_dad', '0');
  } else {
    sysctl(ns, 'net.ipv6.conf.all.disable_ipv6', '1');
    sysctl(ns, 'net.ipv6.conf.default.disable_ipv6', '1');
  }
  ip('-n', ns, 'link', 'set', 'lo', 'up');
}

/** `run` and `destroy` of a {@link TestNetwork} over `namespaces`; `before` runs first in destroy (after the children are stopped). */
export function namespaceLifecycle(namespaces: readonly string[], before: () => Promise<void> = async () => {}): Pick<TestNetwork, 'run' | 'destroy'> {
  const children = new Set<ChildProcess>();
  return {
    run(ns, script, args, wrapper = []) {
      const child = spawn('ip', ['netns', 'exec', ns, ...wrapper, process.execPath, join(REPO_ROOT, script), ...args], {
        cwd: REPO_ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.add(child);
      return child;
    },
    async destroy() {
      for (const c of children) {
        if (c.exitCode === null && c.signalCode === null) {
          c.kill('SIGKILL');
          await once(c, 'exit');
        }
      }
      await before();
      for (const ns of namespaces) {
        try {
          ip('netns', 'del', ns);
        } catch {
          // never created
        }
      }
    },
  };
}

/** End `end` (1 left, 2 right) of link `link`'s IPv6 /64, written as Node writes addresses (RFC 5952: `fd00:99::1`, not `fd00:99:0::1`). */
function linkAddress6(link: number, end: string): string {
  return link === 0 ? `fd00:99::${end}` : `fd00:99:${link}::${end}`;
}

/**
 * Builds agent ─ R1 ─ … ─ Rn ─ target out of network namespaces joined by veth pairs (needs root;
 * no `tc`): link i is 10.99.i.0/30 (left end .1, right end .2) and, with `ipv6`, fd00:99:i::/64
 * (left ::1, right ::2); each router forwards (`net.ipv4.ip_forward`, `net.ipv6.conf.all.forwarding`)
 * with a route each way, so a packet from the agent to the target crosses exactly `routers` routers
 * and each takes one off its TTL (hop limit). Addresses exist only inside these namespaces, so
 * probes never leave the test bed. Without `ipv6`, IPv6 is off on every link (no router
 * solicitation or DAD traffic). The target ignores echo requests in its kernel
 * (`net.ipv4.icmp_echo_ignore_all=1`, `net.ipv6.icmp.echo_ignore_all=1`), so only a userspace
 * responder answers them.
 * @throws Error when `ip` fails (not root, no netns support); what was made so far is removed.
 */
export function createRoutedPath(routers: number, options: { ipv6?: boolean } = {}): RoutedPath {
  const ipv6 = options.ipv6 ?? false;
  const tag = testNetworkTag();
  const namespaces = [`${tag}a`, ...Array.from({ length: routers }, (_, i) => `${tag}r${i + 1}`), `${tag}t`];
  const lifecycle = namespaceLifecycle(namespaces);
  try {
    for (const ns of namespaces) addNamespace(ns, ipv6);
    for (let i = 0; i + 1 < namespaces.length; i++) {
      const [left, right] = [namespaces[i]!, namespaces[i + 1]!];
      ip('-n', left, 'link', 'add', `r${i}`, 'type', 'veth', 'peer', 'name', `l${i}`, 'netns', right);
      ip('-n', left, 'addr', 'add', `10.99.${i}.1/30`, 'dev', `r${i}`);
      ip('-n', right, 'addr', 'add', `10.99.${i}.2/30`, 'dev', `l${i}`);
      if (ipv6) {
        ip('-n', left, 'addr', 'add', `${linkAddress6(i, '1')}/64`, 'dev', `r${i}`, 'nodad');
        ip('-n', right, 'addr', 'add', `${linkAddress6(i, '2')}/64`, 'dev', `l${i}`, 'nodad');
      }
      ip('-n', left, 'link', 'set', `r${i}`, 'up');
      ip('-n', right, 'link', 'set', `l${i}`, 'up');
    }
    const route = (ns: string, ...args: string[]): void => {
      ip('-n', ns, 'route', 'add', ...args);
      if (!ipv6) return;
      // The same route for IPv6: 10.99.i.j → fd00:99:i::j, 10.99.0.0/30 → fd00:99:0::/64.
      const v6 = args.map((a) =>
        a.replace(/^10\.99\.(\d+)\.0\/30$/, 'fd00:99:$1::/64').replace(/^10\.99\.(\d+)\.(\d)$/, (_, i: string, j: string) => linkAddress6(Number(i), j)),
      );
      ip('-6', '-n', ns, 'route', 'add', ...v6);
    };
    route(namespaces[0]!, 'default', 'via', '10.99.0.2');
    for (let i = 1; i <= routers; i++) {
      sysctl(namespaces[i]!, 'net.ipv4.ip_forward', '1');
      if (ipv6) sysctl(namespaces[i]!, 'net.ipv6.conf.all.forwarding', '1');
      route(namespaces[i]!, 'default', 'via', `10.99.${i}.2`);
      if (i > 1) route(namespaces[i]!, '10.99.0.0/30', 'via', `10.99.${i - 1}.1`);
    }
    route(namespaces[routers + 1]!, 'default', 'via', `10.99.${routers}.1`);
    sysctl(namespaces[routers + 1]!, 'net.ipv4.icmp_echo_ignore_all', '1');
    if (ipv6) sysctl(namespaces[routers + 1]!, 'net.ipv6.icmp.echo_ignore_all', '1');
  } catch (e) {
    void lifecycle.destroy();
    throw e;
  }
  return {
    agentNs: namespaces[0]!,
    agentAddress: '10.99.0.1',
    targetNs: namespaces[routers + 1]!,
    targetAddress: `10.99.${routers}.2`,
    agentAddress6: ipv6 ? linkAddress6(0, '1') : undefined,
    targetAddress6: ipv6 ? linkAddress6(routers, '2') : undefined,
    namespaces,
    ...lifecycle,
  };
}
