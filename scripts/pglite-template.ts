// npm's postinstall: makes the empty embedded database that a first run copies instead of running
// initdb (src/store/pglite-template.ts). Never fails the install: without the template, the first
// run makes its database itself, as before.
import { createPglite } from '../src/store/pglite-db.ts';
import { defaultTemplatePath, makeTemplate } from '../src/store/pglite-template.ts';

let template = 'node_modules/.cache/steward';
try {
  template = defaultTemplatePath();
  const started = performance.now();
  // A write the disk cannot flush fails this template, not the install.
  const outcome = await makeTemplate(template, (dir) =>
    createPglite(dir, (error) => {
      throw error;
    }),
  );
  if (outcome === 'made')
    process.stdout.write(
      `steward: made the empty database template in ${((performance.now() - started) / 1000).toFixed(1)} s (${template})\n`,
    );
} catch (error) {
  process.stderr.write(
    `steward: could not make the empty database template at ${template} (${(error as Error).message}); the first run will make its database itself\n`,
  );
}
