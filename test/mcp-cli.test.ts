// `steward mcp list` and doctor's line per server, on the real executable with real servers.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { serverFolder } from '../cli/mcp.ts';
import { EVERYTHING, HOSTILE } from './support/mcp-rig.ts';
import { runSteward } from './support/run-steward.ts';
import { tempDir } from './support/services.ts';

const data = tempDir();
afterAll(() => data.remove());

function configFile(): string {
  const file = join(data.path, 'steward.yaml');
  writeFileSync(
    file,
    JSON.stringify({
      data_dir: data.path,
      model: { base_url: 'http://127.0.0.1:9/v1', name: 'm' },
      mcp: {
        servers: {
          every: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
          bad: { command: process.execPath, args: [HOSTILE, 'many', '3'], trusted: true, sensitive: true },
          gone: { command: '/nonexistent/server' },
        },
      },
    }),
  );
  return file;
}

describe('steward mcp list', () => {
  it('prints one JSON object with every server, its state and its tools', async () => {
    const run = await runSteward(['mcp', 'list', '--json'], { env: { STEWARD_CONFIG: configFile() } });
    expect(run.code).toBe(0);
    const { servers } = JSON.parse(run.stdout) as { servers: Array<Record<string, unknown>> };
    expect(servers.map((s) => s.name)).toEqual(['every', 'bad', 'gone']);
    expect(servers[0]).toMatchObject({
      transport: 'stdio',
      state: 'connected',
      trusted: false,
      indexed: true,
    });
    expect(servers[0]?.tools).toContain('every__echo');
    expect(servers[1]).toEqual({
      name: 'bad',
      transport: 'stdio',
      state: 'connected',
      tools: ['bad__action_01', 'bad__action_02', 'bad__action_03'],
      trusted: true,
      sensitive: true,
      indexed: false,
    });
    expect(servers[2]).toMatchObject({ state: 'restarting', tools: [] });
  }, 60_000);

  it('lists tools with --tools, and doctor has a line per server', async () => {
    const env = { STEWARD_CONFIG: configFile() };
    const list = await runSteward(['mcp', 'list', '--tools'], { env });
    expect(list.stdout).toMatch(/^bad {2}stdio {2}connected {2}3 tools {2}trusted, sensitive$/m);
    expect(list.stdout).toContain('\n  bad__action_02\n');
    const doctor = await runSteward(['doctor'], { env });
    expect(doctor.stdout).toMatch(/^ok {3}mcp {7}every {2}stdio {2}connected {2}13 tools/m);
    expect(doctor.stdout).toMatch(/^warn mcp {7}gone {2}stdio {2}restarting \(the command/m);
    const misuse = await runSteward(['mcp', 'lost'], { env });
    expect(misuse.code).toBe(2);
  }, 60_000);
});

describe('where MCP servers start', () => {
  it.each([
    ['/srv/data', '/srv/data/workspace', '/srv/data/mcp'],
    ['/srv/data', '/srv/work', '/srv/data/mcp'],
    // A data folder inside the workspace (or the workspace itself): the model could write there.
    ['/srv/work/data', '/srv/work', '/'],
    ['/srv/work', '/srv/work', '/'],
    ['/srv/work/..data', '/srv/work', '/'],
  ])('data %s, workspace %s: %s', (dataDir, workspace, want) => {
    const made = tempDir();
    try {
      const at = (p: string) => (p === '/' ? '/' : join(made.path, p));
      expect(serverFolder(at(dataDir), at(workspace))).toBe(at(want));
    } finally {
      made.remove();
    }
  });

  it('never in the workspace: a module the model planted there is not what `python3 -m` runs', async () => {
    const dir = tempDir();
    try {
      const workspace = join(dir.path, 'workspace');
      const marker = join(dir.path, 'planted-ran');
      mkdirSync(join(workspace, 'planted_server'), { recursive: true });
      writeFileSync(
        join(workspace, 'planted_server', '__main__.py'),
        `open(${JSON.stringify(marker)}, "w").write("ran")\n`,
      );
      const where = join(dir.path, 'server-cwd');
      const file = join(dir.path, 'steward.yaml');
      writeFileSync(
        file,
        JSON.stringify({
          data_dir: join(dir.path, 'data'),
          workspace,
          model: { base_url: 'http://127.0.0.1:9/v1', name: 'm' },
          mcp: {
            servers: {
              planted: { command: 'python3', args: ['-m', 'planted_server'] },
              pwd: { command: 'sh', args: ['-c', `pwd > ${where}`] },
            },
          },
        }),
      );
      const run = await runSteward(['mcp', 'list', '--json'], { env: { STEWARD_CONFIG: file } });
      expect(run.code).toBe(0);
      expect(existsSync(marker)).toBe(false);
      expect(readFileSync(where, 'utf8').trim()).toBe(join(dir.path, 'data', 'mcp'));
    } finally {
      dir.remove();
    }
  }, 60_000);
});
