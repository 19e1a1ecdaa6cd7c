/** One distinct query of a query file and how many times the file holds it (the shape `whatIfReplay.ts` replays). */
export interface CountedQuery {
  readonly name: string;
  readonly type: string;
  /** The client network: an ECS source prefix (`a.b.c.0/24`) or a source address (`/32`, `/128`). */
  readonly client: string;
  readonly count: number;
}

/** What a reader of a query file returns: the distinct queries in first-seen order and how many records were not a query. */
export interface QueryFileContent {
  readonly queries: CountedQuery[];
  readonly skipped: number;
}

/** Counts distinct (name, type, client) in first-seen order, as every query-file reader does. */
export class QueryCounter {
  private readonly byKey = new Map<string, { name: string; type: string; client: string; count: number }>();
  skipped = 0;

  /** One query seen once more. */
  add(name: string, type: string, client: string): void {
    const key = `${name}\u0000${type}\u0000${client}`;
    const seen = this.byKey.get(key);
    if (seen) seen.count++;
    else this.byKey.set(key, { name, type, client, count: 1 });
  }

  /** The queries counted so far and the records skipped. */
  content(): QueryFileContent {
    return { queries: [...this.byKey.values()], skipped: this.skipped };
  }
}

/**
 * An error in a query file that names where: `FILE: <unit> OFFSET: message` (unit `line` for text,
 * `byte` for binary records), so an operator can find the damaged record.
 */
export class QueryFileError extends Error {
  constructor(file: string, unit: 'line' | 'byte', offset: number, message: string) {
    super(`${file}: ${unit} ${offset}: ${message}`);
    this.name = 'QueryFileError';
  }
}
