import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './engineProcess.js';
import { addNamespace, ip, namespaceLifecycle, sysctl, testNetworkTag, type TestNetwork } from './routedPath.js';

/** The compiled delay line (`tunDelayLine.c`), built by test/setup.sh. */
export const TUN_DELAY_LINE = join(REPO_ROOT, '.tmp', 'tools', 'tun-delay-line');

/** Packets the delay line forwarded and dropped, per direction (agent → target, target → agent). */
export interface DelayLineCounters {
  readonly toTarget: { readonly forwarded: number; readonly dropped: number; readonly overflowed: number };
  readonly toAgent: { readonly forwarded: number; readonly dropped: number; readonly overflowed: number };
}

/** Two namespaces joined by the delay line; `destroy()` also stops it. */
export interface DelayLine extends TestNetwork {
  /** Stops the delay line (its devices vanish with it) and resolves with its counters; `destroy()` afterwards removes the namespaces. */
  stopLine(): Promise<DelayLineCounters>;
}

/** The delay and loss of a {@link DelayLine}. */
export interface DelayLineOptions {
  /** One-way delay agent → target, ms (fractions allowed: the line counts microseconds). */
  readonly toTargetMs: number;
  /** One-way delay target → agent, ms. */
  readonly toAgentMs: number;
  /** Share of agent → target packets dropped, in [0, 1]. */
  readonly loss?: number;
  /** Seed of the loss draws. */
  readonly seed?: number;
}

/**
 * Two network namespaces, agent and target, joined by a point-to-point link made of two TUN devices
 * (`dl0` in each) and the delay line between them (`tunDelayLine.c`): every packet is held the set
 * one-way delay from the moment the line read it, so a round trip takes at least
 * `toTargetMs + toAgentMs`; agent → target packets are dropped with probability `loss` (seeded).
 * No `tc netem` or NFQUEUE is needed. Addresses exist only inside the namespaces: agent 10.98.0.1 /
 * fd00:98::1, target 10.98.0.2 / fd00:98::2 (0 hops apart). The target's kernel answers TCP and
 * ICMP itself. Needs root and the built tool (`bash test/setup.sh`).
 * @throws Error when the tool is missing or fails to start, or `ip` fails; what was made is removed.
 */
export async function createDelayLine(options: DelayLineOptions): Promise<DelayLine> {
  if (!existsSync(TUN_DELAY_LINE)) throw new Error(`${TUN_DELAY_LINE} is missing: run bash test/setup.sh`);
  const tag = testNetworkTag();
  const namespaces = [`${tag}a`, `${tag}t`] as const;
  const us = (ms: number): string => String(Math.round(ms * 1000));
  let line: ReturnType<typeof spawn> | undefined;
  let out = '';
  let counters: DelayLineCounters | undefined;
  const stopLine = async (): Promise<DelayLineCounters> => {
    if (counters) return counters;
    if (!line || line.exitCode !== null || line.signalCode !== null) throw new Error(`the delay line is not running: ${out}`);
    const exited = once(line, 'exit');
    line.kill('SIGTERM');
    await exited;
    const read = (dir: string): DelayLineCounters['toTarget'] => {
      const m = new RegExp(`${dir} forwarded (\\d+) dropped (\\d+) overflowed (\\d+)`).exec(out);
      if (!m) throw new Error(`the delay line printed no ${dir} counters: ${out}`);
      return { forwarded: Number(m[1]), dropped: Number(m[2]), overflowed: Number(m[3]) };
    };
    counters = { toTarget: read('ab'), toAgent: read('ba') };
    return counters;
  };
  const lifecycle = namespaceLifecycle(namespaces, async () => {
    if (line && line.exitCode === null && line.signalCode === null) {
      line.kill('SIGKILL');
      await once(line, 'exit');
    }
  });
  try {
    for (const ns of namespaces) addNamespace(ns, true);
    line = spawn(TUN_DELAY_LINE, [...namespaces, 'dl0', us(options.toTargetMs), us(options.toAgentMs), String(options.loss ?? 0), String(options.seed ?? 1)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    line.stdout!.setEncoding('utf8').on('data', (c: string) => (out += c));
    line.stderr!.setEncoding('utf8').on('data', (c: string) => (err += c));
    const started = line;
    await new Promise<void>((resolve, reject) => {
      started.stdout!.on('data', () => out.includes('ready\n') && resolve());
      started.once('exit', (code) => reject(new Error(`the delay line exited ${code} before it was ready: ${err}`)));
    });
    for (const [i, ns] of namespaces.entries()) {
      // No router solicitations over the line: little but the test's own packets crosses it.
      sysctl(ns, 'net.ipv6.conf.dl0.router_solicitations', '0');
      ip('-n', ns, 'addr', 'add', `10.98.0.${i + 1}/30`, 'dev', 'dl0');
      ip('-n', ns, 'addr', 'add', `fd00:98::${i + 1}/64`, 'dev', 'dl0', 'nodad');
      ip('-n', ns, 'link', 'set', 'dl0', 'up');
    }
  } catch (e) {
    await lifecycle.destroy();
    throw e;
  }
  return {
    agentNs: namespaces[0],
    agentAddress: '10.98.0.1',
    targetNs: namespaces[1],
    targetAddress: '10.98.0.2',
    agentAddress6: 'fd00:98::1',
    targetAddress6: 'fd00:98::2',
    namespaces,
    run: lifecycle.run,
    destroy: lifecycle.destroy,
    stopLine,
  };
}
