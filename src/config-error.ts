// A setting the service cannot start with: names the environment variable (or file) and what is wrong with it.
export class ConfigError extends Error {
  constructor(readonly variable: string, message: string) {
    super(`${variable}: ${message}`);
    this.name = 'ConfigError';
  }
}
