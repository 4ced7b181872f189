/** A setting that cannot work: the process prints the message as one line and exits non-zero. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}
