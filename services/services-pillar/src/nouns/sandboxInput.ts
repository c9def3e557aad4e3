import type { HandlerTools } from '@vcs/platform';
import { SANDBOX_DEFAULT_VIN } from '@vcs/sandbox';

/**
 * The VIN an answer is about: the caller's, or the sandbox VIN when none was given (or the capability takes no
 * input).
 */
export const vinOf = (input: object) =>
  'vin' in input && typeof input.vin === 'string' ? input.vin : SANDBOX_DEFAULT_VIN;

/** The sandbox trigger of this call, if any (never honoured outside the sandbox). */
export const triggerOf = (tools: HandlerTools) => (tools.ctx.environment === 'sandbox' ? tools.ctx.trigger : null);
