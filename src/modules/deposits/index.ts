export { type DepositInput, DepositService, incomingRecord } from './service.js';
