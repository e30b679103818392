import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { configValidatorSource, VALIDATOR_FILE } from '../scripts/gen-config-validator.ts';
import { validate } from '../src/config/config-validator.js';

describe('the generated config validator', () => {
  it('is what src/config/schema.ts compiles to today (else: node scripts/gen-config-validator.ts)', () => {
    expect(readFileSync(VALIDATOR_FILE, 'utf8')).toBe(configValidatorSource());
  });

  it('accepts a good tree and names the first problem of a bad one', () => {
    expect(validate({ log_level: 'info', telegram: { owner_id: 1 } })).toBe(true);
    expect(validate({ log_level: 'loud' })).toBe(false);
    expect(validate.errors?.[0]).toMatchObject({ instancePath: '/log_level', keyword: 'enum' });
    expect(validate({ nonsense: 1 })).toBe(false);
    expect(validate.errors?.[0]).toMatchObject({ keyword: 'additionalProperties' });
  });
});
