import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { builtinPureTools } from '../src/tools/builtin/index.ts';
import { createLoadSkillTool } from '../src/tools/builtin/load-skill.ts';
import { createLoadToolTool } from '../src/tools/builtin/load-tool.ts';
import { createRetrieveOutputTool } from '../src/tools/builtin/retrieve-output.ts';
import { shellTool } from '../src/tools/builtin/shell.ts';
import { webFetchTool } from '../src/tools/builtin/web-fetch.ts';
import { writeFileTool } from '../src/tools/builtin/write-file.ts';
import { createToolRegistry } from '../src/tools/registry.ts';

// The registry compiles a built-in tool's schema at its first call (start-up does not wait for
// ajv), so a schema strict mode refuses would only show then: it fails here instead.
const builtins = [
  ...builtinPureTools,
  createRetrieveOutputTool({} as never),
  createLoadSkillTool([]),
  createLoadToolTool({} as never),
  shellTool,
  writeFileTool,
  webFetchTool,
];

describe('the built-in tools offered at start', () => {
  it.each(builtins.map((t) => [t.name, t] as const))('%s has a schema strict mode compiles', (_, tool) => {
    expect(() => new Ajv({ strict: true, allErrors: true }).compile(tool.inputSchema)).not.toThrow();
  });

  it('are checked against their schema at the first call, with the reason named', () => {
    const registry = createToolRegistry(builtins);
    const wrong = registry.prepare({ id: '1', name: 'web_fetch', arguments: '{"url": 5}' });
    expect(wrong).toMatchObject({ ok: false, correction: expect.stringMatching(/do not match its schema/) });
    const again = registry.prepare({ id: '2', name: 'web_fetch', arguments: '{"link": "x"}' });
    expect(again).toMatchObject({ ok: false, correction: expect.stringMatching(/link|url/) });
    expect(
      registry.prepare({ id: '3', name: 'web_fetch', arguments: '{"url": "https://a.example/"}' }),
    ).toMatchObject({
      ok: true,
    });
  });
});
