// Public entry of the Validation and Lookup API client: the client class, its error class and the result types.
export { ApiError, ValidationClient, toApiError } from './client.js';
export type {
  BicBulkItem,
  BicResult,
  BulkItemError,
  CardValidationResult,
  ClientOptions,
  Deliverability,
  DnsRecord,
  DnsRecordType,
  DnsResult,
  EmailBulkItem,
  EmailJob,
  EmailJobCreated,
  EmailJobResultLine,
  EmailValidationResult,
  ErrorCode,
  ErrorInfo,
  FieldError,
  IbanBulkItem,
  IbanResult,
  IpGeolocationResult,
  PasswordStrengthResult,
  TlsResult,
  UsageResult,
  UsageWindow,
} from './client.js';
export type { components, operations, paths } from './schema.js';
