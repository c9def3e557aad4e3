import type { FastifyReply } from 'fastify';
import { blocked, httpStatusOf, type BlockedCode } from '@vcs/contract';

/** Send an answer object with the HTTP status its kind and code call for. */
export function sendAnswer(reply: FastifyReply, answer: { type: any; value?: unknown }) {
  return reply.code(httpStatusOf(answer)).type('application/json').header('x-answer-kind', answer.type).send(answer);
}

export function sendBlocked(reply: FastifyReply, code: BlockedCode, message: string, extra: Record<string, unknown> = {}) {
  return sendAnswer(reply, blocked(code, message, extra));
}
