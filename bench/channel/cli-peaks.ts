// Peak memory of short-lived commands: `steward chat` answering one piped message (first run on an
// empty data folder, and again on the same folder), and `steward policy check`, which needs no database.
import { reply, startScriptedModel } from '../../test/support/scripted-model.ts';
import { freshState } from './backends.ts';
import { peakOfCommand } from './proc.ts';
import { round } from './stats.ts';

export async function cliPeaks(tree: string) {
  const model = await startScriptedModel(() => reply('pong done'));
  const state = await freshState('pglite');
  try {
    const env = { ...state.env, STEWARD_MODEL_BASE_URL: model.baseUrl, STEWARD_MODEL: 'test-model' };
    const first = await peakOfCommand(tree, ['chat'], env, state.cwd, 'hello\n');
    const again = await peakOfCommand(tree, ['chat'], env, state.cwd, 'hello again\n');
    const policy = await peakOfCommand(tree, ['policy', 'check', '--', 'ls', '-la'], {}, state.cwd, '');
    for (const [what, run] of Object.entries({ first, again, policy })) {
      if (run.code !== 0) throw new Error(`channel bench: steward ${what} exited ${run.code}`);
    }
    return {
      chatFirstRunPeakMib: round(first.peakMib),
      chatExistingPeakMib: round(again.peakMib),
      chatExistingSeconds: round(again.seconds, 2),
      policyCheckPeakMib: round(policy.peakMib),
      policyCheckSeconds: round(policy.seconds, 2),
    };
  } finally {
    await state.remove();
    await model.close();
  }
}
