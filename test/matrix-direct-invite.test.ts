// Which room the owner invited the bot to becomes the owner's private room (where prompts go).
// Security-relevant: a room with anyone else in it must never receive the owner's prompts.
import { describe, expect, it } from 'vitest';
import { classifyDirectInvite, type Member } from '../adapters/matrix/direct-room.ts';

const OWNER = '@owner:example.org';
const BOT = '@bot:example.org';
const two: Member[] = [
  { user: OWNER, membership: 'join' },
  { user: BOT, membership: 'join' },
];
const base = {
  isDirect: true,
  sender: OWNER,
  owner: OWNER,
  bot: BOT,
  members: two,
  encrypted: false,
  canDecrypt: false,
};

describe('classifyDirectInvite', () => {
  it.each([
    ['a DM from the owner, only the two', {}, { adopt: true }],
    ['an encrypted DM when the bot decrypts', { encrypted: true, canDecrypt: true }, { adopt: true }],
    [
      'a stranger who left is no one',
      { members: [...two, { user: '@s:x', membership: 'leave' }] },
      { adopt: true },
    ],
    ['an invite without is_direct', { isDirect: undefined }, { adopt: false, reason: 'not_direct' }],
    ['is_direct as a string', { isDirect: 'true' }, { adopt: false, reason: 'not_direct' }],
    ['a DM from someone else', { sender: '@mallory:example.org' }, { adopt: false, reason: 'not_owner' }],
    ['a look-alike owner id', { sender: '@owner:example.org.evil' }, { adopt: false, reason: 'not_owner' }],
    [
      'a stranger invited too',
      { members: [...two, { user: '@s:x', membership: 'invite' }] },
      { adopt: false, reason: 'others_present' },
    ],
    [
      'a stranger joined',
      { members: [...two, { user: '@s:x', membership: 'join' }] },
      { adopt: false, reason: 'others_present' },
    ],
    [
      'the owner has left already',
      { members: [{ user: OWNER, membership: 'leave' }, two[1] as Member] },
      { adopt: false, reason: 'others_present' },
    ],
    ['encrypted and the bot cannot decrypt', { encrypted: true }, { adopt: false, reason: 'unreadable' }],
  ])('%s', (_name, change, verdict) => {
    expect(classifyDirectInvite({ ...base, ...change })).toEqual(verdict);
  });
});
