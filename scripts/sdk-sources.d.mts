// Types of sdk-sources.mjs for the TypeScript that imports it (test/sdk/sdk-generated.test.ts).
/** The SDK's generated files (path relative to the repository → content) for this OpenAPI document. */
export declare function sdkSources(document: unknown): Promise<Record<string, string>>;
