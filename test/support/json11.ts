/**
 * A remote backend request line as PowerDNS 4.x writes it (json11 `dump()`: keys in alphabetical
 * order, as a std::map holds them; `": "` and `", "` separators; docs/notes/powerdns-remote-backend.md §2.1), for tests and
 * benchmarks that must send what PowerDNS sends. Values are written by `JSON.stringify`.
 */
export function json11Line(method: string, parameters: Record<string, unknown>): string {
  const params = Object.keys(parameters)
    .sort()
    .map((k) => `${JSON.stringify(k)}: ${JSON.stringify(parameters[k])}`)
    .join(', ');
  return `{"method": ${JSON.stringify(method)}, "parameters": {${params}}}`;
}
