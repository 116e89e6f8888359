// Who is acting on the admin surface: a named credential and its role. `viewer` reads (never a stored body);
// `operator` also replays, retries, dismisses, pushes documents and reveals bodies. ADMIN_TOKEN is one
// operator credential named `admin`; ADMIN_CREDENTIALS_FILE adds named ones (see access/credentials.ts).

export type Role = 'viewer' | 'operator';

export interface Actor {
  /** The credential's name (never a person's name from patient data; chosen by the hospital, e.g. `night-desk`). */
  name: string;
  role: Role;
}

/** What an action needs: reads need `viewer`, anything that changes state or shows a body needs `operator`. */
export const canDo = (actor: Actor, needs: Role): boolean => needs === 'viewer' || actor.role === 'operator';

export interface CredentialCheck {
  /** The actor a presented token belongs to, compared in constant time; undefined when none matches. */
  verify(token: string): Actor | undefined;
}
