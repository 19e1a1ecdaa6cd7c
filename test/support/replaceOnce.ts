/**
 * Edits fixture text by one exact substring, and fails loudly when the fixture has moved on.
 *
 * `String.prototype.replace` with a string pattern silently does nothing when the pattern is
 * absent, so a test that edits a fixture (an example configuration, a unit file) would go on
 * testing the unedited text. Checking the result afterwards is no better: the replacement itself
 * may contain the pattern (a free port such as 45353 contains "5353").
 *
 * @param text - the fixture text
 * @param from - the exact substring to replace; must occur exactly once in `text`
 * @param to - its replacement (inserted literally: no `$&` patterns)
 * @returns `text` with the one occurrence replaced
 * @throws Error naming `from` when it occurs zero times or more than once
 */
export function replaceOnce(text: string, from: string, to: string): string {
  const at = text.indexOf(from);
  if (at < 0 || text.indexOf(from, at + 1) >= 0) throw new Error(`fixture edit: ${JSON.stringify(from)} must occur exactly once in the text`);
  return text.slice(0, at) + to + text.slice(at + from.length);
}
