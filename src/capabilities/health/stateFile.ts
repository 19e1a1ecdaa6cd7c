import { statSync } from 'node:fs';
import { rename, unlink, writeFile } from 'node:fs/promises';
import { z } from 'zod';
import { FILE_SIZE_LIMITS, FileKindError, readRegularFile } from '../../core/config/regularFile.js';

/** The last known state of one check, as written to the state file. */
const savedCheckSchema = z.object({
  fingerprint: z.string(),
  status: z.enum(['up', 'down']),
  sinceMs: z.number(),
  lastSuccessMs: z.number(),
});

const stateFileSchema = z.object({
  version: z.literal(1),
  writtenAtMs: z.number(),
  checks: z.record(z.string(), savedCheckSchema),
  overrides: z.record(z.string(), z.enum(['force-up', 'force-down', 'drain'])),
});

export type SavedCheck = z.output<typeof savedCheckSchema>;
export type SavedState = z.output<typeof stateFileSchema>;

/**
 * How far (ms) a state file's `writtenAtMs` may lie in the future and still be trusted: clocks of
 * one host disagree by far less; more means the clock went back (or the file came from elsewhere),
 * and the file's age — what the staleness guard needs — is then unknown.
 */
export const STATE_FILE_FUTURE_TOLERANCE_MS = 60_000;

/** What reading the state file at start-up gave. */
export type LoadedState =
  /** Nothing to read (no file yet, none configured): nothing is lost by writing a new one. */
  | { readonly kind: 'none'; readonly reason: string }
  /**
   * A file (or something) is at the path but cannot be used. `keepAsidePath`: where to move it
   * before the first new state is written, so the overrides in it can be recovered by hand
   * (absent when the path is not a regular file, e.g. a directory, which is never moved).
   */
  | { readonly kind: 'unusable'; readonly path: string; readonly reason: string; readonly keepAsidePath?: string }
  /**
   * `ageMs` is negative for a file written in the future; `statusesUsed` is false when the file is
   * older than the maximum age or more than {@link STATE_FILE_FUTURE_TOLERANCE_MS} in the future.
   */
  | { readonly kind: 'loaded'; readonly ageMs: number; readonly state: SavedState; readonly statusesUsed: boolean };

/**
 * Reads the state file written by {@link writeStateFile}. Check states are used only when the file
 * is at most `maxAgeMs` old and at most {@link STATE_FILE_FUTURE_TOLERANCE_MS} in the future (an
 * older file says little about now, a future one has no known age: its checks start unknown);
 * administrative overrides are used at any age, because they are an operator's decision, not a
 * measurement. A missing file gives `none`; an unreadable, malformed (not JSON, empty, wrong
 * `version`) file gives `unusable` with the reason and, for a regular file, the path to keep it
 * aside at (`<path>.corrupt-<nowMs as ISO time, ':' and '.' as '-'>`).
 */
export function readStateFile(path: string, nowMs: number, maxAgeMs: number): LoadedState {
  let text: string;
  try {
    text = readRegularFile(path, FILE_SIZE_LIMITS.state).toString('utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'none', reason: 'no state file yet' };
    return unusable(path, nowMs, e instanceof FileKindError ? e.reason : `cannot read: ${(e as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    return unusable(path, nowMs, `not JSON: ${(e as Error).message}`);
  }
  const r = stateFileSchema.safeParse(parsed);
  if (!r.success) {
    const issue = r.error.issues[0];
    return unusable(path, nowMs, `not a gslbd health state file: ${issue ? `${issue.path.join('.') || 'file'}: ${issue.message}` : 'invalid'}`);
  }
  const ageMs = nowMs - r.data.writtenAtMs;
  return { kind: 'loaded', ageMs, state: r.data, statusesUsed: ageMs <= maxAgeMs && ageMs >= -STATE_FILE_FUTURE_TOLERANCE_MS };
}

function unusable(path: string, nowMs: number, reason: string): LoadedState {
  let regularFile = false;
  try {
    regularFile = statSync(path).isFile();
  } catch {
    // Gone or not even stat-able: nothing to keep aside.
  }
  const stamp = new Date(nowMs).toISOString().replace(/[:.]/g, '-');
  return regularFile ? { kind: 'unusable', path, reason, keepAsidePath: `${path}.corrupt-${stamp}` } : { kind: 'unusable', path, reason };
}

/**
 * Writes the state file atomically (a temporary file beside it, then rename), so a crash never
 * leaves half a file; on failure the temporary file is removed.
 * @throws Error from the file system (the caller logs it and keeps running).
 */
export async function writeStateFile(path: string, state: SavedState): Promise<void> {
  const tmp = `${path}.${process.pid}.tmp`;
  try {
    await writeFile(tmp, `${JSON.stringify(state)}\n`, { mode: 0o644 });
    await rename(tmp, path);
  } catch (e) {
    await unlink(tmp).catch(() => {});
    throw e;
  }
}
