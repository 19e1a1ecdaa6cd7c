import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { hostSourceSchema } from '../../src/agent/sources/hostSchema.js';
import { HostSource } from '../../src/agent/sources/hostSource.js';
import { parseMemInfo } from '../../src/agent/sources/procStats.js';

/**
 * Steps of the host source's `mem` around a 1 GiB allocation, for `src/agent/sources/hostLoad.timing.test.ts`.
 * Each round: an allocator child starts and settles; `mem` is read; the child touches 1 GiB and
 * says so; `mem` is read; the child is killed (its memory is freed before its exit is reported);
 * `mem` is read. Next to each reading the kernel's `AnonPages` (`/proc/meminfo`) is read: the
 * anonymous memory of every process, so its move is the allocation plus what the machine's other
 * processes did meanwhile (on a shared machine at load average 25 a normal-priority child took up to
 * 5 s to touch 1 GiB, and the others' memory moved by up to 0.66 GiB in that time). A control round
 * does the same with a child that touches nothing. Prints one JSON line
 * `{rises, falls, anonRises, anonFalls, controls}` (bytes). Argument: rounds.
 */
const rounds = Number(process.argv[2] ?? 5);
const GiB = 2 ** 30;
const total = parseMemInfo(await readFile('/proc/meminfo', 'utf8')).total;
const source = new HostSource(hostSourceSchema.parse({}), undefined);
const anonBytes = async (): Promise<number> => {
  const m = /^AnonPages:\s+(\d+) kB$/m.exec(await readFile('/proc/meminfo', 'utf8'));
  return Number(m![1]) * 1024;
};
/** The agent's `mem` (bytes) and AnonPages read around it (their mean). */
const memBytes = async (): Promise<{ mem: number; anon: number }> => {
  await source.baseline();
  const before = await anonBytes();
  const mem = (((await source.read()).sample.mem as number) / 100) * total;
  return { mem, anon: (before + (await anonBytes())) / 2 };
};

async function line(child: ChildProcess, text: string): Promise<void> {
  let out = '';
  child.stdout!.setEncoding('utf8');
  while (!out.includes(text)) {
    const [chunk] = (await once(child.stdout!, 'data')) as [string];
    out += chunk;
  }
}

/** One round: the moves of `mem` when a child touches `bytes` (0: the control) and when it exits. */
async function round(bytes: number): Promise<{ rise: number; fall: number; anonRise: number; anonFall: number }> {
  const child = spawn(
    process.execPath,
    [
      '-e',
      `process.stdout.write("ready\\n"); process.stdin.once("data", () => { globalThis.b = Buffer.allocUnsafeSlow(${bytes} || 1).fill(1); process.stdout.write("allocated\\n"); }); setInterval(() => {}, 1000);`,
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  await line(child, 'ready');
  await new Promise((r) => setTimeout(r, 100));
  const m0 = await memBytes();
  child.stdin!.write('go\n');
  await line(child, 'allocated');
  const m1 = await memBytes();
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
  const m2 = await memBytes();
  return { rise: m1.mem - m0.mem, fall: m1.mem - m2.mem, anonRise: m1.anon - m0.anon, anonFall: m1.anon - m2.anon };
}

const rises: number[] = [];
const falls: number[] = [];
const anonRises: number[] = [];
const anonFalls: number[] = [];
const controls: number[] = [];
for (let i = 0; i < rounds; i++) {
  const step = await round(GiB);
  rises.push(step.rise);
  falls.push(step.fall);
  anonRises.push(step.anonRise);
  anonFalls.push(step.anonFall);
  const control = await round(0);
  controls.push(control.rise, control.fall);
}
process.stdout.write(`${JSON.stringify({ rises, falls, anonRises, anonFalls, controls })}\n`);
