import { z } from 'zod';

/** POST /connections: going live is a connection, a credential for a dealer system or a consumer account. */
export const connectionSubmission = z
  .object({
    kind: z.enum(['dealer-system', 'consumer-account']),
    system: z
      .string()
      .min(1)
      .max(100)
      .meta({ description: 'The dealer system or consumer platform', example: 'dealertrack' }),
    credential: z
      .string()
      .min(1)
      .max(4096)
      .meta({ description: 'The credential; encrypted at rest, never returned or logged' }),
    nouns: z
      .array(z.string().min(1).max(60))
      .min(1)
      .max(50)
      .optional()
      .meta({ description: 'The nouns this connection would make live (default: every published noun)' }),
  })
  .strict();
export type ConnectionSubmission = z.infer<typeof connectionSubmission>;
