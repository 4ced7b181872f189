import { httpProviderSecretBytesMin, secretsMasterKeyBytes } from './limits.js';
import { parseMasterKeys, readMasterKeyFile, type MasterKeys } from './master-keys.js';

/**
 * The kinds of value a setting holds (src/config/settings.ts): one parser per kind, shared by every variable of
 * that kind, and how the generated docs describe it.
 */
export interface SettingType<T> {
  /**
   * Reads the variable's text, trimmed and never empty (empty means unset). A value that cannot work throws
   * InvalidValue; a parser whose message must never show the value (a key) may throw a ConfigError of its own.
   */
  parse(text: string, name: string): T;
  /** The accepted values in Markdown, for the settings table and .env.example. */
  readonly accepts: string;
  /** A value as the variable's text, for the default the docs show; absent for kinds that have no default. */
  show?(value: T): string;
}

/**
 * What a value should have been. `shown`: the part of the value the message quotes, which must never be secret; by
 * default the whole value, unless the setting is secret.
 */
export class InvalidValue extends Error {
  constructor(
    readonly expected: string,
    readonly shown?: string,
  ) {
    super(expected);
  }
}

const wholeNumber = /^[0-9]+$/;

/** A whole number in decimal digits (no sign, no exponent, no fraction) from min to max. */
export function integer(bounds: { min: number; max: number }): SettingType<number> {
  return {
    parse(text) {
      if (!wholeNumber.test(text) || Number(text) < bounds.min || Number(text) > bounds.max) {
        throw new InvalidValue(`must be a whole number from ${bounds.min} to ${bounds.max}`);
      }
      return Number(text);
    },
    accepts: `\`${bounds.min}\`–\`${bounds.max}\``,
    show: String,
  };
}

/** The value of `type`, or `off` (undefined): the feature the setting sizes is turned off. */
export function orOff<T>(type: SettingType<T>): SettingType<T | undefined> {
  return {
    parse(text, name) {
      if (text.toLowerCase() === 'off') return undefined;
      try {
        return type.parse(text, name);
      } catch (error) {
        if (error instanceof InvalidValue) throw new InvalidValue(`${error.expected} or "off"`, error.shown);
        throw error;
      }
    },
    accepts: `${type.accepts}, or \`off\``,
    show: (value) => (value === undefined ? 'off' : (type.show?.(value) ?? '')),
  };
}

/** One of a few words, in any case. */
export function oneOf<const V extends string>(values: readonly V[]): SettingType<V> {
  return {
    parse(text) {
      const value = values.find((candidate) => candidate === text.toLowerCase());
      if (value === undefined) throw new InvalidValue(`must be one of ${values.map((candidate) => `"${candidate}"`).join(', ')}`);
      return value;
    },
    accepts: values.map((value) => `\`${value}\``).join(', '),
    show: (value) => value,
  };
}

export const boolean: SettingType<boolean> = {
  parse(text) {
    const value = text.toLowerCase();
    if (value !== 'true' && value !== 'false') throw new InvalidValue('must be true or false');
    return value === 'true';
  },
  accepts: '`true`, `false`',
  show: String,
};

/** Any text; `accepts` says what it should be (an address, a path), for the docs. */
export function text(accepts: string): SettingType<string> {
  return { parse: (value) => value, accepts, show: (value) => value };
}

export const postgresUrl: SettingType<string> = {
  parse(value) {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw new InvalidValue('is not a valid URL (expected postgres://user:password@host:5432/database)');
    }
    if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
      throw new InvalidValue('must start with postgres:// or postgresql://', `${url.protocol}//`);
    }
    return value;
  },
  accepts: '`postgres://user:password@host:5432/database`',
};

/** An absolute http(s) URL without credentials, query or fragment, given without its trailing slash. */
export const httpUrl: SettingType<string> = {
  parse(value) {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw new InvalidValue('must be an absolute URL such as https://api.example.com');
    }
    if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.search || url.hash || url.username || url.password) {
      throw new InvalidValue('must be an http(s) URL without credentials, query or fragment');
    }
    return url.toString().replace(/\/+$/, '');
  },
  accepts: 'an `http(s)://` URL, no query',
  show: (value) => value,
};

function list(value: string): string[] {
  return value.split(',').map((entry) => entry.trim()).filter(Boolean);
}

/** A Standard Webhooks secret: `whsec_` and the base64 of at least 24 random bytes. The message never shows it. */
export const standardWebhooksSecret: SettingType<string> = {
  parse(value) {
    const encoded = value.startsWith('whsec_') ? value.slice('whsec_'.length) : undefined;
    if (encoded === undefined || !/^[A-Za-z0-9+/]+={0,2}$/.test(encoded) || Buffer.from(encoded, 'base64').length < httpProviderSecretBytesMin) {
      throw new InvalidValue(`must be whsec_ followed by the base64 of at least ${httpProviderSecretBytesMin} bytes`, '');
    }
    return value;
  },
  accepts: '`whsec_` + base64 (24+ bytes)',
};

/**
 * `*` (any origin) or browser origins as a browser sends them, each checked, so that a path or a trailing slash,
 * which would never match, stops start-up; none (the empty list) by default.
 */
export const origins: SettingType<true | string[]> = {
  parse(value) {
    if (value === '*') return true;
    return list(value).map((origin) => {
      if (!isOriginOf(origin, ['https:', 'http:'])) {
        throw new InvalidValue('must be * or comma-separated origins such as https://app.example.com (scheme, host and port, lower case, no path)', origin);
      }
      return origin;
    });
  },
  accepts: '`*`, or origins, comma-separated',
  show: (value) => (value === true ? '*' : value.join(',')),
};

/** Whether `text` is exactly an origin (scheme, host and port as a browser writes them) of one of `protocols`. */
function isOriginOf(text: string, protocols: readonly string[]): boolean {
  try {
    const url = new URL(text);
    return protocols.includes(url.protocol) && url.origin === text;
  } catch {
    return false;
  }
}

/** https origins (scheme, host and port as a browser writes them), comma-separated; none by default. */
export const httpsOrigins: SettingType<string[]> = {
  parse(value) {
    return list(value).map((origin) => {
      if (!isOriginOf(origin, ['https:'])) {
        throw new InvalidValue('must be comma-separated https origins such as https://cdn.example.com (host and port, lower case, no path)', origin);
      }
      return origin;
    });
  },
  accepts: 'https origins, comma-separated',
  show: (value) => value.join(','),
};

/** Fastify's trustProxy: `false` (the socket address), `true`, a hop count, or proxy addresses/CIDRs. */
export const trustProxy: SettingType<boolean | number | string[]> = {
  parse(value) {
    if (value.toLowerCase() === 'false') return false;
    if (value.toLowerCase() === 'true') return true;
    if (wholeNumber.test(value)) return Number(value);
    return list(value);
  },
  accepts: 'a hop count, addresses/CIDRs comma-separated, `true`, `false`',
  show: (value) => (Array.isArray(value) ? value.join(',') : String(value)),
};

const durationUnitsMs = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000, ms: 1 } as const;

function showDuration(ms: number): string {
  const [unit, unitMs] = Object.entries(durationUnitsMs).find(([, unitMs]) => ms % unitMs === 0 && ms > 0) ?? ['ms', 1];
  return `${ms / unitMs}${unit}`;
}

/** Durations with a unit (ms, s, m, h, d), comma-separated, each at most maxMs, 1 to countMax of them; in ms. */
export function durations(bounds: { maxMs: number; countMax: number }): SettingType<readonly number[]> {
  return {
    parse(value) {
      const delays = value.split(',').map((entry) => {
        const match = /^([0-9]{1,9})(ms|s|m|h|d)$/.exec(entry.trim());
        const delayMs = match ? Number(match[1]) * durationUnitsMs[match[2] as keyof typeof durationUnitsMs] : NaN;
        if (!(delayMs >= 0 && delayMs <= bounds.maxMs)) {
          throw new InvalidValue(`must be a comma-separated list of durations such as 5s,5m,30m,2h (each at most ${showDuration(bounds.maxMs)})`);
        }
        return delayMs;
      });
      if (delays.length > bounds.countMax) throw new InvalidValue(`must list at most ${bounds.countMax} durations`);
      return delays;
    },
    accepts: `1–${bounds.countMax} durations (\`ms\`, \`s\`, \`m\`, \`h\`, \`d\`) up to ${showDuration(bounds.maxMs)}, comma-separated`,
    show: (value) => value.map(showDuration).join(','),
  };
}

/** Base64 keys of the server secrets' master key, newest first; messages never show them (master-keys.ts). */
export const masterKeys: SettingType<MasterKeys> = {
  parse: (value, name) => parseMasterKeys(value, name),
  accepts: `base64 keys of ${secretsMasterKeyBytes} bytes, newest first, comma-separated`,
};

/** A file holding such keys (a mounted secret), read at start-up. */
export const masterKeyFile: SettingType<MasterKeys> = {
  parse: (file, name) => readMasterKeyFile(file, name),
  accepts: 'a file path',
};
