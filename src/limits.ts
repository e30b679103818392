// Every limit steward runs under, with its default, in one place. Config fills a `Limits` from the
// file; the core, the store and the tools read the defaults only from here.

export interface Limits {
  /** Model steps per turn; the last has no tools, the one before is told to finish. */
  maxSteps: number;
  /** The same call this many times in a row ends the turn's tool use. */
  maxRepeats: number;
  /** Tool calls of one step that run at once. */
  parallelTools: number;
  /** For tools that set none of their own. */
  toolTimeoutMs: number;
  /** How long a question waits for the owner before it counts as denied. */
  permissionTtlMs: number;
  /** How long "allow for this session" lasts. */
  grantTtlMs: number;
  offload: {
    /** Results larger than this (bytes) are stored and replaced by a digest. */
    defaultBytes: number;
    /** The same threshold for particular tools. */
    thresholdBytes: Readonly<Record<string, number>>;
    /** Stored outputs are collected after this. */
    retentionMs: number;
  };
  /**
   * Older turns are summarized when the context passes this budget, or the turns since the last
   * summary pass `maxTurns`.
   */
  compaction: { budgetTokens: number; keepTurns: number; maxTurns: number };
  /** How often overdue questions are looked for. */
  sweepEveryMs: number;
  /** On stop, how long running turns get to wind down after they are told to. */
  stopGraceMs: number;
  /** A digest fire with no delivered post this long after it was due is reported to the owner. */
  digestGraceMs: number;
  /** A digest due before its channel is up (caught up at start) waits this long for it, then fails. */
  digestChannelWaitMs: number;
  /** How long services (MCP servers, the digest engine) wait at start for every channel to be up. */
  servicesWaitMs: number;
  /** A final reply that could not be delivered is posted late at most this many times before it is only logged. */
  lateReplyTries: number;
}

/** How MCP servers are started, waited for and restarted, and when a server goes behind the index. */
export interface McpLimits {
  connectMs: number;
  readyWaitMs: number;
  restartBaseMs: number;
  restartMaxMs: number;
  indexAbove: number;
  descriptionChars: number;
  indexLineChars: number;
  killGraceMs: number;
}

export const DEFAULT_MCP_LIMITS: McpLimits = {
  /** Connecting (spawn or HTTP, then initialize and tools/list) may take this long before it counts as failed. */
  connectMs: 15_000,
  /** A turn waits at most this long for servers still connecting before its first model request. */
  readyWaitMs: 15_000,
  /** The first restart after a failure waits this long; each failure in a row doubles it. */
  restartBaseMs: 1_000,
  restartMaxMs: 5 * 60 * 1000,
  /** A server with more tools than this is listed in the index instead of sending every schema. */
  indexAbove: 8,
  /** A tool description in a request, or an index line, is cut at this many characters. */
  descriptionChars: 1024,
  indexLineChars: 160,
  /** A closing server process gets this long after SIGTERM before SIGKILL. */
  killGraceMs: 2_000,
};

const HOUR_MS = 60 * 60 * 1000;

export const DEFAULT_LIMITS: Limits = {
  maxSteps: 16,
  maxRepeats: 3,
  parallelTools: 4,
  toolTimeoutMs: 60_000,
  permissionTtlMs: 30 * 60 * 1000,
  grantTtlMs: 12 * HOUR_MS,
  // 8 KiB, and 4 KiB for shell, whose output is often a long log.
  offload: { defaultBytes: 8192, thresholdBytes: { shell: 4096 }, retentionMs: 7 * 24 * HOUR_MS },
  compaction: { budgetTokens: 24_000, keepTurns: 4, maxTurns: 200 },
  sweepEveryMs: 30_000,
  stopGraceMs: 5_000,
  digestGraceMs: 15 * 60 * 1000,
  digestChannelWaitMs: 2 * 60 * 1000,
  servicesWaitMs: 5_000,
  lateReplyTries: 5,
};

/** Per-container limits of the sandbox (`sandbox.memory_mb`, `sandbox.cpus`, `sandbox.pids`) and its fixed sizes. */
export const DEFAULT_SANDBOX_LIMITS = {
  memoryMb: 512,
  cpus: 1,
  pids: 128,
  /** The container's /tmp, a tmpfs. */
  tmpfsMb: 64,
  /** A request line to sandboxd; anything longer is refused before it is parsed. */
  maxRequestBytes: 64 * 1024,
  /** Longest run sandboxd accepts (the shell caps its own timeout lower). */
  maxTimeoutMs: 10 * 60 * 1000,
  /** Files and folders made writable for the container's user before one run; past that, refused. */
  maxWorkspaceEntries: 50_000,
} as const;

/**
 * What an attachment the owner sends may weigh (`attachments.max_*_bytes`), checked against the
 * size the platform announces before any download and again while the download streams.
 */
export interface AttachmentLimits {
  documentBytes: number;
  photoBytes: number;
  audioBytes: number;
  /** Pages of a PDF read for text; the rest is named as left out. */
  pdfPages: number;
  /** One transcription request may take this long. */
  transcriptionTimeoutMs: number;
  /** One download from the platform may take this long: a server that stalls does not hold the turn. */
  downloadTimeoutMs: number;
}

const MIB = 1024 * 1024;

export const DEFAULT_ATTACHMENT_LIMITS: AttachmentLimits = {
  // Telegram's Bot API hands bots files up to 20 MB; Matrix servers commonly allow 50.
  documentBytes: 20 * MIB,
  photoBytes: 10 * MIB,
  audioBytes: 20 * MIB,
  pdfPages: 300,
  transcriptionTimeoutMs: 120_000,
  downloadTimeoutMs: 120_000,
};

/**
 * Fixed bounds on what outsiders choose: a file name longer than this is cut (names reach the
 * model only inside a fence, but every fence and stored row carries them); a transcription answer
 * is read up to `transcriptBodyBytes` and its text kept up to `transcriptChars` (about an hour of
 * speech). A PDF is read in a child process held to `pdfTimeoutMs` and `pdfHeapMb` (a small file
 * can unpack to gigabytes), and its text stops growing past `pdfTextChars`.
 */
export const ATTACHMENT_BOUNDS = {
  nameChars: 120,
  transcriptBodyBytes: 1024 * 1024,
  transcriptChars: 50_000,
  pdfTextChars: 4 * 1024 * 1024,
  pdfTimeoutMs: 60_000,
  pdfHeapMb: 512,
} as const;

/** The config key that names each size limit, for the one-line error that names it. */
export const ATTACHMENT_LIMIT_KEYS = {
  documentBytes: 'attachments.max_document_bytes',
  photoBytes: 'attachments.max_photo_bytes',
  audioBytes: 'attachments.max_audio_bytes',
  downloadTimeoutMs: 'attachments.download_timeout_s',
} as const;

/**
 * The embedded database's lock (src/store/pglite-lock.ts): touched by its holder every
 * `heartbeatMs`; a lock from another PID namespace or boot untouched for `staleMs` is stale. A
 * minute, because the touch runs on the main thread, which a first open's flush of a thousand
 * files on an SD card can hold for tens of seconds; a container restarted after a kill waits so long.
 */
export const EMBEDDED_DB_LOCK = { heartbeatMs: 5_000, staleMs: 60_000 } as const;

/**
 * How often the embedded database is checkpointed while something is written: PostgreSQL's own
 * checkpoint_timeout, which PGlite's single-user mode never acts on (src/store/pglite-checkpoints.ts).
 */
export const EMBEDDED_DB_CHECKPOINT_MS = 5 * 60_000;

/**
 * The embedded database's PostgreSQL settings, sized for one owner's bot. PGlite's defaults are
 * a server's (shared_buffers 128MB), and its shared memory is zeroed as it starts, by wasm code
 * that runs at about 300 MB/s: 4MB (512 pages; shared memory 8MB in all, from 24MB at 16MB) opens
 * about 70 ms sooner and holds 18 MiB less RSS. A page not in the pool is read from the file,
 * which the kernel has cached. PGlite turns fsync off; a commit that must survive a power cut
 * needs it on, through fsync() itself, as PGlite's fdatasync does nothing (src/store/pglite-fsync.ts).
 */
export const EMBEDDED_DB_SETTINGS: Readonly<Record<string, string>> = {
  shared_buffers: '4MB',
  max_connections: '8',
  fsync: 'on',
  wal_sync_method: 'fsync',
};
