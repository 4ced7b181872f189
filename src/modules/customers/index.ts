export { type CustomerRow, addStoredDocumentBytes, lockCustomer, storedDocumentBytes, transactionCount } from './repository.js';
export { CustomerService, InvalidInputError, findCustomerById } from './service.js';
