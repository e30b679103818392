import { ToolInputError } from '../types.ts';

/**
 * A small arithmetic evaluator: a tokenizer and a recursive-descent parser that computes as it
 * parses. It never evaluates code: identifiers are looked up in two fixed tables (constants and
 * functions) and anything else is rejected with its position.
 *
 * Grammar, lowest precedence first:
 *   expression := term (("+" | "-") term)*
 *   term       := unary (("*" | "/" | "%") unary)*
 *   unary      := ("+" | "-") unary | power
 *   power      := primary (("^" | "**") unary)?        right-associative; -2^2 = -4, 2^-1 = 0.5
 *   primary    := number | constant | function "(" [expression ("," expression)*] ")" | "(" expression ")"
 */

export const MAX_EXPRESSION_LENGTH = 500;
export const MAX_NESTING_DEPTH = 100;

type Token =
  | { kind: 'number'; value: number; text: string; pos: number }
  | { kind: 'name'; text: string; pos: number }
  | { kind: 'op'; text: '+' | '-' | '*' | '/' | '%' | '^' | '(' | ')' | ','; pos: number }
  /** A character that belongs to no token; reported when the parser reaches it, so errors come in order. */
  | { kind: 'invalid'; text: string; pos: number }
  | { kind: 'end'; text: ''; pos: number };

interface FunctionSpec {
  minArgs: number;
  maxArgs: number;
  apply(args: number[], pos: number): number;
}

const CONSTANTS: ReadonlyMap<string, number> = new Map([
  ['pi', Math.PI],
  ['e', Math.E],
]);

const unary = (fn: (x: number) => number): FunctionSpec => ({
  minArgs: 1,
  maxArgs: 1,
  apply: (args) => fn(args[0] as number),
});

const FUNCTIONS: ReadonlyMap<string, FunctionSpec> = new Map<string, FunctionSpec>([
  [
    'sqrt',
    {
      minArgs: 1,
      maxArgs: 1,
      apply: ([x = 0], pos) => {
        if (x < 0)
          throw new ToolInputError(`sqrt of a negative number (${x}) at position ${pos} is not real.`);
        return Math.sqrt(x);
      },
    },
  ],
  ['abs', unary(Math.abs)],
  ['round', { minArgs: 1, maxArgs: 2, apply: ([x = 0, digits = 0], pos) => roundTo(x, digits, pos) }],
  ['floor', unary(Math.floor)],
  ['ceil', unary(Math.ceil)],
  ['min', { minArgs: 1, maxArgs: Number.POSITIVE_INFINITY, apply: (args) => Math.min(...args) }],
  ['max', { minArgs: 1, maxArgs: Number.POSITIVE_INFINITY, apply: (args) => Math.max(...args) }],
  ['ln', { minArgs: 1, maxArgs: 1, apply: ([x = 0], pos) => logarithm(x, Math.E, 'ln', pos) }],
  ['log10', { minArgs: 1, maxArgs: 1, apply: ([x = 0], pos) => logarithm(x, 10, 'log10', pos) }],
  // log(x) is base 10, as on a pocket calculator; log(x, b) is base b. ln(x) is the natural log.
  ['log', { minArgs: 1, maxArgs: 2, apply: ([x = 0, base = 10], pos) => logarithm(x, base, 'log', pos) }],
  ['exp', unary(Math.exp)],
  ['sin', unary(Math.sin)],
  ['cos', unary(Math.cos)],
  ['tan', unary(Math.tan)],
]);

const FUNCTION_LIST = [...FUNCTIONS.keys()].join(', ');
const ALLOWED = `only numbers, + - * / % ^ (or **), parentheses, the constants pi and e and the functions ${FUNCTION_LIST} are allowed.`;

function logarithm(x: number, base: number, name: string, pos: number): number {
  if (x <= 0)
    throw new ToolInputError(`${name} of ${x} at position ${pos} is undefined: the argument must be > 0.`);
  if (base <= 0 || base === 1) {
    throw new ToolInputError(
      `log base ${base} at position ${pos} is invalid: the base must be > 0 and not 1.`,
    );
  }
  if (base === 10) return Math.log10(x);
  if (base === Math.E) return Math.log(x);
  if (base === 2) return Math.log2(x);
  return Math.log(x) / Math.log(base);
}

/** Rounds half away from zero to `digits` decimals (negative digits round to tens, hundreds, ...). */
function roundTo(x: number, digits: number, pos: number): number {
  if (!Number.isInteger(digits) || digits < -15 || digits > 15) {
    throw new ToolInputError(
      `round(x, digits) at position ${pos}: digits must be a whole number from -15 to 15, got ${digits}.`,
    );
  }
  const factor = 10 ** Math.abs(digits);
  // toPrecision(15) removes representation noise first, so round(2.675, 2) gives 2.68, not 2.67.
  const scaled = Number(Math.abs(digits >= 0 ? x * factor : x / factor).toPrecision(15));
  const rounded = Math.sign(x) * Math.round(scaled);
  return digits >= 0 ? rounded / factor : rounded * factor;
}

function describeToken(token: Token): string {
  if (token.kind === 'end') return 'end of expression';
  const text = token.text.length > 30 ? `${token.text.slice(0, 30)}…` : token.text;
  return JSON.stringify(text);
}

function unexpected(token: Token, hint = ALLOWED): ToolInputError {
  if (token.kind === 'end') {
    return new ToolInputError(
      `Unexpected end of expression at position ${token.pos}: expected a number, constant, function or "(".`,
    );
  }
  // An unknown name or character always gets the list of what is allowed.
  const known =
    token.kind === 'name' &&
    (CONSTANTS.has(token.text.toLowerCase()) || FUNCTIONS.has(token.text.toLowerCase()));
  const reason = token.kind === 'invalid' || (token.kind === 'name' && !known) ? ALLOWED : hint;
  return new ToolInputError(`Unexpected ${describeToken(token)} at position ${token.pos}: ${reason}`);
}

const NUMBER = /(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][+-]?\d+)?/y;
const NAME = /[A-Za-z_][A-Za-z0-9_]*/y;
const WHITESPACE = /[ \t\r\n]/;

/** Splits the text into tokens; never throws (unknown characters become `invalid` tokens). */
export function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let pos = 0;
  while (pos < text.length) {
    const ch = text[pos] as string;
    if (WHITESPACE.test(ch)) {
      pos++;
      continue;
    }
    NUMBER.lastIndex = pos;
    const number = NUMBER.exec(text);
    if (number) {
      tokens.push({ kind: 'number', value: Number(number[0]), text: number[0], pos });
      pos += number[0].length;
      continue;
    }
    NAME.lastIndex = pos;
    const name = NAME.exec(text);
    if (name) {
      tokens.push({ kind: 'name', text: name[0], pos });
      pos += name[0].length;
      continue;
    }
    if (ch === '*' && text[pos + 1] === '*') {
      tokens.push({ kind: 'op', text: '^', pos });
      pos += 2;
      continue;
    }
    if ('+-*/%^(),'.includes(ch)) {
      tokens.push({ kind: 'op', text: ch as '+', pos });
      pos++;
      continue;
    }
    // One whole code point, so an emoji or other astral character is shown intact.
    const char = String.fromCodePoint(text.codePointAt(pos) as number);
    tokens.push({ kind: 'invalid', text: char, pos });
    pos += char.length;
  }
  tokens.push({ kind: 'end', text: '', pos: text.length });
  return tokens;
}

class Parser {
  private readonly tokens: Token[];
  private index = 0;
  private depth = 0;

  constructor(tokens: Token[]) {
    this.tokens = tokens;
  }

  parse(): number {
    const value = this.expression();
    const next = this.peek();
    if (next.kind !== 'end') {
      throw next.kind === 'op' && next.text === ')'
        ? new ToolInputError(`Unmatched ")" at position ${next.pos}.`)
        : unexpected(
            next,
            'expected an operator (+ - * / % ^) or the end of the expression; write multiplication out, e.g. 2*pi or 3*(1+2).',
          );
    }
    return value;
  }

  private peek(): Token {
    return this.tokens[this.index] as Token;
  }

  private next(): Token {
    const token = this.peek();
    if (token.kind !== 'end') this.index++;
    return token;
  }

  private isOp(...ops: string[]): boolean {
    const token = this.peek();
    return token.kind === 'op' && ops.includes(token.text);
  }

  private expression(): number {
    let left = this.term();
    while (this.isOp('+', '-')) {
      const op = this.next();
      const right = this.term();
      left = finite(op.text === '+' ? left + right : left - right, op.pos);
    }
    return left;
  }

  private term(): number {
    let left = this.unary();
    while (this.isOp('*', '/', '%')) {
      const op = this.next();
      const right = this.unary();
      if (op.text === '*') left = finite(left * right, op.pos);
      else if (right === 0) {
        throw new ToolInputError(
          `${op.text === '/' ? 'Division' : 'Remainder'} by zero at position ${op.pos}: the result is undefined.`,
        );
      } else left = finite(op.text === '/' ? left / right : left % right, op.pos);
    }
    return left;
  }

  private unary(): number {
    const start = this.peek();
    // The top level is one frame; each "(", function call, sign or exponent adds one.
    if (++this.depth > MAX_NESTING_DEPTH + 1) {
      throw new ToolInputError(
        `The expression is nested too deeply at position ${start.pos} (more than ${MAX_NESTING_DEPTH} levels); simplify it.`,
      );
    }
    try {
      if (this.isOp('+', '-')) {
        const op = this.next();
        const value = this.unary();
        return op.text === '-' ? -value : value;
      }
      return this.power();
    } finally {
      this.depth--;
    }
  }

  private power(): number {
    const base = this.primary();
    if (!this.isOp('^')) return base;
    const op = this.next();
    // The exponent is a unary, so 2^-1 works and 2^3^2 = 2^(3^2).
    const exponent = this.unary();
    if (base === 0 && exponent < 0) {
      throw new ToolInputError(`Division by zero at position ${op.pos}: 0 to a negative power is undefined.`);
    }
    const value = base ** exponent;
    if (Number.isNaN(value)) {
      throw new ToolInputError(
        `(${formatNumber(base)})^${formatNumber(exponent)} at position ${op.pos} is not a real number (a negative base needs a whole exponent).`,
      );
    }
    return finite(value, op.pos);
  }

  private primary(): number {
    const token = this.next();
    if (token.kind === 'number') {
      if (!Number.isFinite(token.value)) {
        throw new ToolInputError(`The number ${token.text} at position ${token.pos} is too large.`);
      }
      return token.value;
    }
    if (token.kind === 'op' && token.text === '(') {
      const value = this.expression();
      this.close(token);
      return value;
    }
    if (token.kind === 'name') {
      const key = token.text.toLowerCase();
      const constant = CONSTANTS.get(key);
      if (constant !== undefined) return constant;
      const fn = FUNCTIONS.get(key);
      if (fn) return this.call(key, fn, token);
    }
    throw unexpected(token);
  }

  private call(name: string, fn: FunctionSpec, token: Token): number {
    const open = this.next();
    if (open.kind !== 'op' || open.text !== '(') {
      throw new ToolInputError(
        `The function ${name} at position ${token.pos} must be followed by "(", e.g. ${name}(2); found ${describeToken(open)} at position ${open.pos}.`,
      );
    }
    const args: number[] = [];
    if (!this.isOp(')')) {
      args.push(this.expression());
      while (this.isOp(',')) {
        this.next();
        args.push(this.expression());
      }
    }
    this.close(open);
    if (args.length < fn.minArgs || args.length > fn.maxArgs) {
      const expected =
        fn.maxArgs === Number.POSITIVE_INFINITY
          ? `at least ${fn.minArgs} argument${fn.minArgs === 1 ? '' : 's'}`
          : fn.minArgs === fn.maxArgs
            ? `${fn.minArgs} argument${fn.minArgs === 1 ? '' : 's'}`
            : `${fn.minArgs} to ${fn.maxArgs} arguments`;
      throw new ToolInputError(`${name} at position ${token.pos} takes ${expected}, got ${args.length}.`);
    }
    const value = fn.apply(args, token.pos);
    if (Number.isNaN(value)) {
      throw new ToolInputError(`${name}(${args.join(', ')}) at position ${token.pos} is not a real number.`);
    }
    return finite(value, token.pos);
  }

  private close(open: Token): void {
    const token = this.next();
    if (token.kind === 'op' && token.text === ')') return;
    if (token.kind === 'end') {
      throw new ToolInputError(
        `Missing ")" at position ${token.pos} to close the "(" at position ${open.pos}.`,
      );
    }
    throw unexpected(token, `expected "," or ")" to close the "(" at position ${open.pos}.`);
  }
}

function finite(value: number, pos: number): number {
  if (!Number.isFinite(value)) {
    throw new ToolInputError(
      `The result overflows at position ${pos}: it is too large to represent (beyond about 1.8e308).`,
    );
  }
  return value;
}

/**
 * Evaluates an arithmetic expression. Throws ToolInputError, naming the position, for anything that
 * is not arithmetic, for undefined operations and for results that are not finite.
 */
export function evaluateExpression(text: string): number {
  if (text.length > MAX_EXPRESSION_LENGTH) {
    throw new ToolInputError(
      `The expression is ${text.length} characters long; the limit is ${MAX_EXPRESSION_LENGTH}. Split it into smaller calculations.`,
    );
  }
  if (text.trim() === '') throw new ToolInputError('The expression is empty. Example: "(2 + 3) * 4".');
  const value = new Parser(tokenize(text)).parse();
  return Object.is(value, -0) ? 0 : value;
}

/**
 * Formats a result without float noise: whole numbers up to 2^53 exactly, anything else to 15
 * significant digits with trailing zeros trimmed (0.1 + 0.2 gives 0.3; 2^60 gives 1152921504606850000).
 */
export function formatNumber(value: number): string {
  if (Number.isInteger(value) && Math.abs(value) <= 2 ** 53)
    return Object.is(value, -0) ? '0' : String(value);
  const clean = Number(value.toPrecision(15));
  return Object.is(clean, -0) ? '0' : String(clean);
}
