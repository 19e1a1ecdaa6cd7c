import { METRIC_CATALOG, metricId, metricNames } from './catalog.js';
import type { MetricView } from '../../core/views/metricView.js';

/**
 * Gate expressions (docs/PRODUCT.md §3 "gating"): a condition on a data center's host and service metrics,
 * evaluated before the ranking criterion, e.g. `host.status == up && host.cpu < 90`.
 *
 * Grammar (whitespace free between tokens):
 *
 *   gate       := or
 *   or         := and ( "||" and )*
 *   and        := not ( "&&" not )*
 *   not        := "!" not | "(" or ")" | comparison
 *   comparison := operand ( "==" | "!=" | "<" | "<=" | ">" | ">=" ) operand
 *   operand    := ("host" | "service") "." metric | number | "up" | "down"
 *
 * `status` compares only with `up`/`down` and only with `==`/`!=`; other metrics compare with
 * numbers in their own unit (catalog.ts). `service.*` reads the record's service.
 *
 * Unknown values (a metric never received or stale) make a comparison unknown, and `&&`, `||`,
 * `!` follow three-valued logic as in SQL (false && unknown = false, true || unknown = true);
 * what an unknown gate means is the record's `unknown` rule, applied by the gate stage.
 *
 * A hand-written parser rather than a library: the well-kept candidate (jsep) parses all of
 * JavaScript's expression syntax and records no source positions on its nodes, while every
 * error here — syntax or meaning (an unknown metric, `status < 3`) — must name its column.
 */

/** Three-valued logic results. */
export const TRUE = 1;
export const FALSE = 0;
export const UNKNOWN = 2;
export type Tri = typeof TRUE | typeof FALSE | typeof UNKNOWN;

type Comparator = '==' | '!=' | '<' | '<=' | '>' | '>=';

/** A metric a gate reads. */
export interface GateMetric {
  readonly source: 'host' | 'service';
  readonly id: number;
  /** `host.cpu`. */
  readonly name: string;
}

type Operand = { readonly kind: 'metric'; readonly metric: GateMetric } | { readonly kind: 'const'; readonly value: number };

type GateNode =
  | { readonly op: 'and' | 'or'; readonly left: GateNode; readonly right: GateNode }
  | { readonly op: 'not'; readonly arg: GateNode }
  | { readonly op: 'cmp'; readonly cmp: Comparator; readonly left: Operand; readonly right: Operand };

/** A parsed gate, ready to evaluate per data center. */
export interface Gate {
  readonly text: string;
  /** Every metric the gate reads, once each, in order of appearance (for /explain). */
  readonly metrics: readonly GateMetric[];
  readonly root: GateNode;
}

/** A gate that cannot be parsed; `column` is 1-based. */
export class GateSyntaxError extends Error {
  constructor(
    readonly column: number,
    readonly reason: string,
    readonly text: string,
  ) {
    super(`column ${column}: ${reason} in "${text}"`);
    this.name = 'GateSyntaxError';
  }
}

interface Token {
  readonly kind: 'ident' | 'number' | 'op' | 'end';
  readonly text: string;
  /** 0-based offset in the expression. */
  readonly at: number;
}

const OPERATORS = ['&&', '||', '==', '!=', '<=', '>=', '<', '>', '!', '(', ')', '.'] as const;

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === ' ' || c === '\t') {
      i++;
      continue;
    }
    const ident = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(i));
    if (ident) {
      tokens.push({ kind: 'ident', text: ident[0], at: i });
      i += ident[0].length;
      continue;
    }
    const num = /^-?(\d+(\.\d+)?|\.\d+)([eE][+-]?\d+)?/.exec(text.slice(i));
    if (num && (c !== '-' || /^-[\d.]/.test(text.slice(i)))) {
      tokens.push({ kind: 'number', text: num[0], at: i });
      i += num[0].length;
      continue;
    }
    const op = OPERATORS.find((o) => text.startsWith(o, i));
    if (op) {
      tokens.push({ kind: 'op', text: op, at: i });
      i += op.length;
      continue;
    }
    if (c === '=') throw new GateSyntaxError(i + 1, 'use "==" to compare', text);
    if (c === '&' || c === '|') throw new GateSyntaxError(i + 1, `use "${c}${c}"`, text);
    throw new GateSyntaxError(i + 1, `unexpected character "${c}"`, text);
  }
  tokens.push({ kind: 'end', text: '', at: text.length });
  return tokens;
}

/**
 * Parses and checks a gate expression.
 * @throws GateSyntaxError naming the 1-based column of the first problem: syntax, an unknown
 *   source or metric, a status compared with a number or with `<`, a number compared with a
 *   status word, or a comparison of two constants.
 */
export function parseGate(text: string): Gate {
  const tokens = tokenize(text);
  let pos = 0;
  const metrics: GateMetric[] = [];
  const peek = (): Token => tokens[pos]!;
  const fail = (t: Token, reason: string): never => {
    throw new GateSyntaxError(t.at + 1, reason, text);
  };
  const describeToken = (t: Token): string => (t.kind === 'end' ? 'end of expression' : `"${t.text}"`);
  const expect = (op: string): void => {
    const t = peek();
    if (t.kind !== 'op' || t.text !== op) fail(t, `expected "${op}", found ${describeToken(t)}`);
    pos++;
  };

  const operand = (): { operand: Operand; token: Token; word?: string } => {
    const t = peek();
    if (t.kind === 'number') {
      pos++;
      return { operand: { kind: 'const', value: Number(t.text) }, token: t };
    }
    if (t.kind !== 'ident') return fail(t, `expected a metric (host.cpu), a number, up or down, found ${describeToken(t)}`);
    pos++;
    if (t.text === 'up' || t.text === 'down') return { operand: { kind: 'const', value: t.text === 'up' ? 1 : 0 }, token: t, word: t.text };
    if (t.text !== 'host' && t.text !== 'service') {
      return fail(
        t,
        t.text === 'client'
          ? 'client metrics cannot gate a data center (use them as the criterion)'
          : `unknown name "${t.text}" (write host.<metric>, service.<metric>, a number, up or down)`,
      );
    }
    expect('.');
    const m = peek();
    if (m.kind !== 'ident') return fail(m, `expected a ${t.text} metric after "${t.text}.", found ${describeToken(m)}`);
    pos++;
    const source = t.text;
    const id = metricId(source, m.text);
    if (id < 0) return fail(m, `unknown ${source} metric "${m.text}" (${source} metrics: ${metricNames(source)})`);
    const name = `${source}.${m.text}`;
    let metric = metrics.find((x) => x.name === name);
    if (!metric) metrics.push((metric = { source, id, name }));
    return { operand: { kind: 'metric', metric }, token: t };
  };

  const comparison = (): GateNode => {
    const left = operand();
    const opToken = peek();
    if (opToken.kind !== 'op' || !['==', '!=', '<', '<=', '>', '>='].includes(opToken.text)) {
      return fail(opToken, `expected a comparison (==, !=, <, <=, >, >=), found ${describeToken(opToken)}`);
    }
    pos++;
    const right = operand();
    const cmp = opToken.text as Comparator;
    checkComparison(left, right, cmp, opToken, fail);
    return { op: 'cmp', cmp, left: left.operand, right: right.operand };
  };

  const not = (): GateNode => {
    const t = peek();
    if (t.kind === 'op' && t.text === '!') {
      pos++;
      return { op: 'not', arg: not() };
    }
    if (t.kind === 'op' && t.text === '(') {
      pos++;
      const inner = or();
      expect(')');
      return inner;
    }
    return comparison();
  };

  const and = (): GateNode => {
    let left = not();
    while (peek().kind === 'op' && peek().text === '&&') {
      pos++;
      left = { op: 'and', left, right: not() };
    }
    return left;
  };

  const or = (): GateNode => {
    let left = and();
    while (peek().kind === 'op' && peek().text === '||') {
      pos++;
      left = { op: 'or', left, right: and() };
    }
    return left;
  };

  if (tokens.length === 1) fail(tokens[0]!, 'the gate is empty');
  const root = or();
  if (peek().kind !== 'end') fail(peek(), `expected "&&", "||" or the end, found ${describeToken(peek())}`);
  return { text, metrics, root };
}

function checkComparison(
  left: { operand: Operand; token: Token; word?: string },
  right: { operand: Operand; token: Token; word?: string },
  cmp: Comparator,
  opToken: Token,
  fail: (t: Token, reason: string) => never,
): void {
  if (left.operand.kind === 'const' && right.operand.kind === 'const') fail(left.token, 'compares two constants; one side must be a metric');
  const isStatus = (o: { operand: Operand }): boolean =>
    o.operand.kind === 'metric' && METRIC_CATALOG[o.operand.metric.source][o.operand.metric.id]!.name === 'status';
  for (const [side, other] of [
    [left, right],
    [right, left],
  ] as const) {
    if (isStatus(side)) {
      if (cmp !== '==' && cmp !== '!=') fail(opToken, `status compares only with == or != (up, down)`);
      if (other.operand.kind === 'const' && other.word === undefined) fail(other.token, `status is up or down, not a number`);
      if (other.operand.kind === 'metric' && !isStatus(other)) fail(other.token, `cannot compare status with a number metric`);
    } else if (side.operand.kind === 'metric' && other.word !== undefined) {
      fail(other.token, `"${other.word}" compares only with a status metric; ${side.operand.metric.name} is a number`);
    }
  }
}

/**
 * Evaluates a gate for one data center: host metrics of `dc`, service metrics of
 * (`service`, `dc`), read at `nowMs` (stale values are unknown). Allocates nothing.
 */
export function evaluateGate(gate: Gate, view: MetricView, service: string, dc: string, nowMs: number): Tri {
  return evaluate(gate.root, view, service, dc, nowMs);
}

function evaluate(n: GateNode, view: MetricView, service: string, dc: string, nowMs: number): Tri {
  switch (n.op) {
    case 'and': {
      const l = evaluate(n.left, view, service, dc, nowMs);
      if (l === FALSE) return FALSE;
      const r = evaluate(n.right, view, service, dc, nowMs);
      return r === FALSE ? FALSE : l === UNKNOWN || r === UNKNOWN ? UNKNOWN : TRUE;
    }
    case 'or': {
      const l = evaluate(n.left, view, service, dc, nowMs);
      if (l === TRUE) return TRUE;
      const r = evaluate(n.right, view, service, dc, nowMs);
      return r === TRUE ? TRUE : l === UNKNOWN || r === UNKNOWN ? UNKNOWN : FALSE;
    }
    case 'not': {
      const v = evaluate(n.arg, view, service, dc, nowMs);
      return v === UNKNOWN ? UNKNOWN : v === TRUE ? FALSE : TRUE;
    }
    case 'cmp': {
      const a = operandValue(n.left, view, service, dc, nowMs);
      const b = operandValue(n.right, view, service, dc, nowMs);
      if (Number.isNaN(a) || Number.isNaN(b)) return UNKNOWN;
      return compare(n.cmp, a, b) ? TRUE : FALSE;
    }
  }
}

function operandValue(o: Operand, view: MetricView, service: string, dc: string, nowMs: number): number {
  if (o.kind === 'const') return o.value;
  const m = o.metric;
  return view.read(m.source, m.source === 'host' ? '' : service, dc, m.id, nowMs);
}

function compare(cmp: Comparator, a: number, b: number): boolean {
  switch (cmp) {
    case '==':
      return a === b;
    case '!=':
      return a !== b;
    case '<':
      return a < b;
    case '<=':
      return a <= b;
    case '>':
      return a > b;
    case '>=':
      return a >= b;
  }
}

/** The word for a three-valued result, for /explain. */
export function triName(t: Tri): 'pass' | 'fail' | 'unknown' {
  return t === TRUE ? 'pass' : t === FALSE ? 'fail' : 'unknown';
}
