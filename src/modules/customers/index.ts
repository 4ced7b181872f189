export { type CustomerRow, addStoredDocumentBytes, lockCustomer, storedDocumentBytes, transactionCount } from './repository.js';
export { CustomerService, InvalidInputError, InvalidInputErrors, findCustomerById } from './service.js';
