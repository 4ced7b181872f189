export { type CustomerRow, addStoredDocumentBytes, storedDocumentBytes } from './repository.js';
export { CustomerService, InvalidInputError, findCustomerById } from './service.js';
