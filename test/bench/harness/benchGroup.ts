import type { ProcessSupervisor } from './processes.js';

/**
 * A benchmark group: one file `test/bench/<name>.bench.ts` whose default export is a
 * `BenchGroup`. `npm run bench` discovers every `*.bench.js` next to the compiled runner, runs the
 * groups the filter selects (plus the groups owning the baselines they compare against), and
 * prints one comparison table over all of them. See test/bench/README.md, "Adding a benchmark
 * group".
 */
export interface BenchGroup {
  /** Short name for `--filter` and progress lines, e.g. `resolve`. Unique over all groups. */
  readonly name: string;
  /** One line: what the group measures and against what. */
  readonly description: string;
  /**
   * True for a scenario longer than a minute: the group is left out of a bare `npm run bench` and
   * runs only when a `--filter` term is exactly its name (each issue may add at most 60 s to the
   * default run; CONTRIBUTING.md). Such a group owns the tables it adds rows to.
   */
  readonly onDemand?: boolean;
  /**
   * The table rows this group measures. A table is identified by `table.id`; several groups may
   * add rows to the same table, and exactly one of them names its baseline row.
   */
  readonly tables: readonly BenchTableRows[];
  /**
   * Wall-clock seconds the whole group needs for `runs` runs, set-up included (loading data,
   * starting and stopping servers). The runner refuses a selection whose sum exceeds the time
   * budget, and aborts a group that runs far past its estimate.
   */
  estimateSeconds(runs: number): number;
  /**
   * Measures every wanted row `ctx.runs` times and calls `ctx.record` once per row per run. Must
   * start servers through `ctx.processes` (so they are killed on errors and SIGINT) and stop
   * measuring when `ctx.signal` aborts. A row with no sample shows as failed; a thrown error
   * fails the group's remaining rows but not the other groups.
   */
  run(ctx: BenchContext): Promise<void>;
}

/** A group's part of one comparison table. */
export interface BenchTableRows {
  /** Table id, e.g. `resolve`; rows of all groups with this id form one table. */
  readonly id: string;
  /** Heading of the table (only needed from the group that names the baseline). */
  readonly title?: string;
  /** Unit of the rows' values, higher is better: `decisions/s`, `queries/s`, `lookups/s`. */
  readonly measure: string;
  /** Row id the ratios of this table are taken against; exactly one group of the table sets it. */
  readonly baseline?: string;
  readonly rows: readonly BenchRow[];
}

/** One row: an id for filters and JSON, and a label for the table. */
export interface BenchRow {
  /** Unique inside its table, e.g. `gslbd-gslb-ecs`. */
  readonly id: string;
  readonly label: string;
}

/**
 * Named extra numbers recorded with a sample, e.g. `{ 'p99 µs': 4.1, 'resolve CPU %': 7.5 }`.
 * The unit is part of the name. The table shows the median of each over the runs.
 */
export type SampleDetails = Readonly<Record<string, number>>;

/** What a running group gets from the runner. */
export interface BenchContext {
  /** Runs per row (≥ 1; 3 by default); report the median and the min–max spread. */
  readonly runs: number;
  /** True when the row is selected by the filter (baselines of selected tables always are). */
  wants(tableId: string, rowId: string): boolean;
  /** Records one run's value (in the table's measure) of a row, with optional details. */
  record(tableId: string, rowId: string, value: number, details?: SampleDetails): void;
  /** A note printed under the table and stored in the JSON (set-up facts, caveats, checks). */
  note(text: string): void;
  /** Progress line on stderr. */
  log(text: string): void;
  /** Starts and tracks child processes; every one is killed when the group ends, fails or is interrupted. */
  readonly processes: ProcessSupervisor;
  /** A fresh temporary directory, removed when the runner exits. */
  tempDir(purpose: string): string;
  /** Aborted when the group overruns its time allowance or the run is interrupted. */
  readonly signal: AbortSignal;
  /**
   * Set by `--cpu-prof DIR`: start the Node servers under test with
   * `--cpu-prof --cpu-prof-dir=DIR` (profiles are written when they stop).
   */
  readonly cpuProfileDir: string | undefined;
}
