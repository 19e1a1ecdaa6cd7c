import { renderMarkdown, type TableSummary } from './report.js';

/**
 * docs/BENCHMARKS.md keeps one section per benchmark group, the group's latest complete run,
 * which `npm run bench` writes itself: each section sits between the markers
 * `<!-- bench:NAME:start -->` and `<!-- bench:NAME:end -->`; a group without a section yet gets one
 * before `<!-- bench:sections:end -->`. Everything outside the markers is written by hand.
 */

/** Where and how one group's numbers were produced. */
export interface GroupRun {
  readonly group: string;
  readonly description: string;
  /** The command as typed, e.g. `npm run bench -- --filter resolve`. */
  readonly command: string;
  /** `git rev-parse --short HEAD`, with ` + uncommitted changes` when the work tree differs. */
  readonly commit: string;
  /** When the group started, ISO 8601 UTC. */
  readonly startedAt: string;
  /** Wall-clock seconds the group took, and its declared estimate. */
  readonly seconds: number;
  readonly estimateSeconds: number;
  readonly runs: number;
  /** One line: CPU model, cores, Node version. */
  readonly machine: string;
  /** 1-minute load average when the group started and when it ended. */
  readonly loadBefore: number;
  readonly loadAfter: number;
  /** The group's tables: its own rows and each table's baseline row. */
  readonly tables: readonly TableSummary[];
  readonly notes: readonly string[];
}

/** The marker lines around a group's section. */
export function markers(group: string): { start: string; end: string } {
  return { start: `<!-- bench:${group}:start -->`, end: `<!-- bench:${group}:end -->` };
}

/** The marker before which sections of groups new to the page are added. */
export const SECTIONS_END = '<!-- bench:sections:end -->';

/**
 * The parts of the run's tables that belong in `group`'s section: every table the group has a
 * row in, with the group's rows and the table's baseline row (measured in the same run, so the
 * ratios stay the ones the run printed). Tables without a row of the group are left out.
 */
export function tablesOfGroup(tables: readonly TableSummary[], group: string): TableSummary[] {
  return tables
    .filter((t) => t.rows.some((r) => r.group === group))
    .map((t) => ({ ...t, rows: t.rows.filter((r) => r.group === group || r.id === t.baseline) }));
}

/** One group's section, markers included. */
export function renderSection(run: GroupRun): string {
  const { start, end } = markers(run.group);
  const date = `${run.startedAt.slice(0, 10)} ${run.startedAt.slice(11, 16)} UTC`;
  const lines = [
    start,
    `### ${run.group}`,
    '',
    run.description,
    '',
    `\`${run.command}\` at ${run.commit}, ${date}: ${run.runs} runs, ${Math.round(run.seconds)} s for this group ` +
      `(estimate ${Math.round(run.estimateSeconds)} s); ${run.machine}; load average ${run.loadBefore.toFixed(1)} before, ${run.loadAfter.toFixed(1)} after.`,
    '',
    renderMarkdown(run.tables),
  ];
  if (run.notes.length > 0) lines.push('', ...run.notes.map((n) => `- ${n}`));
  lines.push(end);
  return lines.join('\n');
}

/**
 * The page with `section` in place of the group's old section, or added before
 * {@link SECTIONS_END} when the group has none.
 * @throws Error when the page has neither the group's markers nor {@link SECTIONS_END}, or a
 * start marker without its end.
 */
export function replaceSection(page: string, group: string, section: string): string {
  const { start, end } = markers(group);
  const from = page.indexOf(start);
  if (from >= 0) {
    const to = page.indexOf(end, from);
    if (to < 0) throw new Error(`the page has ${start} but no ${end}`);
    return page.slice(0, from) + section + page.slice(to + end.length);
  }
  const at = page.indexOf(SECTIONS_END);
  if (at < 0) throw new Error(`the page has no ${start} and no ${SECTIONS_END} to add it before`);
  return `${page.slice(0, at)}${section}\n\n${page.slice(at)}`;
}
