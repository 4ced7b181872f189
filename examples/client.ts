// The client every example uses: the server's URL and an API key from the environment (README "Examples").
import { CustomerApi, CustomerApiError } from '@customer-api/sdk';

export function clientFromEnv(): CustomerApi {
  // KEY is what the README's quick start exports.
  const apiKey = process.env.CUSTOMER_API_KEY ?? process.env.KEY;
  if (!apiKey) {
    console.error('Set CUSTOMER_API_KEY (npx customer-api sandbox init prints one) and CUSTOMER_API_URL (default http://localhost:3000).');
    process.exit(2);
  }
  return new CustomerApi({ apiKey, baseUrl: process.env.CUSTOMER_API_URL ?? 'http://localhost:3000' });
}

/**
 * Drives a sandbox settlement, or finds it already done: a sandbox server settles on its own after
 * SANDBOX_AUTO_SETTLE_MS, and settling what is settled answers 422.
 */
export async function settled<T extends { status: string }>(settle: () => Promise<{ data: T }>, read: () => Promise<{ data: T }>): Promise<T> {
  try {
    return (await settle()).data;
  } catch (error) {
    if (error instanceof CustomerApiError && error.status === 422) return (await read()).data;
    throw error;
  }
}
