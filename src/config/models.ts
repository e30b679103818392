import { ConfigError } from '../errors.ts';
import { DEFAULT_LIMITS as D, type Limits } from '../limits.ts';
import type { Env } from './load.ts';

export interface ProviderConfig {
  kind: 'openai' | 'anthropic';
  baseUrl: string;
  apiKey?: string;
  /** openai: send `reasoning_effort: low` on routine steps (default true; some servers reject it). */
  effortHint?: boolean;
  /** anthropic: extended-thinking budgets by effort; absent means no thinking. */
  thinkingBudget?: { low: number; normal: number };
}

export interface RouteEntryConfig {
  provider: string;
  model: string;
  /** The model takes image input. */
  vision?: boolean;
}

export interface Price {
  inputPerMTok: number;
  outputPerMTok: number;
}

export interface LoopConfig {
  maxSteps: number;
  maxRepeats: number;
  parallelTools: number;
  toolTimeoutMs: number;
  permissionTimeoutMs: number;
  /** How long "allow for this session" lasts. */
  grantTtlMs: number;
}

export interface OffloadConfig {
  defaultBytes: number;
  thresholdBytes: Record<string, number>;
  retentionMs: number;
}

export interface CompactionConfig {
  budgetTokens: number;
  keepTurns: number;
  maxTurns: number;
}

export interface ModelsConfig {
  /** Always holds `default`: the endpoint of STEWARD_MODEL_BASE_URL. */
  providers: Record<string, ProviderConfig>;
  /** `default` is present when a model is named (STEWARD_MODEL, model.name or routes.default). */
  routes: Record<string, RouteEntryConfig[]>;
  prices: Record<string, Price>;
  loop: LoopConfig;
  /** The route a session is pinned to once it ran a sensitive tool. */
  sensitiveRoute?: string;
  offload: OffloadConfig;
  compaction: CompactionConfig;
  /** Values of the variables named by `api_key_env`, for redaction. */
  secrets: string[];
}

interface ModelsSection {
  model?: { name?: string; vision?: boolean };
  providers?: Record<
    string,
    {
      kind: 'openai' | 'anthropic';
      base_url: string;
      api_key_env?: string;
      effort_hint?: boolean;
      thinking_budget?: { low: number; normal: number };
    }
  >;
  routes?: Record<string, Array<{ provider: string; model: string; vision?: boolean }>>;
  prices?: Record<string, { input_per_mtok: number; output_per_mtok: number }>;
  sensitive_tool_route?: string;
  offload?: { threshold_bytes?: number; shell_threshold_bytes?: number; retention_days?: number };
  compaction?: { budget_tokens?: number; keep_turns?: number };
  loop?: {
    max_steps?: number;
    max_repeats?: number;
    parallel_tools?: number;
    tool_timeout_s?: number;
    permission_timeout_s?: number;
    grant_ttl_hours?: number;
  };
}

/**
 * Providers, routes, prices and loop limits. STEWARD_MODEL in the environment wins over the file:
 * it makes the default route that one model on the default endpoint.
 */
export function resolveModels(
  tree: ModelsSection,
  env: Env,
  defaultProvider: ProviderConfig,
  where: (key: string) => string,
  checkUrl: (value: string, key: string) => void,
): ModelsConfig {
  const providers: Record<string, ProviderConfig> = { default: defaultProvider };
  const secrets: string[] = [];
  for (const [name, p] of Object.entries(tree.providers ?? {})) {
    const key = `providers.${name}`;
    if (name === 'default') {
      throw new ConfigError(
        `config: ${where(key)}: the name "default" is taken by STEWARD_MODEL_BASE_URL; choose another name`,
      );
    }
    checkUrl(p.base_url, `${key}.base_url`);
    const provider: ProviderConfig = { kind: p.kind, baseUrl: p.base_url.replace(/\/+$/, '') };
    if (p.effort_hint !== undefined) provider.effortHint = p.effort_hint;
    if (p.thinking_budget) provider.thinkingBudget = p.thinking_budget;
    if (p.api_key_env) {
      const value = env[p.api_key_env];
      if (!value) {
        throw new ConfigError(
          `config: ${where(`${key}.api_key_env`)} names ${p.api_key_env}, which is not set; set it in the environment or remove api_key_env`,
        );
      }
      provider.apiKey = value;
      secrets.push(value);
    }
    providers[name] = provider;
  }

  const routes: Record<string, RouteEntryConfig[]> = {};
  for (const [name, entries] of Object.entries(tree.routes ?? {})) {
    for (const [index, entry] of entries.entries()) {
      if (!providers[entry.provider]) {
        throw new ConfigError(
          `config: ${where(`routes.${name}`)}: entry ${index + 1} names provider "${entry.provider}", which is not defined; use one of ${Object.keys(providers).join(', ')}`,
        );
      }
    }
    routes[name] = entries.map((e) => ({
      provider: e.provider,
      model: e.model,
      ...(e.vision ? { vision: true } : {}),
    }));
  }
  const envModel = env.STEWARD_MODEL;
  const vision = tree.model?.vision ? { vision: true } : {};
  if (envModel) routes.default = [{ provider: 'default', model: envModel, ...vision }];
  else if (!routes.default && tree.model?.name)
    routes.default = [{ provider: 'default', model: tree.model.name, ...vision }];

  const prices: Record<string, Price> = {};
  for (const [model, p] of Object.entries(tree.prices ?? {})) {
    prices[model] = { inputPerMTok: p.input_per_mtok, outputPerMTok: p.output_per_mtok };
  }

  const sensitive = tree.sensitive_tool_route;
  if (sensitive && !routes[sensitive]) {
    throw new ConfigError(
      `config: ${where('sensitive_tool_route')}: names route "${sensitive}", which is not defined; add it under routes (chained to a local model)`,
    );
  }
  const loop = tree.loop ?? {};
  const offload = tree.offload ?? {};
  return {
    providers,
    routes,
    prices,
    secrets,
    ...(sensitive ? { sensitiveRoute: sensitive } : {}),
    offload: {
      defaultBytes: offload.threshold_bytes ?? D.offload.defaultBytes,
      thresholdBytes: { ...D.offload.thresholdBytes, ...shellThreshold(offload.shell_threshold_bytes) },
      retentionMs:
        offload.retention_days === undefined ? D.offload.retentionMs : offload.retention_days * DAY_MS,
    },
    compaction: {
      budgetTokens: tree.compaction?.budget_tokens ?? D.compaction.budgetTokens,
      keepTurns: tree.compaction?.keep_turns ?? D.compaction.keepTurns,
      maxTurns: D.compaction.maxTurns,
    },
    loop: {
      maxSteps: loop.max_steps ?? D.maxSteps,
      maxRepeats: loop.max_repeats ?? D.maxRepeats,
      parallelTools: loop.parallel_tools ?? D.parallelTools,
      toolTimeoutMs: loop.tool_timeout_s === undefined ? D.toolTimeoutMs : loop.tool_timeout_s * 1000,
      permissionTimeoutMs:
        loop.permission_timeout_s === undefined ? D.permissionTtlMs : loop.permission_timeout_s * 1000,
      grantTtlMs: loop.grant_ttl_hours === undefined ? D.grantTtlMs : loop.grant_ttl_hours * HOUR_MS,
    },
  };
}

const HOUR_MS = 60 * 60 * 1000;
const DAY_MS = 24 * HOUR_MS;
const shellThreshold = (bytes: number | undefined): Record<string, number> =>
  bytes === undefined ? {} : { shell: bytes };

/** The one `Limits` the core runs under, from the configured sections. */
export function limitsOf(models: Pick<ModelsConfig, 'loop' | 'offload' | 'compaction'>): Limits {
  const { loop, offload, compaction } = models;
  return {
    ...D,
    maxSteps: loop.maxSteps,
    maxRepeats: loop.maxRepeats,
    parallelTools: loop.parallelTools,
    toolTimeoutMs: loop.toolTimeoutMs,
    permissionTtlMs: loop.permissionTimeoutMs,
    grantTtlMs: loop.grantTtlMs,
    offload,
    compaction,
  };
}

/** The cost of one call, or null when the model has no price. */
export function costOf(
  prices: Record<string, Price>,
  model: string,
  tokensIn: number,
  tokensOut: number,
): number | null {
  const price = prices[model];
  if (!price) return null;
  return (tokensIn * price.inputPerMTok + tokensOut * price.outputPerMTok) / 1_000_000;
}
