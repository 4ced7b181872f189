import type { Clock } from '../clock.js';
import type { Storage } from './database.js';

/** What a server records at start-up for the other programs sharing its database (the CLI). */
export type DeploymentSettingName = 'public_url';

/**
 * Records a setting of the running server; every instance of a deployment shares one value, the last start's.
 * An upsert, so instances starting together each write without a conflict.
 */
export async function recordDeploymentSetting(storage: Storage, name: DeploymentSettingName, value: string, clock: Clock): Promise<void> {
  const updatedAt = clock.now().toISOString();
  await storage.db
    .insertInto('deployment_settings')
    .values({ name, value, updated_at: updatedAt })
    .onConflict((conflict) => conflict.column('name').doUpdateSet({ value, updated_at: updatedAt }))
    .execute();
}

/** The value a server recorded, or undefined when no server of this version has started on the database yet. */
export async function recordedDeploymentSetting(storage: Storage, name: DeploymentSettingName): Promise<string | undefined> {
  const row = await storage.db.selectFrom('deployment_settings').select('value').where('name', '=', name).executeTakeFirst();
  return row?.value;
}
