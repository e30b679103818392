// `npm run bench`: prints each benchmark's figures and saves them under bench/results/.
import { mkdirSync, writeFileSync } from 'node:fs';
import { classifierBench } from './classifier.ts';
import { containerOverhead } from './container-overhead.ts';
import { loopOverhead } from './loop-overhead.ts';
import { mcpIndexBench } from './mcp-index.ts';
import { offloadMemory } from './offload-memory.ts';

const results = [
  await loopOverhead(),
  await offloadMemory(),
  await classifierBench(),
  await containerOverhead(),
  await mcpIndexBench(),
];
const dir = new URL('./results/', import.meta.url);
mkdirSync(dir, { recursive: true });
for (const result of results) {
  const record = { ...result, node: process.version, at: new Date().toISOString() };
  console.log(JSON.stringify(record, null, 2));
  writeFileSync(new URL(`${result.name}.json`, dir), `${JSON.stringify(record, null, 2)}\n`);
}
