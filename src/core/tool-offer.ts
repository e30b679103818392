// Which schemas a request carries: every tool's, except indexed outside tools the session has not
// loaded. Derived from the log, so a load survives restarts and compaction.
import type { ToolSpec } from '../gateway/types.ts';
import { loadedTools } from '../tools/builtin/load-tool.ts';
import type { SessionEvent } from './session-events.ts';
import type { OutsideTools } from './turn-types.ts';

export function offeredTools(
  specs: readonly ToolSpec[],
  outside: Pick<OutsideTools, 'indexed'> | undefined,
  events: readonly SessionEvent[],
): ToolSpec[] {
  const indexed = outside?.indexed();
  if (!indexed || indexed.size === 0) return [...specs];
  const loaded = loadedTools(events);
  return specs.filter((spec) => !indexed.has(spec.name) || loaded.has(spec.name));
}
