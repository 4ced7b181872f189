export { type CustomerRow } from './repository.js';
export { CustomerService, InvalidInputError, findCustomerById } from './service.js';
