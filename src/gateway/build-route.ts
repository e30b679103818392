import type { ModelsConfig } from '../config/models.ts';
import { ConfigError } from '../errors.ts';
import { anthropic } from './anthropic.ts';
import { openAiCompatible } from './openai-compatible.ts';
import type { Route } from './router.ts';
import type { Provider } from './types.ts';

/** Turns a configured route into live providers, one client per provider name. */
export function buildRoute(name: string, models: ModelsConfig): Route {
  const entries = models.routes[name];
  if (!entries)
    throw new ConfigError(`config: route "${name}" is not defined; add it under routes in the config file`);
  const clients = new Map<string, Provider>();
  return {
    name,
    entries: entries.map((entry) => {
      const config = models.providers[entry.provider];
      if (!config)
        throw new ConfigError(
          `config: route "${name}" names provider "${entry.provider}", which is not defined`,
        );
      let provider = clients.get(entry.provider);
      if (!provider) {
        const options = { baseUrl: config.baseUrl, ...(config.apiKey ? { apiKey: config.apiKey } : {}) };
        provider =
          config.kind === 'anthropic'
            ? anthropic({
                ...options,
                ...(config.thinkingBudget ? { thinkingBudget: config.thinkingBudget } : {}),
              })
            : openAiCompatible({ ...options, effortHint: config.effortHint ?? true });
        clients.set(entry.provider, provider);
      }
      return {
        providerName: entry.provider,
        provider,
        model: entry.model,
        ...(entry.vision ? { vision: true } : {}),
      };
    }),
  };
}
