import type { EndUserRow } from './repository.js';
import type { EndUserRecord, EndUserStatus } from './schemas.js';

export function presentEndUser(row: EndUserRow, frOwnerBusinessId: string): EndUserRecord {
  return {
    id: row.id,
    fr_end_user_id: row.fr_end_user_id,
    end_user_type: row.end_user_type,
    first_name: row.first_name,
    middle_name: row.middle_name,
    last_name: row.last_name,
    company_name: row.company_name,
    email: row.email,
    reference_code: row.reference_code,
    status: row.status as EndUserStatus,
    fr_owner_business_id: frOwnerBusinessId,
    registration_number: row.registration_number,
    registration_date: row.registration_date,
    business_type: row.business_type,
    incorporation_country: row.incorporation_country,
    sector: row.sector,
    risk_tier: row.risk_tier,
    verification_completed_at: row.verification_completed_at,
    disclosure_accepted_at: row.disclosure_accepted_at,
    disclosure_version: row.disclosure_version,
    reverse_solicitation: { required: Boolean(row.reverse_solicitation_required), accepted: Boolean(row.reverse_solicitation_accepted) },
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
