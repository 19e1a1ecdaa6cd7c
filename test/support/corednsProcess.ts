import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from './engineProcess.js';
import { freePort } from './freePort.js';
import { waitFor } from './waitFor.js';

/** The custom CoreDNS build (`coredns-bridge/`, built by `test/setup.sh`). */
export const COREDNS = join(REPO_ROOT, 'coredns-bridge/bin/coredns-gslb');

/** A running coredns-gslb. */
export interface CorednsProcess {
  readonly address: string;
  readonly port: number;
  /** Everything it wrote so far. */
  output(): string;
  /** SIGTERM, then SIGKILL after 5 s; removes its directory. */
  stop(): Promise<void>;
}

const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

/**
 * Starts coredns-gslb on a free loopback port with the Corefile `corefile(port, readyPort)`
 * returns (its server block must `bind 127.0.0.1` on `port` and run `ready 127.0.0.1:readyPort`),
 * and resolves once `/ready` answers 200 (the gslb plugin is connected to the engine). Retries
 * with new ports when one was taken in between (freePort.ts).
 * @throws Error when the binary is missing (`bash test/setup.sh` builds it), or it exits or is not ready within 15 s.
 */
export async function startCoredns(corefile: (port: number, readyPort: number) => string): Promise<CorednsProcess> {
  if (!existsSync(COREDNS)) throw new Error(`${COREDNS} is missing: run \`bash test/setup.sh\` (it builds the binary)`);
  for (let attempt = 0; ; attempt++) {
    const [port, readyPort] = [await freePort('127.0.0.1'), await freePort('127.0.0.1')];
    const dir = mkdtempSync(join(tmpdir(), 'gslbd-coredns-'));
    const file = join(dir, 'Corefile');
    writeFileSync(file, corefile(port, readyPort));
    const child = spawn(COREDNS, ['-conf', file], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    const exited = new Promise<void>((resolve) =>
      child.once('exit', () => {
        children.delete(child);
        resolve();
      }),
    );
    let out = '';
    child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
    const coredns: CorednsProcess = {
      address: '127.0.0.1',
      port,
      output: () => out,
      async stop() {
        if (child.exitCode === null && child.signalCode === null) {
          child.kill('SIGTERM');
          const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
          await exited;
          clearTimeout(killer);
        }
        rmSync(dir, { recursive: true, force: true });
      },
    };
    try {
      await waitFor(
        'coredns-gslb ready (engine connected)',
        async () => {
          if (child.exitCode !== null) throw new Error(`coredns-gslb exited with ${child.exitCode}:\n${out}`);
          const status = await fetch(`http://127.0.0.1:${readyPort}/ready`).then(
            (r) => r.status,
            () => 0,
          );
          return status === 200;
        },
        15000,
        { everyMs: 50, detail: () => out },
      );
      return coredns;
    } catch (e) {
      await coredns.stop();
      if (attempt >= 2 || !/address already in use/.test(out)) throw e;
    }
  }
}
