export * from './answer.ts';
export * from './codes.ts';
export * from './capability.ts';
export * from './catalog.ts';
export * from './common.ts';
export * from './events.ts';
export * from './subjects.ts';
export * from './secret.ts';
export { withoutSecrets, publicValue, secretMemberNames } from './redaction.ts';
export * from './ids.ts';
export * from './vin.ts';
export { apiKey, apiKeyRecord, apiKeyStatus, scopeName } from './nouns/apiKey.ts';
export { signing } from './nouns/signing.ts';
export { mco } from './nouns/mco.ts';
export { vehicle, decodeRecord, type DecodeRecord, type DecodeSources } from './nouns/vehicle.ts';
export { transport } from './nouns/transport.ts';
export {
  deal,
  dealOpenValue,
  workflowIds,
  buyDealRequest,
  usZip,
  dealStates,
  stepStatuses,
  dealLifecycleEvents,
  dealStep,
  dealValue,
  dealEventRecord,
  type DealValue,
  type DealStep,
} from './nouns/deal.ts';
export { poa, poaDocumentValue } from './nouns/poa.ts';
export { frameInspection, inspectionValue } from './nouns/frameInspection.ts';
export { totalLoss, totalLossFsmStates } from './nouns/totalLoss.ts';
export * from './mandate.ts';
export * from './lifecycles.ts';
export * from './money.ts';
export { webhook } from './nouns/webhook.ts';
export * from './connections.ts';
export * from './ops.ts';
export * from './triggers.ts';
