/**
 * The route options of every browser page: no API key is looked at (`public`; the dashboard's session guard or the
 * onboarding token stands in for it), and the page is left out of the API's OpenAPI document.
 */
export const pageRoute = { config: { public: true }, schema: { hide: true } } as const;

/** A dashboard page that works without a session (sign-in, the one-time link). */
export const signedOutPageRoute = { config: { public: true, signedOut: true }, schema: { hide: true } } as const;
