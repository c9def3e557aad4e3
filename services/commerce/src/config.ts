import { z } from 'zod';
import { setting } from '@vcs/platform';

/** The commerce pillar's own settings (README's settings table), parsed once at start into `services.settings`. */
export const commerceSettings = z.object({
  /** How long a rotated key keeps working beside its successor. */
  KEY_ROTATION_GRACE_SECONDS: setting.int(0, 90 * 86_400).default(86_400),
});
export type CommerceSettings = z.infer<typeof commerceSettings>;

export const rotationGraceMs = (settings: Readonly<Record<string, unknown>>) => (settings as CommerceSettings).KEY_ROTATION_GRACE_SECONDS * 1000;
