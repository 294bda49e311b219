// IBAN (ISO 13616, ISO 7064 MOD 97-10): structure, checksum, BBAN fields and offline BIC resolution.
import { beforeAll, describe, it, expect } from 'vitest';
import { validateIban, normaliseIban } from '../../src/domain/iban.js';
import { bbanLayout, splitBban } from '../../src/domain/iban-bban.js';
import { IBAN_COUNTRIES, ibanFormat } from '../../src/domain/iban-registry.js';
import { loadBankDirectory, resolveBic, type BankDirectory } from '../../src/adapters/bank-data/bank-directory.js';
import { projectPath } from '../../src/http/spec.js';
import { repairNational } from '../fixtures/iban/oracle.js';

/** "IBAN electronic format example" of every country in the SWIFT IBAN Registry, release 100. */
const REGISTRY_EXAMPLES: Record<string, string> = {
  AD: 'AD1200012030200359100100',
  AE: 'AE070331234567890123456',
  AL: 'AL47212110090000000235698741',
  AT: 'AT611904300234573201',
  AZ: 'AZ21NABZ00000000137010001944',
  BA: 'BA391290079401028494',
  BE: 'BE68539007547034',
  BG: 'BG80BNBG96611020345678',
  BH: 'BH67BMAG00001299123456',
  BI: 'BI4210000100010000332045181',
  BR: 'BR1800360305000010009795493C1',
  BY: 'BY13NBRB3600900000002Z00AB00',
  CH: 'CH9300762011623852957',
  CR: 'CR05015202001026284066',
  CY: 'CY17002001280000001200527600',
  CZ: 'CZ6508000000192000145399',
  DE: 'DE89370400440532013000',
  DJ: 'DJ2100010000000154000100186',
  DK: 'DK5000400440116243',
  DO: 'DO28BAGR00000001212453611324',
  EE: 'EE382200221020145685',
  EG: 'EG380019000500000000263180002',
  ES: 'ES9121000418450200051332',
  FI: 'FI2112345600000785',
  FK: 'FK88SC123456789012',
  FO: 'FO6264600001631634',
  FR: 'FR1420041010050500013M02606',
  GB: 'GB29NWBK60161331926819',
  GE: 'GE29NB0000000101904917',
  GI: 'GI75NWBK000000007099453',
  GL: 'GL8964710001000206',
  GR: 'GR1601101250000000012300695',
  GT: 'GT82TRAJ01020000001210029690',
  HN: 'HN88CABF00000000000250005469',
  HR: 'HR1210010051863000160',
  HU: 'HU42117730161111101800000000',
  IE: 'IE29AIBK93115212345678',
  IL: 'IL620108000000099999999',
  IQ: 'IQ98NBIQ850123456789012',
  IS: 'IS140159260076545510730339',
  IT: 'IT60X0542811101000000123456',
  JO: 'JO94CBJO0010000000000131000302',
  KW: 'KW81CBKU0000000000001234560101',
  KZ: 'KZ86125KZT5004100100',
  LB: 'LB62099900000001001901229114',
  LC: 'LC55HEMM000100010012001200023015',
  LI: 'LI21088100002324013AA',
  LT: 'LT121000011101001000',
  LU: 'LU280019400644750000',
  LV: 'LV80BANK0000435195001',
  LY: 'LY83002048000020100120361',
  MC: 'MC5811222000010123456789030',
  MD: 'MD24AG000225100013104168',
  ME: 'ME25505000012345678951',
  MK: 'MK07250120000058984',
  MN: 'MN121234123456789123',
  MR: 'MR1300020001010000123456753',
  MT: 'MT84MALT011000012345MTLCAST001S',
  MU: 'MU17BOMM0101101030300200000MUR',
  NI: 'NI45BAPR00000013000003558124',
  NL: 'NL91ABNA0417164300',
  NO: 'NO9386011117947',
  OM: 'OM810180000001299123456',
  PK: 'PK36SCBL0000001123456702',
  PL: 'PL61109010140000071219812874',
  PS: 'PS92PALS000000000400123456702',
  PT: 'PT50000201231234567890154',
  QA: 'QA58DOHB00001234567890ABCDEFG',
  RO: 'RO49AAAA1B31007593840000',
  RS: 'RS35260005601001611379',
  RU: 'RU0304452522540817810538091310419',
  SA: 'SA0380000000608010167519',
  SC: 'SC18SSCB11010000000000001497USD',
  SD: 'SD2129010501234001',
  SE: 'SE4550000000058398257466',
  SI: 'SI56263300012039086',
  SK: 'SK3112000000198742637541',
  SM: 'SM86U0322509800000000270100',
  SO: 'SO211000001001000100141',
  ST: 'ST23000100010051845310146',
  SV: 'SV62CENR00000000000000700025',
  TL: 'TL380080012345678910157',
  TN: 'TN5910006035183598478831',
  TR: 'TR330006100519786457841326',
  UA: 'UA213223130000026007233566001',
  VA: 'VA59001123000012345678',
  VG: 'VG96VPVG0000012345678901',
  XK: 'XK051212012345678906',
  YE: 'YE15CBYE0001018861234567891234',
};

/** Registry territories that use their parent's format under their own code ("includes other countries"). */
const TERRITORY_PARENT: Record<string, string> = {
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

/** ISO 7064 MOD 97-10 remainder of an IBAN (rearranged, letters as 10..35); written here independently. */
function mod97(iban: string): number {
  const rearranged = iban.slice(4) + iban.slice(0, 4);
  let rest = 0;
  for (const ch of rearranged) {
    const v = parseInt(ch, 36);
    rest = (v > 9 ? rest * 100 + v : rest * 10 + v) % 97;
  }
  return rest;
}

/** An IBAN for country + BBAN with correct check digits. */
function makeIban(country: string, bban: string): string {
  const check = 98 - mod97(`${country}00${bban}`);
  return `${country}${String(check).padStart(2, '0')}${bban}`;
}

/** Other check digits in 02..98: the MOD 97 check then fails. */
function breakChecksum(iban: string): string {
  const cd = Number(iban.slice(2, 4));
  const other = ((cd - 2 + 1) % 97) + 2;
  return iban.slice(0, 2) + String(other).padStart(2, '0') + iban.slice(4);
}

/** Every country of the service's registry table (iban-registry.ts), territories included. */
const registryCountries = IBAN_COUNTRIES.filter((c) => ibanFormat(c)?.registry);

function exampleFor(country: string): string {
  const own = REGISTRY_EXAMPLES[country];
  if (own) return own;
  const parent = TERRITORY_PARENT[country];
  if (!parent) throw new Error(`no registry example for ${country}`);
  return makeIban(country, REGISTRY_EXAMPLES[parent].slice(4));
}

const allExamples = [...new Set([...Object.keys(REGISTRY_EXAMPLES), ...registryCountries])]
  .sort()
  .map((country) => [country, exampleFor(country)] as const);

describe('IBAN test fixtures', () => {
  it('cover every registry country, and every example has its country\'s length', () => {
    const missing = registryCountries.filter((c) => !REGISTRY_EXAMPLES[c] && !TERRITORY_PARENT[c]);
    expect(missing).toEqual([]);
    for (const [c, iban] of Object.entries(REGISTRY_EXAMPLES)) expect(iban.length, c).toBe(ibanFormat(c)?.length);
  });

  it.each(Object.entries(REGISTRY_EXAMPLES))('%s registry example carries the check digits MOD 97 gives', (_c, iban) => {
    expect(makeIban(iban.slice(0, 2), iban.slice(4))).toBe(iban);
  });
});

describe('validateIban: published examples', () => {
  it.each(allExamples)('%s example %s is valid', (country, iban) => {
    const r = validateIban(iban, resolveBic);
    expect(r?.valid).toBe(true);
    expect(r?.countryCode).toBe(country);
    expect(r?.checkDigit).toBe(iban.slice(2, 4));
    expect(r?.iban).toBe(iban);
  });

  it.each(allExamples)('%s with a broken checksum is invalid', (_country, iban) => {
    const broken = breakChecksum(iban);
    expect(mod97(broken)).not.toBe(1);
    expect(validateIban(broken, resolveBic)?.valid).toBe(false);
  });

  it.each(allExamples)('%s one character too long (checksum correct) is invalid', (country, iban) => {
    const longer = makeIban(country, `${iban.slice(4)}0`);
    expect(mod97(longer)).toBe(1);
    expect(validateIban(longer, resolveBic)?.valid).toBe(false);
  });

  it.each(allExamples)('%s one character too short (checksum correct) is invalid', (country, iban) => {
    const shorter = makeIban(country, iban.slice(4, -1));
    expect(mod97(shorter)).toBe(1);
    expect(validateIban(shorter, resolveBic)?.valid).toBe(false);
  });
});

describe('BBAN layouts', () => {
  it.each(IBAN_COUNTRIES.filter((c) => bbanLayout(c)))('%s layout length matches the country IBAN length', (c) => {
    expect(bbanLayout(c)?.length).toBe(ibanFormat(c)!.length - 4);
  });

  it('has a layout for every registry country', () => {
    expect(registryCountries.filter((c) => !bbanLayout(c))).toEqual([]);
  });
});

describe('validateIban: field splits', () => {
  // [iban, bankCode, branchCode, accountNumber]; values per the national formats of the registry examples.
  it.each([
    ['DE89370400440532013000', '37040044', null, '0532013000'],
    ['GB29NWBK60161331926819', 'NWBK', '601613', '31926819'],
    ['FR1420041010050500013M02606', '20041', '01005', '0500013M026'],
    ['IT60X0542811101000000123456', '05428', '11101', '000000123456'],
    ['NL91ABNA0417164300', 'ABNA', null, '0417164300'],
    ['AT611904300234573201', '19043', null, '00234573201'],
    ['CH9300762011623852957', '00762', null, '011623852957'],
    ['BE68539007547034', '539', null, '0075470'],
    ['ES9121000418450200051332', '2100', '0418', '0200051332'],
    ['LU280019400644750000', '001', null, '9400644750000'],
    ['PT50000201231234567890154', '0002', '0123', '12345678901'],
    ['PL61109010140000071219812874', '10901014', null, '0000071219812874'],
    ['IE29AIBK93115212345678', 'AIBK', '931152', '12345678'],
    ['HU42117730161111101800000000', '117', '7301', '111110180000000'],
    ['NO9386011117947', '8601', null, '111794'],
    ['SM86U0322509800000000270100', '03225', '09800', '000000270100'],
    ['MU17BOMM0101101030300200000MUR', 'BOMM01', '01', '101030300200'],
    ['BR1800360305000010009795493C1', '00360305', '00001', '0009795493'],
    ['IS140159260076545510730339', '01', '59', '26007654'],
    ['TR330006100519786457841326', '00061', null, '0519786457841326'],
    ['MC5811222000010123456789030', '11222', '00001', '01234567890'],
    ['XK051212012345678906', '12', '12', '0123456789'],
  ])('%s splits into bank %s, branch %s, account %s', (iban, bankCode, branchCode, accountNumber) => {
    const r = validateIban(iban, resolveBic);
    expect(r).toMatchObject({ valid: true, bankCode, branchCode, accountNumber });
  });

  it('splits a French territory IBAN like a French one', () => {
    const r = validateIban(makeIban('GP', '20041010050500013M02606'), resolveBic);
    expect(r).toMatchObject({ valid: true, countryCode: 'GP', bankCode: '20041', branchCode: '01005' });
  });
});

describe('validateIban: check digits never issued', () => {
  /** A valid DE IBAN whose computed check digits are `target`. */
  function deWithCheck(target: string): string {
    for (let n = 0; n < 100000; n++) {
      const iban = makeIban('DE', `37040044${String(n).padStart(10, '0')}`);
      if (iban.slice(2, 4) === target) return iban;
    }
    throw new Error(`no DE IBAN with check digits ${target}`);
  }

  it.each([
    ['01', '98'],
    ['00', '97'],
    ['99', '02'],
  ])('%s is invalid even though MOD 97 passes (same remainder as %s)', (never, issued) => {
    const base = deWithCheck(issued);
    const variant = `DE${never}${base.slice(4)}`;
    expect(validateIban(base, resolveBic)?.valid).toBe(true);
    expect(mod97(variant)).toBe(1);
    const r = validateIban(variant, resolveBic);
    expect(r?.valid).toBe(false);
    expect(r?.checkDigit).toBe(never);
  });
});

describe('validateIban: normalisation and plausibility', () => {
  it.each([
    'de89 3704 0044 0532 0130 00',
    'DE89-3704-0044-0532-0130-00',
    '  DE89370400440532013000  ',
    'De89 3704-0044 0532-0130 00',
  ])('accepts %j as DE89370400440532013000', (input) => {
    const r = validateIban(input, resolveBic);
    expect(r?.iban).toBe('DE89370400440532013000');
    expect(r?.valid).toBe(true);
  });

  it('normaliseIban removes spaces and dashes and upper-cases', () => {
    expect(normaliseIban(' gb29-nwbk 6016 ')).toBe('GB29NWBK6016');
  });

  it('accepts a 64-character attempt (valid false)', () => {
    const r = validateIban(`DE89${'1'.repeat(60)}`, resolveBic);
    expect(r?.valid).toBe(false);
  });

  // The Iban parameter's schema refuses these before the operation runs (test/contract/iban-card.test.ts); the
  // function itself still answers each with a verdict.
  it.each([
    ['65 characters', `DE89${'1'.repeat(61)}`, false],
    ['65 characters with spaces', `DE89 3704 0044 0532 0130 00${' '.repeat(38)}`, true],
    ['a dot', 'DE89.3704.0044.0532.0130.00', false],
    ['a slash', 'DE89/370400440532013000', false],
    ['an underscore', 'DE89_370400440532013000', false],
    ['a non-ASCII letter', 'DÉ89370400440532013000', false],
    ['a tab inside', 'DE89\t370400440532013000', false],
    ['empty', '', false],
    ['only spaces', '    ', false],
    ['only dashes', '---', false],
    ['symbols', '<script>', false],
  ])('gives a verdict for what the contract refuses earlier: %s', (_what, input, valid) => {
    expect(validateIban(input, resolveBic).valid).toBe(valid);
  });
});

describe('validateIban: invalid IBANs keep what can be extracted', () => {
  it('a checksum failure keeps all fields and the BIC', () => {
    expect(validateIban('DE88370400440532013000', resolveBic)).toEqual({
      iban: 'DE88370400440532013000',
      valid: false,
      countryCode: 'DE',
      checkDigit: '88',
      bankCode: '37040044',
      branchCode: null,
      accountNumber: '0532013000',
      bic: 'COBADEFFXXX',
      bicValid: true,
      bankName: null, // no name lookup given
      sepa: true,
      nationalCheck: 'not-applicable',
    });
  });

  it('a too-short IBAN keeps bank and branch but not the account', () => {
    expect(validateIban('GB29NWBK6016133192681', resolveBic)).toMatchObject({
      valid: false,
      countryCode: 'GB',
      checkDigit: '29',
      bankCode: 'NWBK',
      branchCode: '601613',
      accountNumber: '',
    });
  });

  it('a country-only fragment keeps the country, empty strings elsewhere', () => {
    expect(validateIban('GB', resolveBic)).toMatchObject({
      valid: false,
      countryCode: 'GB',
      checkDigit: '',
      bankCode: '',
      branchCode: '',
      accountNumber: '',
      bic: null,
      bicValid: false,
    });
  });

  it('an unknown country gives empty fields and no BIC', () => {
    expect(validateIban('XX89370400440532013000', resolveBic)).toEqual({
      iban: 'XX89370400440532013000',
      valid: false,
      countryCode: 'XX',
      checkDigit: '89',
      bankCode: '',
      branchCode: null,
      accountNumber: '',
      bic: null,
      bicValid: false,
      bankName: null,
      sepa: false,
      nationalCheck: 'not-applicable',
    });
  });

  it('digits where the country code belongs give an empty countryCode', () => {
    expect(validateIban('1234567890', resolveBic)).toMatchObject({ valid: false, countryCode: '', checkDigit: '34' });
  });

  it.each([
    ['a card number', '4111 1111 1111 1111', { iban: '************1111', countryCode: '', checkDigit: '', bankCode: '', accountNumber: '' }],
    ['a card number after a country code', 'BE4111111111111111', { iban: 'BE************1111', countryCode: 'BE', checkDigit: '', bankCode: '***', bic: null }],
    ['a card number after letters', 'GB29NWBK4111111111111111', { iban: 'GB29NWBK************1111', checkDigit: '29', bankCode: 'NWBK', branchCode: '******' }],
  ])('masks a card number in an invalid IBAN to its last four, in every field: %s', (_label, given, want) => {
    const result = validateIban(given, resolveBic);
    expect(result).toMatchObject({ valid: false, ...want });
    for (const value of Object.values(result!)) if (typeof value === 'string') expect(value).not.toMatch(/\d{5}/);
  });

  it('shows a valid IBAN as it is even when a run of its digits passes Luhn', () => {
    const iban = makeIban('GB', 'NWBK60161331926813');
    expect(validateIban(iban, resolveBic)).toMatchObject({ iban, valid: true, branchCode: '601613', accountNumber: '31926813' });
  });

  it('a structure failure (letter in a numeric BBAN) with a correct checksum is invalid', () => {
    const iban = makeIban('DE', '37040044053201300A');
    expect(mod97(iban)).toBe(1);
    expect(validateIban(iban, resolveBic)?.valid).toBe(false);
  });
});

describe('BIC resolution', () => {
  let banks: BankDirectory;
  beforeAll(async () => {
    banks = await loadBankDirectory(projectPath('data/banks'));
  });

  it.each([
    ['DE89370400440532013000', 'COBADEFFXXX'],
    ['ES9121000418450200051332', 'CAIXESBBXXX'],
    ['FR1420041010050500013M02606', 'PSSTFRPPXXX'],
    ['NL91ABNA0417164300', 'ABNANL2AXXX'],
    ['LU280019400644750000', 'BCEELULLXXX'],
    ['IT60X0542811101000000123456', 'BLOPIT22XXX'],
    ['GB29NWBK60161331926819', 'NWBKGB2LXXX'],
    ['PL61109010140000071219812874', 'WBKPPLPPXXX'],
    ['DK5000400440116243', 'NDEADKKKXXX'],
    ['IE29AIBK93115212345678', 'AIBKIE2DXXX'],
    ['HU42117730161111101800000000', 'OTPVHUHBXXX'],
    ['GR1601101250000000012300695', 'ETHNGRAAXXX'],
  ])('registry example %s resolves to %s and it is valid', (iban, bic) => {
    expect(validateIban(iban, banks.resolveBic)).toMatchObject({ bic, bicValid: true });
  });

  it.each([
    ['CH9300762011623852957', 'CH: bank code 00762 is in no table'],
    ['AT611904300234573201', 'AT: code 19043 is in no table'],
    ['MC5811222000010123456789030', 'MC: 11222 is no Monaco bank'],
  ])('%s has bic null and bicValid false (%s)', (iban) => {
    expect(validateIban(iban, banks.resolveBic)).toMatchObject({ bic: null, bicValid: false });
  });

  it.each([
    ['DE', '10010010', 'PBNKDEFFXXX'],
    ['AT', '20111', 'GIBAATWWXXX'],
    ['BE', '001', 'GEBABEBBXXX'],
    ['BE', '310', 'BBRUBEBBXXX'],
    ['ES', '0049', 'BSCHESMMXXX'],
    ['FR', '30004', 'BNPAFRPPXXX'],
    ['NL', 'INGB', 'INGBNL2AXXX'],
    ['LU', '001', 'BCEELULLXXX'],
    ['CH', '00100', 'SNBZCHZZXXX'],
    ['SE', '500', 'ESSESESSXXX'],
    ['MC', '12739', 'CFMOMCMXXXX'],
    ['GP', '14006', 'AGRIGPGXXXX'],
  ])('resolveBic(%s, %s) = %s (8-character BICs expanded)', (country, code, bic) => {
    expect(banks.resolveBic(country, code)).toBe(bic);
  });

  it.each([
    ['0075', 'BSCHESMMXXX', 'Banco Popular, now Santander'],
    ['2038', 'CAHMESMMXXX', 'Bankia, now CaixaBank'],
    ['2013', 'BBVAESMMXXX', 'Catalunya Banc, now BBVA'],
    ['2048', 'CECAESMM048', 'Liberbank, through CECA'],
    ['2090', 'BSABESBBXXX', 'Banco CAM, now Sabadell'],
    ['0043', 'BSABESBBXXX', 'Banco Herrero, now Sabadell'],
  ])('Spanish legacy bank code %s resolves to %s (%s)', (code, bic) => {
    expect(resolveBic('ES', code)).toBeNull(); // the packaged table alone misses it
    expect(banks.resolveBic('ES', code)).toBe(bic);
  });

  it('Monaco resolves from Monaco data: Société Générale Monaco is SOGEMCM1, never the French SOGEFRPP', () => {
    expect(banks.resolveBic('FR', '30003')).toBe('SOGEFRPPXXX');
    expect(banks.resolveBic('MC', '30003')).toBe('SOGEMCM1XXX');
    const iban = validateIban(makeIban('MC', repairNational('MC', '30003000010123456789000')!), banks.resolveBic);
    expect(iban).toMatchObject({ valid: true, bankCode: '30003', bic: 'SOGEMCM1XXX', bicValid: true });
  });

  it('a Monaco IBAN of a bank only France lists gives null, not the French BIC', () => {
    expect(banks.resolveBic('FR', '20041')).toBe('PSSTFRPPXXX');
    expect(banks.resolveBic('MC', '20041')).toBeNull();
    expect(resolveBic('MC', '30003')).toBeNull(); // the packaged tables hold only SOGEFRPP for 30003
  });

  it('never answers another country\'s BIC, for any bank code of any table', async () => {
    const { readFile } = await import('node:fs/promises');
    let answered = 0;
    for (const info of banks.tables) {
      const file = JSON.parse(await readFile(projectPath(`data/banks/${info.country}.json`), 'utf8')) as { banks: Record<string, unknown> };
      for (const code of Object.keys(file.banks)) {
        for (const country of banks.countries) {
          const bic = banks.resolveBic(country, code);
          if (bic === null) continue;
          answered++;
          expect(bic.slice(4, 6), `${country} ${code} -> ${bic}`).toBe(country);
        }
      }
    }
    expect(answered).toBeGreaterThan(10_000);
  });

  it.each([
    ['DE', '99999999'],
    ['DE', ''],
    ['GB', 'ZZZZ'],
    ['XX', '123'],
  ])('resolveBic(%s, %j) is null', (country, code) => {
    expect(banks.resolveBic(country, code)).toBeNull();
  });

  it('uses the Bundesbank data valid at the given date', () => {
    // 65461878 (Raiffeisenbank Biberach -alt-) is removed from the data valid from 2026-09-07.
    expect(banks.resolveBic('DE', '65461878', new Date('2026-08-01T12:00:00Z'))).toBe('GENODES1WAR');
    expect(banks.resolveBic('DE', '65461878', new Date('2026-10-01T12:00:00Z'))).toBeNull();
  });

  it('resolves BICs for at least 30 countries, each table dated', () => {
    const territories = ['BL', 'GF', 'GP', 'MF', 'MQ', 'NC', 'PF', 'PM', 'RE', 'TF', 'WF', 'YT'];
    const own = banks.countries.filter((c) => !territories.includes(c));
    expect(own.length).toBeGreaterThanOrEqual(30);
    for (const c of own) {
      if (c === 'DE') continue;
      expect(banks.tables.find((t) => t.country === c)?.date, c).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    }
  });

  it('the IBAN operation\'s description names every table\'s country with its data date', async () => {
    const { readFile } = await import('node:fs/promises');
    const spec = (await readFile(projectPath('openapi.yaml'), 'utf8')).replace(/\s+/g, ' ');
    for (const t of banks.tables) expect(spec, t.country).toContain(`${t.country} ${t.date}`);
    expect(spec).toContain('2026-06-08 to 2026-12-06');
  });

  it('the packaged tables alone cover DE, AT, BE, ES, FR, LU, NL and the French territories', () => {
    expect(resolveBic('DE', '37040044')).toBe('COBADEFFXXX');
    expect(resolveBic('NL', 'ABNA')).toBe('ABNANL2AXXX');
    expect(resolveBic('GP', '14006')).toBe('AGRIGPGXXXX');
    expect(resolveBic('IT', '05428')).toBeNull();
  });
});

describe('splitBban', () => {
  it('gives empty fields for a country without a layout', () => {
    expect(splitBban('DZ', '0001234567890123456789')).toEqual({ bankCode: '', branchCode: null, accountNumber: '' });
  });
});

describe('bank names and the BIC directory (data/banks, Bundesbank, iban-to-bic)', () => {
  let banks: BankDirectory;
  beforeAll(async () => {
    banks = await loadBankDirectory(projectPath('data/banks'));
  });

  it.each([
    ['DE', '37040044', 'Commerzbank'],
    ['BE', '096', 'BELFIUS BANK'],
    ['MC', '30003', 'SOCIETE GENERALE'],
    ['DE', '99999999', null],
    ['XX', '123', null],
    ['FR', '', null],
  ])('bankName(%s, %s) = %s', (country, code, name) => {
    const got = banks.bankName(country, code);
    if (name === 'SOCIETE GENERALE') expect(got).toMatch(/soci[eé]t[eé] g[eé]n[eé]rale/i);
    else expect(got).toBe(name);
  });

  it.each([
    ['DEUTDEFFXXX', true, 'Deutsche Bank', 1],
    ['COBADEFFXXX', true, 'Commerzbank', 1], // several codes of one bank share it: the shortest spelling
    ['GENODEF1M04', true, 'Hausbank München', 1],
    ['CEPAFRPPXXX', true, null, 16], // the regional Caisses d'Epargne: several banks, no name
    ['ZZZZDEFFXXX', false, null, 0],
    ['DEUTDEFF123', false, null, 0],
  ])('bicEntry(%s) = %s, %s, sharedBy %s', (bic, inDirectory, bankName, sharedBy) => {
    expect(banks.bicEntry(bic)).toEqual({ inDirectory, bankName, sharedBy });
  });

  it('a head office (XXX) is in the directory when only a branch BIC of it is listed', () => {
    // GENODEF1M04 is listed; GENODEF1XXX is not, yet the institution GENODEF1 is.
    expect(banks.bicEntry('GENODEF1XXX').inDirectory).toBe(true);
  });
});
