// What adapters throw when the outside world says no: kinds of failure with client-safe messages, no HTTP.
// operations/error-answer.ts is the one place these become a status and an error code.

/** An expected answer from the outside world, thrown per request; never logged as a fault. */
abstract class Failure extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** An outside dependency (DNS servers, the range API) failed or answered nonsense; the message names no internals. */
export class UpstreamFailure extends Failure {
  constructor(
    readonly dependency: 'dns' | 'range',
    message: string,
  ) {
    super(message);
  }
}

/** A local resource is full or closing (the password worker pool): worth retrying after retryAfterSeconds. */
export class Overloaded extends Failure {
  constructor(
    message: string,
    readonly retryAfterSeconds = 1,
  ) {
    super(message);
  }
}

/** The name does not exist (NXDOMAIN). */
export class NoSuchDomain extends Failure {
  constructor(readonly domain: string) {
    super(`no such domain: ${domain}`);
  }
}

/** A client-given target that cannot be one (not a host name or IP literal); `reason` is safe to show. */
export class InvalidTarget extends Failure {
  constructor(
    readonly field: string,
    readonly reason: string,
  ) {
    super(`parameter ${field} is malformed: ${reason}`);
  }
}

/** A well-formed target the service will not contact (it resolves to a non-public address). */
export class RefusedTarget extends Failure {
  constructor(
    readonly field: string,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}
