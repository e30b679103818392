import module from 'node:module';

module.enableCompileCache?.();
const list = (process.env.MODS ?? '').split(',');
for (const m of list) {
  const t = performance.now();
  await import(m);
  console.log(
    `${m} ${(performance.now() - t).toFixed(0)} ms rss ${(process.memoryUsage().rss / 1048576).toFixed(0)}`,
  );
}
