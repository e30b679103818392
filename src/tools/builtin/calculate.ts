import type { Tool } from '../types.ts';
import { evaluateExpression, formatNumber, MAX_EXPRESSION_LENGTH } from './arithmetic.ts';

export const calculateTool: Tool<{ expression: string }> = {
  name: 'calculate',
  description: [
    'Evaluates an arithmetic expression and returns "<expression> = <result>". Use it for any',
    'arithmetic beyond the trivial (sums, percentages, unit conversions, compound interest) instead of',
    'computing in your head. It is a calculator, not a programming language: no variables, no',
    'assignment, no strings, no code.',
    'Allowed: numbers (2, 3.5, .5, 1e3, 2.5E-4), + - * /, % (remainder, sign of the left side; it is',
    'NOT percent: write 15% of 80 as 80 * 15 / 100), ^ or ** (power, right-associative: 2^3^2 = 512;',
    '-2^2 = -4), unary + and -, parentheses, the constants pi and e, and the functions sqrt(x), abs(x),',
    'round(x) and round(x, digits) (halves away from zero; digits may be negative), floor(x), ceil(x),',
    'min(a, b, ...), max(a, b, ...), ln(x) (natural log), log10(x), log(x) (base 10, like a pocket',
    'calculator) and log(x, base), exp(x), sin(x), cos(x), tan(x) (radians).',
    'Write multiplication explicitly (2*pi, not 2pi). No thousands separators (1000000, not 1,000,000).',
    'Division by zero, sqrt or log of a negative number, and overflow are errors naming the position.',
    'Whole numbers up to 2^53 are shown exactly; other results to 15 significant digits, without float',
    `noise (0.1 + 0.2 = 0.3). At most ${MAX_EXPRESSION_LENGTH} characters.`,
    'Example call: {"expression": "1200 * (1 + 0.05/12)^(12*3)"} returns "1200 * (1 + 0.05/12)^(12*3) = 1393.76667760016".',
  ].join(' '),
  inputSchema: {
    type: 'object',
    properties: {
      expression: {
        type: 'string',
        minLength: 1,
        maxLength: MAX_EXPRESSION_LENGTH,
        description:
          'The arithmetic expression, e.g. "(3 + 4) * 2 / sqrt(16)". Numbers, operators, pi, e and the listed functions only.',
      },
    },
    required: ['expression'],
    additionalProperties: false,
  },
  trusted: true,
  async execute(args) {
    const value = evaluateExpression(args.expression);
    return `${args.expression.trim().replace(/\s+/g, ' ')} = ${formatNumber(value)}`;
  },
};
