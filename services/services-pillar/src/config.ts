import type { Services, SettingsOf } from '@vcs/platform';
import { connectionSettings } from './activation/crypto.ts';
import { webhookSettings } from './webhooks/config.ts';

/** The services pillar's own settings: webhook delivery's (docs/webhooks.md) and the connection key (README). */
export const servicesPillarSettings = webhookSettings.extend(connectionSettings.shape);
/** What the services pillar's code reads: the base settings and its own. */
export type ServicesPillarSettings = SettingsOf<typeof servicesPillarSettings>;
/** What the services pillar's code is given, its settings typed. */
export type ServicesPillarServices = Services<ServicesPillarSettings>;
