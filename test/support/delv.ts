import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** What `delv` concluded about one answer. */
export interface DelvResult {
  /** `fully validated` (a positive answer), `negative response, fully validated`, or the failure line (`resolution failed: …`). */
  readonly verdict: string;
  /** True when delv validated the answer (positive or negative) up to the trust anchor. */
  readonly validated: boolean;
  readonly output: string;
}

/**
 * Runs BIND's `delv` (bind9-dnsutils) against an authoritative server with one zone's trust
 * anchor (`trust-anchors { zone static-ds … }`) and that zone as the root of its trust chain
 * (`+root=zone`), so it fetches the DNSKEYs from the server itself and validates the answer.
 * A missing binary fails the test (`bash test/setup.sh`).
 * @param ds the zone's DS as a master-file line (`example.test. IN DS 12345 13 2 ABCD…`).
 */
export async function delv(server: { address: string; port: number }, ds: string, name: string, type: string): Promise<DelvResult> {
  const [owner, , , tag, algorithm, digestType, ...digest] = ds.trim().split(/\s+/);
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-delv-'));
  const anchors = join(dir, 'anchors.conf');
  writeFileSync(anchors, `trust-anchors {\n  ${owner} static-ds ${tag} ${algorithm} ${digestType} "${digest.join('')}";\n};\n`);
  try {
    const output = await new Promise<string>((resolve, reject) => {
      execFile(
        'delv',
        [`@${server.address}`, '-p', String(server.port), '-a', anchors, `+root=${owner}`, '+nomtrace', name, type],
        { timeout: 20000 },
        (err, stdout, stderr) => {
          if (err && (err as NodeJS.ErrnoException).code === 'ENOENT')
            reject(new Error('delv is not installed: run `bash test/setup.sh` (Debian package bind9-dnsutils)'));
          else resolve(`${stdout}${stderr}`);
        },
      );
    });
    const verdict =
      /^; (fully validated|negative response, fully validated|unsigned answer)$/m.exec(output)?.[1] ??
      /^;; (resolution failed: .*)$/m.exec(output)?.[1] ??
      output.trim();
    return { verdict, validated: verdict.endsWith('fully validated'), output };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
