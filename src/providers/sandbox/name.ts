/** The sandbox adapter's name in the provider events it writes (`provider_events.provider`). */
export const sandboxProviderName = 'sandbox';
