import { blocked } from '@vcs/contract';
import { requestJson } from '@vcs/platform';
import type { FastifyReply } from 'fastify';
import type { GatewayDeps } from '../deps.ts';

export interface MoneyReply { status: number; answer: Record<string, unknown>; replayed?: boolean }

/** Ask commerce on one of its money subjects; an absent or silent pillar is a typed 503, never a hang. */
export async function askCommerce(deps: GatewayDeps, subject: string, body: unknown, requestId: string, timeoutMs = deps.config.busTimeoutMs): Promise<MoneyReply> {
  try {
    return (await requestJson<MoneyReply>(deps.bus, subject, body, { timeoutMs, requestId })).json;
  } catch {
    return { status: 503, answer: blocked('pillar-unavailable', 'the commerce pillar is not answering; retry shortly', { pillar: 'commerce' }) as unknown as Record<string, unknown> };
  }
}

/** Send a money reply: its status, its answer, and `Idempotent-Replayed: true` when it is a stored answer. */
export function sendMoney(reply: FastifyReply, r: MoneyReply) {
  if (r.replayed) reply.header('idempotent-replayed', 'true');
  return reply.code(r.status).type('application/json').send(r.answer);
}
