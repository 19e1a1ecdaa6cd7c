import { readFileSync } from 'node:fs';

/**
 * Summarises a V8 CPU profile (`node --cpu-prof`, e.g. from `npm run bench -- --cpu-prof DIR`):
 * the functions with the most self time and the most inclusive time, as percentages of the busy
 * (non-idle) samples. With `--from NAME`, samples before the first one whose stack contains the
 * function NAME are dropped (e.g. `--from onMessage` skips a server's start-up).
 *
 * Usage: `node dist/test/bench/cpuProfileTop.js FILE.cpuprofile [--from NAME] [--top N]`
 */

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
}

const args = process.argv.slice(2);
const file = args[0];
if (!file) {
  process.stderr.write('usage: cpuProfileTop.js FILE.cpuprofile [--from FUNCTION] [--top N]\n');
  process.exit(2);
}
const option = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const top = Number(option('--top') ?? 25);
const from = option('--from');

const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const stack = (id: number): ProfileNode[] => {
  const out: ProfileNode[] = [];
  for (let x: number | undefined = id; x !== undefined; x = parent.get(x)) out.push(byId.get(x)!);
  return out;
};
const label = (n: ProfileNode): string => {
  const url = n.callFrame.url.replace(/^.*\/(node_modules\/|dist\/)/, '$1');
  return `${n.callFrame.functionName || '(anonymous)'} ${url}:${n.callFrame.lineNumber + 1}`;
};

const start = from ? profile.samples.findIndex((id) => stack(id).some((n) => n.callFrame.functionName === from)) : 0;
if (start < 0) {
  process.stderr.write(`no sample has ${from} on its stack\n`);
  process.exit(1);
}
const self = new Map<string, number>();
const inclusive = new Map<string, number>();
let busy = 0;
for (const id of profile.samples.slice(start)) {
  const frames = stack(id);
  const leaf = frames[0]!.callFrame.functionName;
  if (leaf === '(idle)') continue;
  busy++;
  self.set(label(frames[0]!), (self.get(label(frames[0]!)) ?? 0) + 1);
  for (const key of new Set(frames.filter((f) => f.callFrame.functionName !== '(root)').map(label))) inclusive.set(key, (inclusive.get(key) ?? 0) + 1);
}
const print = (title: string, m: Map<string, number>): void => {
  process.stdout.write(`${title}\n`);
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) process.stdout.write(`${((100 * v) / busy).toFixed(1).padStart(6)}%  ${k}\n`);
};
process.stdout.write(`${busy} busy samples of ${profile.samples.length - start}\n`);
print('self time', self);
print('inclusive time', inclusive);
