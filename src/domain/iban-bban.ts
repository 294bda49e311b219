// BBAN field layouts per country (SWIFT IBAN Registry, ISO 13616): where bank, branch and account sit in the BBAN.

/**
 * One letter per BBAN field, each followed by its length:
 *   b = bank identifier, s = branch identifier (both at the registry's positions),
 *   c = account number, k = national check digits, x = other (currency, reserved digits, owner id, account type suffix).
 * The account number is the `c` fields joined: the BBAN without bank and branch codes, national check digits
 * and the few non-account fields listed per country below.
 *
 * Bank and branch positions follow the SWIFT IBAN Registry (release 100) except FR and its territories, where the
 * registry gives no branch although the RIB's code guichet (characters 6-10) is one (MC, same RIB, has it).
 */
const LAYOUTS: Readonly<Record<string, string>> = {
  AD: 'b4s4c12',
  AE: 'b3c16',
  AL: 'b3s5c16', // registry branch 4-8 includes the national check digit
  AT: 'b5c11',
  AZ: 'b4c20',
  BA: 'b3s3c8k2',
  BE: 'b3c7k2',
  BG: 'b4s4c10', // 2-digit account type + 8-character account, as written domestically
  BH: 'b4c14',
  BI: 'b5s5c11k2',
  BR: 'b8s5c10x2', // account type and owner suffix
  BY: 'b4c20', // 4-digit balance account + 16-character account
  CH: 'b5c12',
  CR: 'b4c14',
  CY: 'b3s5c16',
  CZ: 'b4c16', // prefix + account
  DE: 'b8c10',
  DJ: 'b5s5c11k2',
  DK: 'b4c10',
  DO: 'b4c20',
  EE: 'b2c14',
  EG: 'b4s4c17',
  ES: 'b4s4k2c10',
  FI: 'b3c11',
  FK: 'b2c12',
  FO: 'b4c10',
  FR: 'b5s5c11k2',
  GB: 'b4s6c8',
  GE: 'b2c16',
  GI: 'b4c15',
  GL: 'b4c10',
  GR: 'b3s4c16',
  GT: 'b4c20',
  HN: 'b4c20',
  HR: 'b7c10',
  HU: 'b3s4k1c15k1',
  IE: 'b4s6c8',
  IL: 'b3s3c13',
  IQ: 'b4s3c12',
  IS: 'b2s2c8x10', // ledger + account; the trailing 10 digits are the holder's kennitala
  IT: 'k1b5s5c12', // CIN check character first
  JO: 'b4s4c18',
  KW: 'b4c22',
  KZ: 'b3c13',
  LB: 'b4c20',
  LC: 'b4c24',
  LI: 'b5c12',
  LT: 'b5c11',
  LU: 'b3c13',
  LV: 'b4c13',
  LY: 'b3s3c15',
  MC: 'b5s5c11k2',
  MD: 'b2c18',
  ME: 'b3c13k2',
  MK: 'b3c10k2',
  MN: 'b4c12',
  MR: 'b5s5c11k2',
  MT: 'b4s5c18',
  MU: 'b6s2c12x6', // reserved 000 + currency
  NI: 'b4c20',
  NL: 'b4c10',
  NO: 'b4c6k1',
  OM: 'b3c16',
  PK: 'b4c16',
  PL: 'b8c16', // registry bank identifier 1-8 (bank, branch and their check digit)
  PS: 'b4c21',
  PT: 'b4s4c11k2',
  QA: 'b4c21',
  RO: 'b4c16',
  RS: 'b3c13k2',
  RU: 'b9s5c15',
  SA: 'b2c18',
  SC: 'b6s2c16x3', // currency
  SD: 'b2c12',
  SE: 'b3c17',
  SI: 'b5c8k2',
  SK: 'b4c16',
  SM: 'k1b5s5c12',
  SO: 'b4s3c12',
  ST: 'b4s4c11k2',
  SV: 'b4c20',
  TL: 'b3c14k2',
  TN: 'b2s3c13k2',
  TR: 'b5x1c16', // reserved digit
  UA: 'b6c19',
  VA: 'b3c15',
  VG: 'b4c16',
  XK: 'b2s2c10k2',
  YE: 'b4s4c18',
  // Not in the SWIFT registry: the national RIB/NIB layouts (formats in iban-registry.ts).
  AO: 'b4s4c11k2',
  CV: 'b4s4c11k2',
  MZ: 'b4s4c11k2',
  MA: 'b3s3c16k2',
  CF: 'b5s5c11k2',
  CG: 'b5s5c11k2',
  CM: 'b5s5c11k2',
  GA: 'b5s5c11k2',
  GQ: 'b5s5c11k2',
  TD: 'b5s5c11k2',
  KM: 'b5s5c11k2',
  MG: 'b5s5c11k2',
  BF: 'b5s5c12k2',
  BJ: 'b5s5c12k2',
  CI: 'b5s5c12k2',
  ML: 'b5s5c12k2',
  NE: 'b5s5c12k2',
  SN: 'b5s5c12k2',
  TG: 'b5s5c12k2',
};

/** Territories that use another country's BBAN format under their own country code (registry "includes"). */
export const BBAN_ALIASES: Readonly<Record<string, string>> = {
  AX: 'FI',
  BL: 'FR',
  GF: 'FR',
  GP: 'FR',
  MF: 'FR',
  MQ: 'FR',
  NC: 'FR',
  PF: 'FR',
  PM: 'FR',
  RE: 'FR',
  TF: 'FR',
  WF: 'FR',
  YT: 'FR',
};

type FieldKind = 'b' | 's' | 'c' | 'k' | 'x';

interface Segment {
  kind: FieldKind;
  start: number;
  end: number;
}

export interface BbanLayout {
  length: number;
  bank: Segment | null;
  branch: Segment | null;
  account: readonly Segment[];
}

export interface BbanFields {
  bankCode: string;
  branchCode: string | null;
  accountNumber: string;
}

function parseLayout(spec: string): BbanLayout {
  let pos = 0;
  let bank: Segment | null = null;
  let branch: Segment | null = null;
  const account: Segment[] = [];
  for (const m of spec.matchAll(/([bsckx])(\d+)/g)) {
    const seg: Segment = { kind: m[1] as FieldKind, start: pos, end: pos + Number(m[2]) };
    pos = seg.end;
    if (seg.kind === 'b') bank = seg;
    else if (seg.kind === 's') branch = seg;
    else if (seg.kind === 'c') account.push(seg);
  }
  return { length: pos, bank, branch, account };
}

const PARSED = new Map<string, BbanLayout>(Object.entries(LAYOUTS).map(([country, spec]) => [country, parseLayout(spec)]));
for (const [territory, parent] of Object.entries(BBAN_ALIASES)) PARSED.set(territory, PARSED.get(parent)!);

/** The BBAN layout for a country code (territories resolve to their parent's), or null when unknown. */
export function bbanLayout(countryCode: string): BbanLayout | null {
  return PARSED.get(countryCode) ?? null;
}

/**
 * Split a BBAN into bank, branch and account. When the BBAN has the country's length everything is split;
 * when it is too short or too long, bank and branch are still taken from their fixed positions if present,
 * and the account number is "" (its end cannot be known). Unknown countries give "" / null / "".
 */
export function splitBban(countryCode: string, bban: string): BbanFields {
  const layout = bbanLayout(countryCode);
  if (!layout) return { bankCode: '', branchCode: null, accountNumber: '' };
  const { bank, branch } = layout;
  const bankCode = bank !== null && bban.length >= bank.end ? bban.slice(bank.start, bank.end) : '';
  const branchCode = branch === null ? null : bban.length >= branch.end ? bban.slice(branch.start, branch.end) : '';
  const accountNumber = bban.length === layout.length ? accountOf(layout.account, bban) : '';
  return { bankCode, branchCode, accountNumber };
}

/** The account fields joined (one slice for most countries: no array per request). */
function accountOf(segments: readonly Segment[], bban: string): string {
  if (segments.length === 1) return bban.slice(segments[0].start, segments[0].end);
  let out = '';
  for (const seg of segments) out += bban.slice(seg.start, seg.end);
  return out;
}
