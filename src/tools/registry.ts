import { createRequire } from 'node:module';
import type { Ajv, ErrorObject } from 'ajv';
import type { ToolCall, ToolSpec } from '../gateway/types.ts';
import { type Tool, ToolInputError } from './types.ts';

export interface ToolRegistry {
  get(name: string): Tool | undefined;
  names(): string[];
  /** The schemas the model is offered. */
  specs(): ToolSpec[];
  /** The constraint layer: parse, validate against the schema, clamp. Never throws. */
  prepare(call: ToolCall): PreparedCall;
}

export type PreparedCall =
  | { ok: true; tool: Tool; args: Record<string, unknown> }
  /** `correction` is written for the model: what was wrong and how to call again. */
  | { ok: false; correction: string };

/** A compiled schema: true when the data matches; `errors` then says why not. */
export interface SchemaCheck {
  (data: unknown): boolean;
  errors?: ErrorObject[] | null;
}

/** A tool with its compiled schema; outside tools (MCP) are compiled where they are listed. */
export interface CheckedTool {
  tool: Tool;
  validate: SchemaCheck;
}

/**
 * Compiles a built-in tool's schema at its first call: compiling all of them costs tens of
 * milliseconds that start-up need not spend (test/tool-schemas.test.ts compiles every one).
 */
function compiledOnUse(ajv: () => Ajv, schema: Tool['inputSchema']): SchemaCheck {
  let compiled: SchemaCheck | undefined;
  const check: SchemaCheck = (data) => {
    compiled ??= ajv().compile(schema);
    const ok = compiled(data);
    check.errors = compiled.errors;
    return ok;
  };
  return check;
}

/**
 * The built-in tools, and (read on every lookup, so servers may come and go) the outside tools
 * that are connected now. A built-in name always wins; outside names carry a server prefix anyway.
 */
export function createToolRegistry(
  tools: readonly Tool[],
  outside: () => readonly CheckedTool[] = () => [],
): ToolRegistry {
  let shared: Ajv | undefined;
  const ajv = () => {
    if (!shared) {
      // Loaded with the first call's schema: ajv is some sixty modules that polling does not need.
      const { Ajv: Compiler } = createRequire(import.meta.url)('ajv') as typeof import('ajv');
      shared = new Compiler({ allErrors: true, strict: true });
    }
    return shared;
  };
  const builtins = new Map<string, CheckedTool>();
  for (const tool of tools) {
    if (builtins.has(tool.name)) throw new Error(`two tools are named ${tool.name}`);
    if (tool.inputSchema.additionalProperties !== false) {
      throw new Error(`tool ${tool.name}: its input schema must set additionalProperties: false`);
    }
    builtins.set(tool.name, { tool, validate: compiledOnUse(ajv, tool.inputSchema) });
  }
  const all = (): Map<string, CheckedTool> => {
    const extra = outside();
    if (extra.length === 0) return builtins;
    const merged = new Map(builtins);
    for (const entry of extra) if (!merged.has(entry.tool.name)) merged.set(entry.tool.name, entry);
    return merged;
  };

  return {
    get: (name) => all().get(name)?.tool,
    names: () => [...all().keys()],
    specs: () =>
      [...all().values()].map(({ tool }) => ({
        name: tool.name,
        description: tool.description,
        inputSchema: tool.inputSchema,
      })),
    prepare(call) {
      const byName = all();
      const entry = byName.get(call.name);
      if (!entry) {
        return {
          ok: false,
          correction: `There is no tool named "${call.name}". Available tools: ${[...byName.keys()].join(', ')}.`,
        };
      }
      let args: unknown;
      try {
        args = call.arguments.trim() === '' ? {} : JSON.parse(call.arguments);
      } catch (error) {
        return {
          ok: false,
          correction: `The arguments for ${call.name} are not valid JSON (${(error as Error).message}). Send one JSON object that matches the tool's schema.`,
        };
      }
      if (typeof args !== 'object' || args === null || Array.isArray(args)) {
        return {
          ok: false,
          correction: `The arguments for ${call.name} must be a JSON object, not ${JSON.stringify(args)}.`,
        };
      }
      if (!entry.validate(args)) {
        return {
          ok: false,
          correction: `The arguments for ${call.name} do not match its schema: ${describeErrors(entry.validate.errors ?? [])}. Fix them and call again.`,
        };
      }
      const typed = args as Record<string, unknown>;
      if (!entry.tool.clamp) return { ok: true, tool: entry.tool, args: typed };
      // A clamp is tool code: whatever it throws becomes a correction, as `prepare` never throws.
      try {
        return { ok: true, tool: entry.tool, args: entry.tool.clamp(typed) };
      } catch (error) {
        return {
          ok: false,
          correction:
            error instanceof ToolInputError
              ? error.message
              : `The arguments for ${call.name} could not be checked (${error instanceof Error ? error.message : String(error)}).`,
        };
      }
    },
  };
}

function describeErrors(errors: ErrorObject[]): string {
  return errors
    .slice(0, 5)
    .map((e) => {
      const at = e.instancePath ? e.instancePath.slice(1).replaceAll('/', '.') : 'the arguments';
      if (e.keyword === 'additionalProperties') {
        return `${at} has an unknown property "${(e.params as { additionalProperty: string }).additionalProperty}"`;
      }
      if (e.keyword === 'required') {
        return `${at} is missing the required property "${(e.params as { missingProperty: string }).missingProperty}"`;
      }
      return `${at} ${e.message ?? 'is invalid'}`;
    })
    .join('; ');
}
