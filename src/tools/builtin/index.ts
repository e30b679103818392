import type { Tool } from '../types.ts';
import { calculateTool } from './calculate.ts';
import { convertTimeTool } from './convert-time.ts';
import { currentTimeTool } from './current-time.ts';

export { calculateTool, convertTimeTool, currentTimeTool };

/** The pure built-ins: no I/O, trusted output, exempt from the permission chain. */
export const builtinPureTools: readonly Tool[] = [currentTimeTool, convertTimeTool, calculateTool];
