/** What a person calls an end user: the company's name, or the person's names in order; the reference code when empty. */
export function endUserName(endUser: {
  end_user_type: string;
  first_name: unknown;
  middle_name: unknown;
  last_name: unknown;
  company_name: unknown;
  reference_code: string;
}): string {
  const parts = endUser.end_user_type === 'BUSINESS' ? [endUser.company_name] : [endUser.first_name, endUser.middle_name, endUser.last_name];
  const name = parts.filter((part): part is string => typeof part === 'string' && part !== '').join(' ');
  return name === '' ? endUser.reference_code : name;
}
