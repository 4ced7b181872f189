/** The fields that name an end user, as its record and its row both have them. */
interface NamedEndUser {
  end_user_type: string;
  first_name: string | null;
  middle_name: string | null;
  last_name: string | null;
  company_name: string | null;
}

/** An end user's name as the pages show it: the company's, or the person's names in order. */
export function endUserName(endUser: NamedEndUser): string {
  if (endUser.end_user_type === 'BUSINESS') return endUser.company_name ?? '';
  return [endUser.first_name, endUser.middle_name, endUser.last_name].filter((part) => part !== null && part !== '').join(' ');
}
