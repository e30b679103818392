import type { ErrorObject } from 'ajv';

/** The config file schema (src/config/schema.ts), compiled ahead by scripts/gen-config-validator.ts. */
export declare const validate: { (data: unknown): boolean; errors?: ErrorObject[] | null };
