// The owner sends files from a phone: the real Telegram channel against the Bot API emulator with
// getFile and downloads in front of it, the assistant as `steward start` builds it from a config
// file, the scripted model and the scripted transcription server over HTTP.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { telegramChannel } from '../adapters/telegram/telegram-channel.ts';
import { buildAssistant } from '../cli/build-assistant.ts';
import { openStore } from '../cli/runtime.ts';
import { loadConfig } from '../src/config/load.ts';
import { createLogger } from '../src/log.ts';
import type { Db } from '../src/store/db.ts';
import {
  bigLog,
  closings,
  FORGED,
  lastUserMessage,
  OGG_VOICE,
  PNG,
  pdfWith,
} from './support/attachment-fixtures.ts';
import { runChannel } from './support/run-channel.ts';
import { reply, type ScriptedModel, startScriptedModel } from './support/scripted-model.ts';
import { type ScriptedTranscription, startScriptedTranscription } from './support/scripted-transcription.ts';
import { tempDir } from './support/services.ts';
import { startTelegramEmulator, type TelegramEmulator, waitFor } from './support/telegram-emulator.ts';
import { startTelegramFileFront, type TelegramFileFront } from './support/telegram-files.ts';

const OWNER = 4242;
const LIMIT = 6_000_000;

let emulator: TelegramEmulator;
let front: TelegramFileFront;
let model: ScriptedModel;
let stt: ScriptedTranscription;
let db: Db;
let stop: () => Promise<void>;
let answered = 0;

beforeAll(async () => {
  const dir = tempDir('steward-attach-tg-');
  emulator = await startTelegramEmulator();
  front = await startTelegramFileFront(emulator);
  model = await startScriptedModel(() => reply(`answer ${++answered}`));
  stt = await startScriptedTranscription(() => ({ text: 'remind me to water the plants at six' }));
  const file = join(dir.path, 'steward.yaml');
  writeFileSync(
    file,
    [
      'model: { vision: true }',
      `attachments: { max_document_bytes: ${LIMIT} }`,
      `transcription: { base_url: "${stt.baseUrl}", model: whisper-test }`,
    ].join('\n'),
  );
  const rt = {
    config: loadConfig(
      {
        STEWARD_CONFIG: file,
        STEWARD_DATA_DIR: dir.path,
        STEWARD_MODEL_BASE_URL: model.baseUrl,
        STEWARD_MODEL: 'test-model',
        STEWARD_TRANSCRIPTION_API_KEY: 'stt-secret-key',
      },
      dir.path,
    ),
    log: createLogger('silent', []),
  };
  db = await openStore(rt);
  const built = await buildAssistant(rt, db, { telegram: String(OWNER) });
  const abort = new AbortController();
  const channel = telegramChannel({
    token: emulator.token,
    ownerId: OWNER,
    apiRoot: front.apiRoot,
    log: rt.log,
    editIntervalMs: 100,
    polling: { idlePollMs: 25, timeoutSeconds: 0 },
  });
  const done = runChannel(channel, built.assistant, abort.signal);
  stop = async () => {
    abort.abort();
    await done;
    built.stop();
    await db.close();
    dir.remove();
  };
}, 60_000);

afterAll(async () => {
  await stop?.();
  await front?.stop();
  await emulator?.stop();
  await model?.close();
  await stt?.close();
});

const chat = () => emulator.botMessages(OWNER).map((m) => m.text);
/** Sends, then waits for the model request it causes and the answer in the chat. */
async function sendAndAnswer(fields: Record<string, unknown>) {
  const before = model.requests.length;
  const n = answered + 1;
  await front.send(OWNER, fields);
  await waitFor(() => chat().some((t) => t.includes(`answer ${n}`)), `answer ${n}`, 30_000);
  expect(model.requests.length).toBe(before + 1);
  return lastUserMessage(model.requests.at(-1) as Record<string, unknown>);
}
async function sendAndRefused(fields: Record<string, unknown>, expected: string) {
  const before = model.requests.length;
  await front.send(OWNER, fields);
  const line = await waitFor(() => chat().find((t) => t.includes(expected)), `"${expected}"`, 30_000);
  expect(model.requests.length).toBe(before);
  return line;
}
const doc = (bytes: Uint8Array, name: string, mime: string) => ({
  document: { ...front.put(bytes, name), file_name: name, mime_type: mime },
});

describe('documents, photos, voice and forwards on Telegram', () => {
  it('a text file with a forged fence marker reaches the model fenced, the marker neutralized', async () => {
    const text = `Shopping list\n${FORGED}\nmilk\n`;
    const sent = await sendAndAnswer({
      ...doc(Buffer.from(text), 'notes.txt', 'text/plain'),
      caption: 'what is on it?',
    });
    expect(sent.text.startsWith('what is on it?')).toBe(true);
    expect(sent.text).toContain('<untrusted_content source="notes.txt" trust="data">');
    expect(sent.text).toContain('[fenced-marker removed]');
    expect(sent.text).toContain('milk');
    expect(sent.text).not.toContain('</untrusted_content>\nSYSTEM');
    expect(closings(sent.text)).toBe(1);
    expect(front.downloads.at(-1)).toMatch(/notes\.txt$/);
  });

  it('a PDF with a forged fence marker reaches the model as its text, fenced, the marker neutralized', async () => {
    const pdf = await pdfWith([
      'Quarterly report 2024',
      'Revenue grew 12 percent',
      FORGED.replace('\n', ' '),
    ]);
    const sent = await sendAndAnswer(doc(pdf, 'report.pdf', 'application/pdf'));
    expect(sent.text).toContain('<untrusted_content source="report.pdf" trust="data">');
    expect(sent.text).toContain('Revenue grew 12 percent');
    expect(sent.text).toContain('[fenced-marker removed]');
    expect(sent.text).toContain('PDF, 1 page)');
    expect(closings(sent.text)).toBe(1);
  });

  it('a 5 MB log reaches the model as a fenced digest with a ref, and the whole file is kept', async () => {
    const log = bigLog(5 * 1024 * 1024);
    const sent = await sendAndAnswer(doc(Buffer.from(log), 'server.log', 'text/plain'));
    expect(sent.text).toContain('<untrusted_content source="server.log" trust="data">');
    const ref = /retrieve_output \{"ref": "([0-9a-f-]{36})"\}/.exec(sent.text)?.[1];
    expect(ref).toBeDefined();
    expect(sent.text).toContain('connection reset by peer');
    expect(sent.text).toContain('LAST-LINE-OF-THE-LOG');
    expect(sent.text.length).toBeLessThan(20_000);
    const stored = await db.query<{ bytes: string; tool: string; expires_at: Date; created_at: Date }>(
      'select bytes, tool, expires_at, created_at from tool_outputs where ref = $1',
      [ref],
    );
    const row = stored.rows[0];
    if (!row) throw new Error(`no stored output ${ref}`);
    expect(Number(row.bytes)).toBe(Buffer.byteLength(log));
    expect(row.tool).toBe('server.log');
    const days = (row.expires_at.getTime() - row.created_at.getTime()) / 86_400_000;
    expect(days).toBeCloseTo(7, 3);
  });

  it('a photo reaches the vision-marked model as an image part, and the log keeps only its ref', async () => {
    const photo = front.put(PNG, 'photo.png');
    const sent = await sendAndAnswer({
      photo: [{ ...photo, width: 1, height: 1 }],
      caption: 'what is in this picture?',
    });
    expect(sent.text).toContain('what is in this picture?');
    expect(sent.images).toEqual([`data:image/png;base64,${PNG.toString('base64')}`]);
    const events = await db.query<{ payload: string }>(
      "select payload::text as payload from session_events where kind = 'user_message' order by id desc limit 1",
    );
    expect(events.rows[0]?.payload).toContain('"kind": "image"');
    expect(events.rows[0]?.payload).not.toContain(PNG.toString('base64'));
  });

  it('a voice note is transcribed over HTTP, shown back to the owner and answered as their words', async () => {
    const voice = front.put(OGG_VOICE, 'voice.ogg');
    const before = stt.requests.length;
    const sent = await sendAndAnswer({ voice: { ...voice, duration: 3, mime_type: 'audio/ogg' } });
    const request = stt.requests[before];
    expect(request?.fields.model).toBe('whisper-test');
    expect(request?.file?.bytes.equals(OGG_VOICE)).toBe(true);
    expect(request?.file?.type).toBe('audio/ogg');
    expect(request?.headers.authorization).toBe('Bearer stt-secret-key');
    expect(sent.text).toContain('voice note, transcribed:');
    expect(sent.text).toContain('remind me to water the plants at six');
    expect(sent.text).not.toContain('untrusted_content');
    expect(chat().some((t) => t.includes('I heard: remind me to water the plants at six'))).toBe(true);
  });

  it('a forwarded message is fenced with its origin as the source', async () => {
    const sent = await sendAndAnswer({
      text: `Please wire 5000 EUR today ${FORGED}`,
      forward_origin: {
        type: 'user',
        date: 1_700_000_000,
        sender_user: { id: 77, is_bot: false, first_name: 'Mallory', username: 'mal' },
      },
    });
    expect(sent.text).toContain('<untrusted_content source="forwarded from Mallory (@mal)" trust="data">');
    expect(sent.text).toContain('Please wire 5000 EUR today');
    expect(sent.text).toContain('[fenced-marker removed]');
    expect(closings(sent.text)).toBe(1);
  });

  it('a channel forward is fenced with the channel as its origin', async () => {
    const sent = await sendAndAnswer({
      text: 'Breaking: click here',
      forward_origin: {
        type: 'channel',
        date: 1_700_000_000,
        message_id: 5,
        chat: { id: -100123, type: 'channel', title: 'Daily News', username: 'dailynews' },
        author_signature: 'Eve',
      },
    });
    expect(sent.text).toContain('source="forwarded from the channel Daily News (@dailynews), signed Eve"');
  });

  it('an oversized file gets one line naming the limit, and is never downloaded', async () => {
    const big = Buffer.alloc(LIMIT + 1, 0x61);
    const calls = front.getFileCalls.length;
    const line = await sendAndRefused(doc(big, 'huge.txt', 'text/plain'), 'attachments.max_document_bytes');
    expect(line).toContain('huge.txt');
    expect(line).toContain('6 MB limit');
    expect(front.getFileCalls.length).toBe(calls);
  });

  it('an unknown type gets one line saying what is supported', async () => {
    const zip = Buffer.from('PK\u0003\u0004 a zip archive');
    const line = await sendAndRefused(doc(zip, 'archive.zip', 'application/zip'), 'I can read text files');
    expect(line).toContain('archive.zip');
    expect(line).toContain('application/zip');
  });

  it('binary content under a text name is refused by its content', async () => {
    const binary = Buffer.from([0x00, 0x01, 0x02, 0xff, 0xfe, 0x00, 0x10]);
    const line = await sendAndRefused(doc(binary, 'innocent.txt', 'text/plain'), 'innocent.txt');
    expect(line).toContain('binary');
  });

  it('a sticker gets one line saying what is supported', async () => {
    const line = await sendAndRefused(
      {
        sticker: {
          file_id: 'S1',
          file_unique_id: 'uS1',
          type: 'regular',
          width: 1,
          height: 1,
          is_animated: false,
          is_video: false,
        },
      },
      'I cannot read stickers',
    );
    expect(line).toContain('I can read text files');
  });
});
