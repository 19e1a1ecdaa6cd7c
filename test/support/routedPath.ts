import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { REPO_ROOT } from './engineProcess.js';

/** A chain of network namespaces this test created: the agent's, `routers` forwarding ones, the target's. */
export interface RoutedPath {
  /** Namespace the prober runs in, and its address. */
  readonly agentNs: string;
  readonly agentAddress: string;
  /** Namespace of the probed peer, and its address: `routers` hops away from the agent. */
  readonly targetNs: string;
  readonly targetAddress: string;
  /** Every namespace of the chain, agent first. */
  readonly namespaces: readonly string[];
  /** Runs a compiled script of this repository (`dist/…js`, relative to the repository) with `node` inside `ns`; stdout and stderr are piped. */
  run(ns: string, script: string, args: readonly string[]): ChildProcess;
  /** Stops the children started by {@link run} and deletes the namespaces (and with them their veths). */
  destroy(): Promise<void>;
}

let made = 0;

function ip(...args: string[]): void {
  execFileSync('ip', args, { stdio: 'pipe' });
}

function sysctl(ns: string, key: string, value: string): void {
  execFileSync('ip', ['netns', 'exec', ns, 'sysctl', '-q', '-w', `${key}=${value}`], { stdio: 'pipe' });
}

/**
 * Builds agent ─ R1 ─ … ─ Rn ─ target out of network namespaces joined by veth pairs (needs root;
 * no `tc`): link i is 10.99.i.0/30 (left end .1, right end .2), each router forwards IPv4
 * (`net.ipv4.ip_forward=1`) with a route each way, so a packet from the agent to the target crosses
 * exactly `routers` routers and each takes one off its TTL. Addresses exist only inside these
 * namespaces, so probes never leave the test bed. IPv6 is off on every link (no router solicitation
 * or DAD traffic), and the target ignores echo requests in its kernel
 * (`net.ipv4.icmp_echo_ignore_all=1`), so only a userspace responder answers them.
 * @throws Error when `ip` fails (not root, no netns support); what was made so far is removed.
 */
export function createRoutedPath(routers: number): RoutedPath {
  const tag = `gslbd${process.pid % 100_000}p${made++}`;
  const namespaces = [`${tag}a`, ...Array.from({ length: routers }, (_, i) => `${tag}r${i + 1}`), `${tag}t`];
  const children = new Set<ChildProcess>();
  const destroy = async (): Promise<void> => {
    for (const c of children) {
      if (c.exitCode === null && c.signalCode === null) {
        c.kill('SIGKILL');
        await once(c, 'exit');
      }
    }
    for (const ns of namespaces) {
      try {
        ip('netns', 'del', ns);
      } catch {
        // never created
      }
    }
  };
  try {
    for (const ns of namespaces) {
      ip('netns', 'add', ns);
      sysctl(ns, 'net.ipv6.conf.all.disable_ipv6', '1');
      sysctl(ns, 'net.ipv6.conf.default.disable_ipv6', '1');
      ip('-n', ns, 'link', 'set', 'lo', 'up');
    }
    for (let i = 0; i + 1 < namespaces.length; i++) {
      const [left, right] = [namespaces[i]!, namespaces[i + 1]!];
      ip('-n', left, 'link', 'add', `r${i}`, 'type', 'veth', 'peer', 'name', `l${i}`, 'netns', right);
      ip('-n', left, 'addr', 'add', `10.99.${i}.1/30`, 'dev', `r${i}`);
      ip('-n', right, 'addr', 'add', `10.99.${i}.2/30`, 'dev', `l${i}`);
      ip('-n', left, 'link', 'set', `r${i}`, 'up');
      ip('-n', right, 'link', 'set', `l${i}`, 'up');
    }
    ip('-n', namespaces[0]!, 'route', 'add', 'default', 'via', '10.99.0.2');
    for (let i = 1; i <= routers; i++) {
      sysctl(namespaces[i]!, 'net.ipv4.ip_forward', '1');
      ip('-n', namespaces[i]!, 'route', 'add', 'default', 'via', `10.99.${i}.2`);
      if (i > 1) ip('-n', namespaces[i]!, 'route', 'add', '10.99.0.0/30', 'via', `10.99.${i - 1}.1`);
    }
    ip('-n', namespaces[routers + 1]!, 'route', 'add', 'default', 'via', `10.99.${routers}.1`);
    sysctl(namespaces[routers + 1]!, 'net.ipv4.icmp_echo_ignore_all', '1');
  } catch (e) {
    void destroy();
    throw e;
  }
  return {
    agentNs: namespaces[0]!,
    agentAddress: '10.99.0.1',
    targetNs: namespaces[routers + 1]!,
    targetAddress: `10.99.${routers}.2`,
    namespaces,
    run(ns, script, args) {
      const child = spawn('ip', ['netns', 'exec', ns, process.execPath, join(REPO_ROOT, script), ...args], {
        cwd: REPO_ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.add(child);
      return child;
    },
    destroy,
  };
}
