// Which message shows which permission question, so the message can be edited once the question
// is settled. Memory only: after a restart the press itself tells where the prompt is.

export interface ShownPrompt {
  chatId: number;
  messageId: number;
  /** The prompt as shown, before any settled line. */
  html: string;
  /** True when the prompt is a file's caption rather than a message's text. */
  caption: boolean;
}

export interface PromptRegistry {
  remember(requestId: string, shown: ShownPrompt): void;
  get(requestId: string): ShownPrompt | undefined;
  forget(requestId: string): void;
}

export function promptRegistry(max = 500): PromptRegistry {
  const shown = new Map<string, ShownPrompt>();
  return {
    remember(requestId, prompt) {
      shown.delete(requestId);
      shown.set(requestId, prompt);
      // Oldest first: a Map iterates in insertion order.
      for (const key of shown.keys()) {
        if (shown.size <= max) break;
        shown.delete(key);
      }
    },
    get: (requestId) => shown.get(requestId),
    forget: (requestId) => void shown.delete(requestId),
  };
}
