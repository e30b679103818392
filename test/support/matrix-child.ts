// Run by test/matrix-e2ee.test.ts as a real child process: steward on Matrix with end-to-end
// encryption, on a PostgreSQL database, against the scripted model server of the parent. Prints
// one READY line (its direct room and device) and runs until it is killed.
import { migrate } from '../../src/store/migrate.ts';
import { openPostgres } from '../../src/store/open-db.ts';
import { startSteward } from './matrix-steward.ts';
import type { ScriptedModel } from './scripted-model.ts';
import type { MatrixEnv } from './services.ts';

const config = JSON.parse(process.argv[2] as string) as {
  env: MatrixEnv;
  modelUrl: string;
  dbUrl: string;
  workspace: string;
};
const db = await openPostgres(config.dbUrl);
await migrate(db);
const model = { baseUrl: config.modelUrl } as ScriptedModel;
const steward = await startSteward(config.env, model, db, config.workspace, { encryption: true });
process.stdout.write(
  `READY ${JSON.stringify({ directRoom: steward.directRoom, botId: steward.botId, device: steward.device })}\n`,
);
process.on('SIGTERM', () => {
  void steward
    .stop()
    .then(() => db.close())
    .then(() => process.exit(0));
});
