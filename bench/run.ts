// `npm run bench`: prints each benchmark's figures and saves them under bench/results/.
// `npm run bench -- NAME...` runs only the named ones (e.g. `npm run bench -- channel`).
import { mkdirSync, writeFileSync } from 'node:fs';
import { channelBench } from './channel.ts';
import { classifierBench } from './classifier.ts';
import { containerOverhead } from './container-overhead.ts';
import { loopOverhead } from './loop-overhead.ts';
import { mcpIndexBench } from './mcp-index.ts';
import { offloadMemory } from './offload-memory.ts';

const BENCHES: Record<string, () => Promise<{ name: string }>> = {
  'loop-overhead': loopOverhead,
  'offload-memory': offloadMemory,
  classifier: classifierBench,
  'container-overhead': containerOverhead,
  'mcp-index': mcpIndexBench,
  channel: channelBench,
};

const wanted = process.argv.slice(2);
const unknown = wanted.filter((name) => !(name in BENCHES));
if (unknown.length > 0) {
  console.error(`bench: unknown ${unknown.join(', ')}; known: ${Object.keys(BENCHES).join(', ')}`);
  process.exit(2);
}
const dir = new URL('./results/', import.meta.url);
mkdirSync(dir, { recursive: true });
for (const [name, run] of Object.entries(BENCHES)) {
  if (wanted.length > 0 && !wanted.includes(name)) continue;
  const result = await run();
  const record = { ...result, node: process.version, at: new Date().toISOString() };
  console.log(JSON.stringify(record, null, 2));
  writeFileSync(new URL(`${result.name}.json`, dir), `${JSON.stringify(record, null, 2)}\n`);
}
