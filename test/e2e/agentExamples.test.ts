import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { loadAgentConfig } from '../../src/agent/agentProcess.js';

/** The agent's examples: each configuration loads with the agent's schema; the systemd unit verifies with the real `systemd-analyze`. */

const EXAMPLES = fileURLToPath(new URL('../../examples/agent/', import.meta.url));

for (const file of ['agent.yaml', 'prometheus.yaml']) {
  test(`examples/agent/${file} is a valid agent configuration`, (t) => {
    const config = loadAgentConfig(`${EXAMPLES}${file}`);
    t.truthy(config.agent.dc);
  });
}

test('examples/agent/gslbd-agent.service verifies without a warning about it', async (t) => {
  const out = await new Promise<{ code: number; text: string }>((resolve, reject) => {
    execFile('systemd-analyze', ['verify', `${EXAMPLES}gslbd-agent.service`], { timeout: 30_000 }, (err, stdout, stderr) => {
      if (err && (err as NodeJS.ErrnoException).code === 'ENOENT') return reject(new Error('systemd-analyze is not installed (bash test/setup.sh)'));
      resolve({ code: typeof err?.code === 'number' ? err.code : 0, text: `${stdout}${stderr}` });
    });
  });
  t.deepEqual(
    out.text.split('\n').filter((l) => l.includes('gslbd-agent')),
    [],
  );
  t.is(out.code, 0, out.text);
});
