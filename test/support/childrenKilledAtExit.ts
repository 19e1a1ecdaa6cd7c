import type { ChildProcess } from 'node:child_process';

/**
 * A set for a test file's live child processes, each killed (SIGKILL) when the test process
 * exits, so an engine or a load generator never outlives a failed or interrupted test.
 */
export function childrenKilledAtExit(): Set<ChildProcess> {
  const children = new Set<ChildProcess>();
  process.on('exit', () => {
    for (const c of children) c.kill('SIGKILL');
  });
  return children;
}
