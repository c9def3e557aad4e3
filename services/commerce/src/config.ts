import { z } from 'zod';
import { setting, x402Settings, type Services, type SettingsOf } from '@vcs/platform';

/** The commerce pillar's own settings (README's settings table), parsed once at start into `services.settings`. */
export const commerceSettings = z.object({
  /** How long a rotated key keeps working beside its successor. */
  KEY_ROTATION_GRACE_SECONDS: setting.int(0, 90 * 86_400).default(86_400),
  /** The x402 rail: facilitator, chain node, payee, network, asset (platform x402.ts). */
  ...x402Settings.shape,
});
/** What the commerce pillar's code reads: the base settings and its own. */
export type CommerceSettings = SettingsOf<typeof commerceSettings>;
/** What the commerce pillar's code is given, its settings typed. */
export type CommerceServices = Services<CommerceSettings>;
