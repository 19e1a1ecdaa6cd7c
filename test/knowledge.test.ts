import test from 'ava';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Self-contained knowledge: every document a comment, README or doc cites is in the repository.
 * A citation of a Markdown file under one of the repository's top folders must name a file that
 * exists, and a section it names (`docs/PRODUCT.md §8`, `docs/notes/lpm.md §3.5`) must be a
 * numbered heading of that file. Citations of documents kept outside the repository (the old
 * product specification, research notes, a development machine's paths) are refused.
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SELF = fileURLToPath(import.meta.url);
const ROOTS = ['README.md', 'CONTRIBUTING.md', 'src', 'test', 'docs', 'examples', 'coredns-bridge', 'native'];
/** Build output, dependencies and local binaries: never written by hand. */
const SKIPPED_DIRS = new Set(['node_modules', 'dist', 'build', 'bin']);

/** A repository-relative Markdown path, then the sections cited right after it (`§2.1, §3.2`, `§3–§4`, `§3.1–3.2`). */
const CITATION =
  /(?<![\w./-])((?:docs|src|test|examples|native|coredns-bridge)\/[\w./-]*?\.md)\b`?((?:\s*(?:,|and|–|-)?\s*§\s?\d+(?:\.\d+)*(?:\s*–\s*§?\d+(?:\.\d+)*)?)*)/g;

/** Citations that point outside the repository, with what to cite instead. */
const FORBIDDEN: readonly [RegExp, string][] = [
  [/(?<!docs\/)\bSPEC(?:\.md)?\s*§/, 'the product contract is docs/PRODUCT.md'],
  [/(?<![\w/.-])notes\s+§/, 'research notes are in docs/notes/'],
  [/\.\.\/shared/, 'documents outside the repository'],
  [/\/work\//, 'an absolute path of a development machine'],
];

function textFiles(): string[] {
  const out: string[] = [];
  const visit = (path: string): void => {
    const name = path.slice(path.lastIndexOf('/') + 1);
    if (statSync(path).isDirectory()) {
      if (SKIPPED_DIRS.has(name) || name.startsWith('.')) return;
      for (const entry of readdirSync(path)) visit(join(path, entry));
      return;
    }
    out.push(path);
  };
  for (const r of ROOTS) visit(join(ROOT, r));
  return out;
}

/** Numbered headings of a Markdown file: `## 3. Multi-source …` → "3", `### 2.1 Bytes …` → "2.1". */
function sectionsOf(path: string, cache: Map<string, Set<string>>): Set<string> {
  let sections = cache.get(path);
  if (sections === undefined) {
    sections = new Set();
    for (const m of readFileSync(path, 'utf8').matchAll(/^#+\s+(\d+(?:\.\d+)*)\.?\s/gm)) sections.add(m[1]!);
    cache.set(path, sections);
  }
  return sections;
}

/** One problem per line: `file:line: what`. */
function problems(): string[] {
  const found: string[] = [];
  const headings = new Map<string, Set<string>>();
  for (const file of textFiles()) {
    if (file === SELF) continue; // its own examples cite what must not be cited
    const bytes = readFileSync(file);
    if (bytes.includes(0)) continue; // binary
    const name = relative(ROOT, file);
    const lines = bytes.toString('utf8').split('\n');
    lines.forEach((line, i) => {
      const at = `${name}:${i + 1}`;
      for (const [pattern, why] of FORBIDDEN) if (pattern.test(line)) found.push(`${at}: ${why}: ${line.trim()}`);
      for (const m of line.matchAll(CITATION)) {
        const target = join(ROOT, m[1]!);
        let exists = true;
        try {
          statSync(target);
        } catch {
          exists = false;
        }
        if (!exists) {
          found.push(`${at}: cites ${m[1]}, which is not in the repository`);
          continue;
        }
        for (const section of m[2]!.matchAll(/\d+(?:\.\d+)*/g)) {
          if (!sectionsOf(target, headings).has(section[0])) found.push(`${at}: ${m[1]} has no section §${section[0]}`);
        }
      }
    });
  }
  return found;
}

test('every cited document is in the repository, with the cited sections, and no citation leaves it', (t) => {
  const found = problems();
  t.deepEqual(found, [], found.join('\n'));
});

test('the check sees a missing document, a missing section and an outside citation', (t) => {
  const line = 'see docs/NOPE.md, docs/PRODUCT.md §99 and docs/notes/lpm.md §3.5';
  const cited = [...line.matchAll(CITATION)].map((m) => [m[1], m[2]!.trim()]);
  t.deepEqual(cited, [
    ['docs/NOPE.md', ''],
    ['docs/PRODUCT.md', '§99'],
    ['docs/notes/lpm.md', '§3.5'],
  ]);
  t.false(sectionsOf(join(ROOT, 'docs/PRODUCT.md'), new Map()).has('99'));
  t.true(sectionsOf(join(ROOT, 'docs/notes/lpm.md'), new Map()).has('3.5'));
  const outside = ['(SPEC §8)', '(notes §2.1)', '../shared/notes/lpm.md', '/work/shared/x'];
  for (const text of outside)
    t.true(
      FORBIDDEN.some(([p]) => p.test(text)),
      text,
    );
  t.false(FORBIDDEN.some(([p]) => p.test('(docs/PRODUCT.md §8, docs/notes/powerdns-remote-backend.md §2.1)')));
});

/**
 * A code file or README a Markdown document names in backticks (`pipeline/selection/stage.ts`,
 * `../capabilities/health/README.md`): relative to the document's folder, to the repository or to
 * `src/`.
 * Fenced code blocks (examples of files to write) and absolute paths are not citations.
 */
const NAMED_FILE = /`((?:\.{1,2}\/)*(?:[\w-]+\/)*[\w.-]+\.(?:ts|md|go))(?:[#:][^`]*)?`/g;

function staleNames(): string[] {
  const found: string[] = [];
  for (const file of textFiles()) {
    if (!file.endsWith('.md')) continue;
    const name = relative(ROOT, file);
    const dir = join(file, '..');
    let fenced = false;
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (line.trimStart().startsWith('```')) fenced = !fenced;
        if (fenced) return;
        for (const m of line.matchAll(NAMED_FILE)) {
          const path = m[1]!;
          if (!path.includes('/')) continue;
          const exists = [join(dir, path), join(ROOT, path), join(ROOT, 'src', path)].some((p) => {
            try {
              statSync(p);
              return true;
            } catch {
              return false;
            }
          });
          if (!exists) found.push(`${name}:${i + 1}: names ${path}, which does not exist`);
        }
      });
  }
  return found;
}

test('every file a README or document names in backticks exists (relative to it, to the repository or to src/)', (t) => {
  const found = staleNames();
  t.deepEqual(found, [], found.join('\n'));
});
