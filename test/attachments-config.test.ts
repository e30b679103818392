// The config keys of the attachment path: size caps, sensitive kinds, transcription (its key from
// the environment or a _FILE), and vision on models and routes.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/load.ts';
import { buildRoute } from '../src/gateway/build-route.ts';
import { DEFAULT_ATTACHMENT_LIMITS } from '../src/limits.ts';

const dir = mkdtempSync(join(tmpdir(), 'steward-attach-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const load = (yaml: string, env: Record<string, string> = {}) => {
  const file = join(dir, `c${++n}.yaml`);
  writeFileSync(file, yaml);
  return loadConfig({ STEWARD_CONFIG: file, STEWARD_MODEL: 'm', ...env }, dir);
};
const error = (yaml: string, env: Record<string, string> = {}) => {
  try {
    load(yaml, env);
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('expected a config error');
};

describe('attachments and transcription config', () => {
  it('defaults: the limits of src/limits.ts, nothing sensitive, no transcription', () => {
    const config = load('log_level: info\n');
    expect(config.attachments).toEqual({ limits: DEFAULT_ATTACHMENT_LIMITS, sensitive: [] });
  });

  it('reads caps, sensitive kinds and the transcription endpoint with its key from a _FILE', () => {
    const keyFile = join(dir, 'stt.key');
    writeFileSync(keyFile, 'sk-stt-123\n');
    const config = load(
      [
        'attachments: { max_document_bytes: 4096, max_photo_bytes: 2048, max_audio_bytes: 8192, pdf_max_pages: 5, download_timeout_s: 45, sensitive: [document, forward] }',
        'transcription: { base_url: "http://127.0.0.1:8080/v1/", model: whisper-1, language: de, timeout_s: 30 }',
        'routes: { local: [{ provider: default, model: llama }] }',
        'sensitive_tool_route: local',
      ].join('\n'),
      { STEWARD_TRANSCRIPTION_API_KEY_FILE: keyFile },
    );
    expect(config.attachments).toEqual({
      limits: {
        documentBytes: 4096,
        photoBytes: 2048,
        audioBytes: 8192,
        pdfPages: 5,
        transcriptionTimeoutMs: 30_000,
        downloadTimeoutMs: 45_000,
      },
      sensitive: ['document', 'forward'],
      transcription: {
        baseUrl: 'http://127.0.0.1:8080/v1',
        model: 'whisper-1',
        apiKey: 'sk-stt-123',
        language: 'de',
      },
    });
    expect(config.secrets).toContain('sk-stt-123');
  });

  it('takes the endpoint from the environment too', () => {
    const config = loadConfig(
      {
        STEWARD_MODEL: 'm',
        STEWARD_TRANSCRIPTION_BASE_URL: 'http://stt:9000/v1',
        STEWARD_TRANSCRIPTION_MODEL: 'base.en',
      },
      dir,
    );
    expect(config.attachments.transcription).toEqual({ baseUrl: 'http://stt:9000/v1', model: 'base.en' });
  });

  it.each([
    [
      'attachments: { max_document_bytes: 10 }',
      /attachments\.max_document_bytes: must be >= 1024.*e\.g\. 20971520/,
    ],
    [
      'attachments: { sensitive: [video] }',
      /attachments\.sensitive\/0: is not an allowed value|attachments\.sensitive/,
    ],
    ['attachments: { sensitive: [document] }', /sensitive_tool_route is not set/],
    [
      'attachments: { max_pages: 3 }',
      /attachments\.max_pages: unknown key; remove it or use one of max_document_bytes/,
    ],
    ['transcription: { model: whisper-1 }', /transcription/],
    ['transcription: { base_url: "ftp://x", model: w }', /transcription\.base_url.*not an http\(s\) URL/],
    [
      'transcription: { base_url: "http://x/v1", model: w, api_key: k }',
      /secret.*STEWARD_TRANSCRIPTION_API_KEY/,
    ],
  ])('%s → a one-line error naming the key', (yaml, expected) => {
    const message = error(yaml);
    expect(message).toMatch(expected);
    expect(message).not.toContain('\n');
  });

  it('marks models vision-capable on routes and on the default model', () => {
    const config = load(
      [
        'model: { vision: true }',
        'providers: { cloud: { kind: openai, base_url: "https://api.example/v1" } }',
        'routes: { eyes: [{ provider: cloud, model: gpt-vision, vision: true }, { provider: cloud, model: text-only }] }',
      ].join('\n'),
    );
    expect(config.models.routes.default).toEqual([{ provider: 'default', model: 'm', vision: true }]);
    const route = buildRoute('eyes', config.models);
    expect(route.entries.map((e) => e.vision === true)).toEqual([true, false]);
  });
});
