import test from 'ava';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { parsedFast } from './load.js';
import { largeConfig } from '../../../test/support/largeConfig.js';

/**
 * The fast configuration reader (js-yaml, start-up time: issue 26) reads every text it accepts as
 * the `yaml` library does (YAML 1.2 core schema), and leaves to the `yaml` library every text
 * where the two may differ.
 */

function yamlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return yamlFiles(path);
    return name.endsWith('.yaml') || name.endsWith('.yml') ? [path] : [];
  });
}

const slow = (text: string): unknown => parse(text, { uniqueKeys: true, merge: true, maxAliasCount: 100 });

test('every example and fixture configuration the fast reader accepts reads as the yaml library reads it', (t) => {
  const files = [...yamlFiles('examples'), ...yamlFiles('test/fixtures')];
  t.true(files.length >= 5);
  let fast = 0;
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const read = parsedFast(text);
    if (read === undefined) continue;
    fast++;
    t.deepEqual(read.data, slow(text), file);
  }
  t.true(fast >= 3, `${fast} of ${files.length} files read fast`);
});

test('scalars of every kind read the same; texts where the readers differ are left to the yaml library', (t) => {
  const same = `a: 0660\nb: 0o17\nc: 0x1F\nd: 1e3\ne: .5\nf: .inf\ng: ~\nh: True\ni: "2024-01-01"\nj: 2024-01-01\nk: 12:30\nl: [1, -2, +3, '4']\nm: |\n  two\n  lines\nn: >-\n  folded\n  text\no: null\np: yes\n`;
  t.deepEqual(parsedFast(same)?.data, slow(same));
  for (const text of [
    'a: 1_000\n',
    'a: 0b101\n',
    'a: &x 1\nb: *x\n',
    'a: !!str 1\n',
    '%YAML 1.1\n---\na: yes\n',
    'a: {<<: {b: 1}}\n',
    'a: 1\na: 2\n',
    'a: [\n',
  ]) {
    t.is(parsedFast(text), undefined, text);
  }
});

test('a 20,000-record configuration reads fast and the same', (t) => {
  const text = largeConfig({ records: 20000 });
  const read = parsedFast(text);
  t.not(read, undefined);
  t.deepEqual(read!.data, slow(text));
});
