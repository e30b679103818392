// Argument synopses that a command also quotes in its own usage errors; the catalog (index.ts)
// shows them without loading the command.
export const MCP_SYNOPSIS = 'list [--tools] [--json]';
export const SKILLS_SYNOPSIS = 'validate [DIR]';
