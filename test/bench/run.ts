import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release, tmpdir, totalmem } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { BenchContext, BenchGroup, SampleDetails } from './harness/benchGroup.js';
import { renderSection, replaceSection, tablesOfGroup, type GroupRun } from './harness/benchPage.js';
import { ProcessSupervisor } from './harness/processes.js';
import { renderMarkdown, summariseTable, type RowSamples, type TableSummary } from './harness/report.js';

/**
 * `npm run bench [-- options]`: discovers the benchmark groups (`*.bench.js` beside this file),
 * runs the selected ones within the time budget, prints one comparison table (Markdown), writes
 * it as JSON, and rewrites the section of every group that ran completely in docs/BENCHMARKS.md
 * (harness/benchPage.ts). Options:
 *   --filter a,b   run rows whose group, table or row id contains a or b (case-insensitive);
 *                  the baselines of their tables always run too; an on-demand group (a scenario
 *                  longer than a minute) runs only when a term is exactly its name
 *   --runs N       runs per row (default 3; the table shows the median and min–max)
 *   --budget S     refuse selections estimated above S seconds (default 900)
 *   --json FILE    where to write the results (default bench-results.json)
 *   --page FILE    the page whose group sections are rewritten (default docs/BENCHMARKS.md)
 *   --no-page      write no page
 *   --cpu-prof DIR Node servers the groups start write V8 CPU profiles there (numbers taken
 *                  with profiling on are not comparable, so no page is written; summarise with
 *                  cpuProfileTop.js)
 *   --list         print groups, tables, rows and estimates, then exit
 * Exit status: 0 when every selected row has samples, 1 when some failed, 2 on bad usage.
 */

/** The default time budget of a selection (seconds): a bare `npm run bench` must fit in it. */
const DEFAULT_BUDGET_SECONDS = 900;
/** The repository root, from dist/test/bench/run.js. */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

interface Options {
  filters: string[];
  runs: number;
  budgetSeconds: number;
  jsonFile: string;
  /** Absolute path of the page to rewrite, or undefined for none. */
  page: string | undefined;
  cpuProfileDir: string | undefined;
  list: boolean;
}

interface TableDef {
  id: string;
  title: string;
  measure: string;
  baseline: string | undefined;
  rows: RowSamples[];
}

function parseOptions(argv: readonly string[]): Options {
  const o: Options = {
    filters: [],
    runs: 3,
    budgetSeconds: DEFAULT_BUDGET_SECONDS,
    jsonFile: 'bench-results.json',
    page: join(ROOT, 'docs/BENCHMARKS.md'),
    cpuProfileDir: undefined,
    list: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) usage(`${arg} needs a value`);
      return v;
    };
    if (arg === '--filter')
      o.filters.push(
        ...value()
          .split(',')
          .map((s) => s.trim().toLowerCase())
          .filter(Boolean),
      );
    else if (arg === '--runs') o.runs = positiveInt(arg, value());
    else if (arg === '--budget') o.budgetSeconds = positiveInt(arg, value());
    else if (arg === '--json') o.jsonFile = value();
    else if (arg === '--page') o.page = resolve(value());
    else if (arg === '--no-page') o.page = undefined;
    else if (arg === '--cpu-prof') o.cpuProfileDir = resolve(value());
    else if (arg === '--list') o.list = true;
    else usage(`unknown option ${arg}`);
  }
  return o;
}

function positiveInt(name: string, v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) usage(`${name} expects a positive integer, got "${v}"`);
  return n;
}

function usage(problem: string): never {
  process.stderr.write(
    `bench: ${problem}\nusage: npm run bench -- [--filter a,b] [--runs N] [--budget SECONDS] [--json FILE] [--page FILE | --no-page] [--cpu-prof DIR] [--list]\n`,
  );
  process.exit(2);
}

async function discoverGroups(): Promise<BenchGroup[]> {
  const dir = dirname(fileURLToPath(import.meta.url));
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.bench.js'))
    .sort();
  const groups: BenchGroup[] = [];
  for (const f of files) {
    const mod = (await import(pathToFileURL(join(dir, f)).href)) as { default?: BenchGroup };
    const g = mod.default;
    if (!g || typeof g.run !== 'function' || typeof g.estimateSeconds !== 'function' || !Array.isArray(g.tables)) {
      throw new Error(`${f}: the default export is not a BenchGroup (name, description, tables, estimateSeconds, run)`);
    }
    if (groups.some((x) => x.name === g.name)) throw new Error(`${f}: a group named "${g.name}" exists already`);
    groups.push(g);
  }
  return groups;
}

/** Merges the groups' table parts into tables; checks one baseline and one measure per table, unique rows. */
function buildTables(groups: readonly BenchGroup[]): Map<string, TableDef> {
  const tables = new Map<string, TableDef>();
  for (const g of groups) {
    for (const part of g.tables) {
      let t = tables.get(part.id);
      if (!t) {
        t = { id: part.id, title: part.title ?? part.id, measure: part.measure, baseline: undefined, rows: [] };
        tables.set(part.id, t);
      }
      if (t.measure !== part.measure) throw new Error(`table ${part.id}: group ${g.name} measures "${part.measure}", others "${t.measure}"`);
      if (part.title) t.title = part.title;
      if (part.baseline) {
        if (t.baseline) throw new Error(`table ${part.id}: more than one group names a baseline`);
        if (!part.rows.some((r) => r.id === part.baseline)) throw new Error(`table ${part.id}: baseline ${part.baseline} is not a row of group ${g.name}`);
        t.baseline = part.baseline;
      }
      for (const r of part.rows) {
        if (t.rows.some((x) => x.id === r.id)) throw new Error(`table ${part.id}: row ${r.id} is declared twice`);
        t.rows.push({ id: r.id, label: r.label, group: g.name, values: [], details: [] });
      }
    }
  }
  for (const t of tables.values()) if (!t.baseline) throw new Error(`table ${t.id}: no group names its baseline row`);
  return tables;
}

/**
 * Rows the filters select, plus the baseline of every table with a selected row. Keys:
 * `table/row`. Rows of an on-demand group are selected only when a filter term is its name.
 */
function selectRows(tables: ReadonlyMap<string, TableDef>, filters: readonly string[], onDemand: ReadonlySet<string>): Set<string> {
  const wanted = new Set<string>();
  for (const t of tables.values()) {
    const picked = t.rows.filter((r) =>
      onDemand.has(r.group)
        ? filters.includes(r.group.toLowerCase())
        : filters.length === 0 || filters.some((f) => [r.group, t.id, r.id, `${t.id}/${r.id}`].some((s) => s.toLowerCase().includes(f))),
    );
    if (picked.length === 0) continue;
    for (const r of picked) wanted.add(`${t.id}/${r.id}`);
    wanted.add(`${t.id}/${t.baseline}`);
  }
  return wanted;
}

function machine(): { cpu: string; cores: number; memoryGiB: number; kernel: string; node: string } {
  const c = cpus();
  return {
    cpu: c[0]?.model ?? 'unknown',
    cores: c.length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    kernel: release(),
    node: process.version,
  };
}

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  const groups = await discoverGroups();
  const tables = buildTables(groups);
  const onDemand = new Set(groups.filter((g) => g.onDemand).map((g) => g.name));
  const wanted = selectRows(tables, options.filters, onDemand);
  const groupOf = new Map<string, string>();
  for (const t of tables.values()) for (const r of t.rows) groupOf.set(`${t.id}/${r.id}`, r.group);
  const selected = groups.filter((g) => [...wanted].some((k) => groupOf.get(k) === g.name));
  const estimates = new Map(selected.map((g) => [g.name, g.estimateSeconds(options.runs)]));
  const estimate = [...estimates.values()].reduce((a, b) => a + b, 0);

  if (options.list) {
    for (const g of groups) {
      const when = g.onDemand ? `, on demand: --filter ${g.name}` : '';
      process.stdout.write(`${g.name} (~${Math.round(g.estimateSeconds(options.runs))} s for ${options.runs} runs${when}): ${g.description}\n`);
      for (const part of g.tables) {
        for (const r of part.rows) process.stdout.write(`  ${part.id}/${r.id}${part.baseline === r.id ? ' (baseline)' : ''}  ${r.label}\n`);
      }
    }
    const verdict = estimate > options.budgetSeconds ? 'over the budget: refused, narrow it with --filter' : 'within the budget';
    process.stdout.write(`selection: ~${Math.round(estimate)} s of ${options.budgetSeconds} s for ${options.runs} runs, ${verdict}\n`);
    return 0;
  }
  if (selected.length === 0) usage(`no benchmark row matches --filter ${options.filters.join(',')}`);
  if (estimate > options.budgetSeconds) {
    const parts = [...estimates].map(([n, s]) => `${n} ~${Math.round(s)} s`).join(', ');
    usage(`the selection needs ~${Math.round(estimate)} s (${parts}), over the ${options.budgetSeconds} s budget; narrow it with --filter or raise --budget`);
  }

  if (options.cpuProfileDir) mkdirSync(options.cpuProfileDir, { recursive: true });
  const supervisor = new ProcessSupervisor();
  const root = mkdtempSync(join(tmpdir(), 'gslbd-bench-'));
  const cleanUp = (): void => {
    supervisor.killAllNow();
    rmSync(root, { recursive: true, force: true });
  };
  let current: AbortController | undefined;
  process.on('exit', cleanUp);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(sig, () => {
      process.stderr.write(`\nbench: ${sig}, stopping every benchmark process\n`);
      current?.abort(new Error(sig));
      cleanUp();
      process.exit(128 + (sig === 'SIGINT' ? 2 : sig === 'SIGTERM' ? 15 : 1));
    });
  }

  const started = Date.now();
  const loadBefore = loadavg();
  process.stderr.write(
    `bench: ${selected.map((g) => g.name).join(', ')}; ${options.runs} runs; estimated ${Math.round(estimate)} s of ${options.budgetSeconds} s\n`,
  );
  const notes: { group: string; text: string }[] = [];
  const ranGroups: { group: BenchGroup; startedAt: number; seconds: number; loadBefore: number; loadAfter: number }[] = [];
  let tempCount = 0;
  for (const g of selected) {
    const rowsOf = new Map<string, RowSamples>();
    for (const t of tables.values()) for (const r of t.rows) if (r.group === g.name) rowsOf.set(`${t.id}/${r.id}`, r);
    const elapsed = (Date.now() - started) / 1000;
    if (elapsed + estimates.get(g.name)! > options.budgetSeconds * 1.25) {
      for (const r of rowsOf.values()) r.error = 'skipped: time budget used up';
      continue;
    }
    const allowanceMs = Math.max(estimates.get(g.name)! * 1.5, estimates.get(g.name)! + 60) * 1000;
    const controller = new AbortController();
    current = controller;
    const timer = setTimeout(() => controller.abort(new Error(`group overran its allowance of ${Math.round(allowanceMs / 1000)} s`)), allowanceMs);
    const ctx: BenchContext = {
      runs: options.runs,
      wants: (table, row) => wanted.has(`${table}/${row}`),
      record(table: string, row: string, value: number, details?: SampleDetails) {
        const r = rowsOf.get(`${table}/${row}`);
        if (!r) throw new Error(`group ${g.name} recorded ${table}/${row}, which it does not declare`);
        if (!Number.isFinite(value)) throw new Error(`group ${g.name} recorded a non-finite value for ${table}/${row}`);
        r.values.push(value);
        r.details.push(details ?? {});
      },
      note: (text) => notes.push({ group: g.name, text }),
      log: (text) => process.stderr.write(`[${g.name} ${Math.round((Date.now() - started) / 1000)}s] ${text}\n`),
      processes: supervisor,
      tempDir(purpose) {
        const dir = join(root, `${String(++tempCount).padStart(2, '0')}-${purpose.replace(/[^a-z0-9-]/gi, '_')}`);
        mkdirSync(dir);
        return dir;
      },
      signal: controller.signal,
      cpuProfileDir: options.cpuProfileDir,
    };
    const groupStarted = Date.now();
    const groupLoadBefore = loadavg()[0]!;
    try {
      await g.run(ctx);
    } catch (e) {
      const reason = controller.signal.aborted ? (controller.signal.reason as Error).message : (e as Error).message;
      process.stderr.write(`bench: group ${g.name} failed: ${(e as Error).stack ?? reason}\n`);
      for (const r of rowsOf.values()) if (r.values.length === 0) r.error = reason.split('\n')[0]!;
    } finally {
      clearTimeout(timer);
      await supervisor.stopAll();
    }
    ctx.log(`done in ${Math.round((Date.now() - groupStarted) / 1000)} s (estimated ${Math.round(estimates.get(g.name)!)} s)`);
    ranGroups.push({ group: g, startedAt: groupStarted, seconds: (Date.now() - groupStarted) / 1000, loadBefore: groupLoadBefore, loadAfter: loadavg()[0]! });
  }

  const summaries: TableSummary[] = [];
  for (const t of tables.values()) {
    const rows = t.rows.filter((r) => wanted.has(`${t.id}/${r.id}`));
    if (rows.length > 0) summaries.push(summariseTable(t.id, t.title, t.measure, t.baseline!, rows));
  }
  const result = {
    command: `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`,
    startedAt: new Date(started).toISOString(),
    seconds: Math.round((Date.now() - started) / 1000),
    runs: options.runs,
    machine: { ...machine(), loadAverageBefore: loadBefore.map((l) => Number(l.toFixed(2))), loadAverageAfter: loadavg().map((l) => Number(l.toFixed(2))) },
    tables: summaries,
    notes,
  };
  const markdown = renderMarkdown(summaries);
  const m = result.machine;
  process.stdout.write(
    `\n${result.command}  (${result.startedAt}, ${result.seconds} s; ${m.cpu}, ${m.cores} cores, node ${m.node}; ` +
      `load average ${m.loadAverageBefore[0]} before, ${m.loadAverageAfter[0]} after)\n\n${markdown}\n`,
  );
  if (notes.length > 0) process.stdout.write(`\n${notes.map((n) => `- ${n.group}: ${n.text}`).join('\n')}\n`);
  const jsonPath = resolve(options.jsonFile);
  writeFileSync(jsonPath, `${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(`\nresults: ${jsonPath}\n`);
  if (options.page && !options.cpuProfileDir) {
    writePage(options.page, summaries, {
      command: result.command,
      runs: options.runs,
      machine: `${m.cpu}, ${m.cores} cores, node ${m.node}`,
      ran: ranGroups,
      complete: (g) => [...tables.values()].every((t) => t.rows.every((r) => r.group !== g || (wanted.has(`${t.id}/${r.id}`) && r.values.length > 0))),
      estimate: (g) => estimates.get(g)!,
      notes: (g) => notes.filter((n) => n.group === g).map((n) => n.text),
    });
  }
  return summaries.every((t) => t.rows.every((r) => r.runs > 0)) ? 0 : 1;
}

/** The commit the numbers come from: `git rev-parse --short HEAD`, marked when the work tree has changes. */
function commitOfRun(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    const changed = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: ROOT, encoding: 'utf8' }).trim() !== '';
    return changed ? `${head} + uncommitted changes` : head;
  } catch {
    return 'an unknown commit (no git)';
  }
}

/**
 * Rewrites the page's section of every group that ran all its rows with samples; a group run in
 * part (a narrower filter, a failed row) leaves its section as it was, and says so.
 */
function writePage(
  page: string,
  summaries: readonly TableSummary[],
  run: {
    command: string;
    runs: number;
    machine: string;
    ran: readonly { group: BenchGroup; startedAt: number; seconds: number; loadBefore: number; loadAfter: number }[];
    complete: (group: string) => boolean;
    estimate: (group: string) => number;
    notes: (group: string) => string[];
  },
): void {
  let text = readFileSync(page, 'utf8');
  const commit = commitOfRun();
  const written: string[] = [];
  const left: string[] = [];
  for (const r of run.ran) {
    const name = r.group.name;
    if (!run.complete(name)) {
      left.push(name);
      continue;
    }
    const section: GroupRun = {
      group: name,
      description: r.group.description,
      command: run.command,
      commit,
      startedAt: new Date(r.startedAt).toISOString(),
      seconds: r.seconds,
      estimateSeconds: run.estimate(name),
      runs: run.runs,
      machine: run.machine,
      loadBefore: r.loadBefore,
      loadAfter: r.loadAfter,
      tables: tablesOfGroup(summaries, name),
      notes: run.notes(name),
    };
    text = replaceSection(text, name, renderSection(section));
    written.push(name);
  }
  writeFileSync(page, text);
  const rel = relative(ROOT, page);
  if (written.length > 0) process.stdout.write(`${rel}: sections of ${written.join(', ')} rewritten\n`);
  if (left.length > 0) process.stdout.write(`${rel}: ${left.join(', ')} ran in part (filter or failures): their sections are unchanged\n`);
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`bench: ${(e as Error).stack ?? String(e)}\n`);
    process.exit(1);
  },
);
