// The caller's own usage and limits (openapi.yaml getUsage), from the shared limiter.
import { createAccountOperations } from '../operations/account.js';
import { defineCapability } from './capability.js';

export const account = defineCapability({
  name: 'account',
  config: [],
  start: ({ limiter }) => ({ handlers: createAccountOperations({ limiter }) }),
});
