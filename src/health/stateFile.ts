import { readFileSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import { z } from 'zod';

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

/** What reading the state file at start-up gave. */
export type LoadedState =
  | { readonly kind: 'none'; readonly reason: string }
  | { readonly kind: 'loaded'; readonly ageMs: number; readonly state: SavedState; readonly statusesUsed: boolean };

/**
 * Reads the state file written by {@link writeStateFile}. Check states are used only when the file
 * is at most `maxAgeMs` old (an older file says little about now: its checks start unknown);
 * administrative overrides are used at any age, because they are an operator's decision, not a
 * measurement. A missing, unreadable or malformed file gives `none` with the reason.
 */
export function readStateFile(path: string, nowMs: number, maxAgeMs: number): LoadedState {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    return { kind: 'none', reason: (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no state file yet' : `cannot read: ${(e as Error).message}` };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    return { kind: 'none', reason: `not JSON: ${(e as Error).message}` };
  }
  const r = stateFileSchema.safeParse(parsed);
  if (!r.success) return { kind: 'none', reason: `not a gslbd health state file: ${r.error.issues[0]?.message ?? 'invalid'}` };
  const ageMs = Math.max(0, nowMs - r.data.writtenAtMs);
  return { kind: 'loaded', ageMs, state: r.data, statusesUsed: ageMs <= maxAgeMs };
}

/**
 * Writes the state file atomically (a temporary file beside it, then rename), so a crash never
 * leaves half a file.
 * @throws Error from the file system (the caller logs it and keeps running).
 */
export async function writeStateFile(path: string, state: SavedState): Promise<void> {
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(state)}\n`, { mode: 0o644 });
  await rename(tmp, path);
}
