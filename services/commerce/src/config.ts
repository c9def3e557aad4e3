import { z } from 'zod';
import { setting, x402Settings } from '@vcs/platform';

/** The commerce pillar's own settings (README's settings table), parsed once at start into `services.settings`. */
export const commerceSettings = z.object({
  /** How long a rotated key keeps working beside its successor. */
  KEY_ROTATION_GRACE_SECONDS: setting.int(0, 90 * 86_400).default(86_400),
  /** The x402 rail: facilitator, chain node, payee, network, asset (platform x402.ts). */
  ...x402Settings.shape,
});
export type CommerceSettings = z.infer<typeof commerceSettings>;

export const rotationGraceMs = (settings: Readonly<Record<string, unknown>>) =>
  (settings as CommerceSettings).KEY_ROTATION_GRACE_SECONDS * 1000;
