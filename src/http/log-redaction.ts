/**
 * A request's URL as the request log writes it: the log is read by more people than the database, which keeps
 * credentials only as hashes, so credentials a client put in the URL are replaced by `[redacted]`:
 *
 * - the one-time sign-in link's token (`/dashboard/link/{token}`: a password can be chosen with it) and the hosted
 *   onboarding token (`/onboarding/{token}`: an end user's personal data and documents) — every path segment after
 *   those prefixes, however the slashes and letters are percent-encoded, but the page's own action names; and the
 *   one-time id of a dashboard reveal page (`/dashboard/reveal/{id}`: it shows a new secret once);
 * - every query parameter named like a credential (`api_key`, `access_token`, `X-CSRF-Token`, `client_secret`,
 *   `password`, `signature`…, in any case, percent-encoded or not), any parameter that holds an API key, and any
 *   whose value is a sign-in or onboarding link (`?next=/onboarding/…`);
 * - an API key anywhere else in it (a path segment, a `;` parameter).
 */
export function loggedUrl(url: string): string {
  if (!mayHoldCredentials.test(url)) return url;
  const queryStart = url.indexOf('?');
  const path = queryStart === -1 ? url : url.slice(0, queryStart);
  const query = queryStart === -1 ? '' : `?${url.slice(queryStart + 1).split('&').map(redactedParameter).join('&')}`;
  return withoutApiKeys(pathWithoutPageTokens(path) + query);
}

/**
 * Request headers as the request log writes them. The headers that carry credentials by definition (`x-api-key`,
 * `authorization`, `x-csrf-token`, `cookie`…) are replaced whole by the logger's redaction (app.ts); here, an API key
 * a client put in any other header (a mistaken `user-agent`, a forwarded header) is cut out, and a Referer or Origin
 * is logged as its URL would be.
 */
export function loggedHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string | string[] | undefined> {
  let logged = headers;
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value !== 'string' || !mayHoldCredentials.test(value)) continue;
    const redacted = name === 'referer' || name === 'origin' ? loggedReferrer(value) : withoutApiKeys(value);
    if (redacted === value) continue;
    if (logged === headers) logged = { ...headers };
    logged[name] = redacted;
  }
  return logged;
}

// Most URLs and headers have no query, no escape, no token page and no key: they are logged as they are without
// further work.
const mayHoldCredentials = /[?%;\\]|onboarding|link|reveal|sk_/i;

/** An absolute URL (a Referer) with its path and query logged as a request's would be. */
function loggedReferrer(value: string): string {
  const pathStart = value.search(/(?<!\/)\/(?!\/)/);
  return pathStart === -1 ? withoutApiKeys(value) : value.slice(0, pathStart) + loggedUrl(value.slice(pathStart));
}

/** API keys cut out wherever they stand; if one survives only percent-encoded, nothing of the text is kept. */
function withoutApiKeys(text: string): string {
  const cut = text.replace(apiKeyPattern, '[redacted]');
  return apiKeyText.test(decoded(cut)) ? '[redacted]' : cut;
}

/** A character as the URL may spell it: itself or percent-encoded, any number of times (`o`, `%6F`, `%256f`). */
function spelled(character: string): string {
  const hex = character.charCodeAt(0).toString(16);
  return `(?:${character.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&')}|%(?:25)*${hex})`;
}

// A backslash too: some clients and proxies read it as a slash.
const slashes = `(?:${spelled('/')}|${spelled('\\')})+`;
const word = (text: string) => [...text].map(spelled).join('');
/** The prefixes whose next segment is a token, wherever they occur in the path (a version prefix may precede them). */
const tokenPagePrefix = new RegExp(`${slashes}(?:${word('dashboard')}${slashes}(?:${word('link')}|${word('reveal')})|${word('onboarding')})(?=${slashes})`, 'i');
const segmentSeparator = new RegExp(slashes, 'i');

/** The hosted onboarding page's own sub-paths (web/onboarding/pages.ts): kept so the log says which form was sent. */
const pageActions = new Set(['documents', 'outcome', 'submit']);

function pathWithoutPageTokens(path: string): string {
  const prefix = tokenPagePrefix.exec(path);
  if (!prefix) return path;
  const kept = path.slice(0, prefix.index + prefix[0].length);
  // The segment right after the prefix is the token; any further one is redacted too unless it is an action name.
  const segments = path.slice(kept.length).split(segmentSeparator).slice(1);
  return `${kept}/${segments.map((segment, index) => (segment === '' || (index > 0 && pageActions.has(segment)) ? segment : '[redacted]')).join('/')}`;
}

/** Credential words, matched in a parameter name reduced to lower-case letters and digits. */
const credentialName = /key|token|secret|passw|pwd|signature|csrf|auth|session|credential|jwt|bearer|^sig$/;
const apiKeyText = /sk_(?:test|live)_/i;
/** A key as issued (api-keys/service.ts: the prefix, then base64url). */
const apiKeyPattern = /sk_(?:test|live)_[A-Za-z0-9_-]*/gi;

function decoded(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}

function redactedParameter(parameter: string): string {
  const equals = parameter.indexOf('=');
  const name = equals === -1 ? parameter : parameter.slice(0, equals);
  const value = equals === -1 ? '' : parameter.slice(equals + 1);
  const normalisedName = decoded(name).toLowerCase().replace(/[^a-z0-9]/g, '');
  if (apiKeyText.test(decoded(name))) return '[redacted]';
  if (credentialName.test(normalisedName) || apiKeyText.test(decoded(value)) || tokenPagePrefix.test(decoded(value))) return `${name}=[redacted]`;
  return parameter;
}
