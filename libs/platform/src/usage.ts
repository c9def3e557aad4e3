/**
 * Calls per account (Kv hash `meter:<account>`; Redis in the distributed mode, the embedded database in the embedded
 * one): the gateway counts the calls each capability route answers. Settlements and what they collected are counted
 * by commerce in its own table, in the statement that settles each one (commerce `money/usage.ts`); `GET /keys/me`
 * reads both.
 */
export const meterKey = (account: string) => `meter:${account}`;
