// German account check methods (Deutsche Bundesbank, "Prüfzifferberechnungsmethoden"): the publication's test
// account numbers per implemented method, and how many German bank codes the implemented methods cover.
import { describe, expect, it } from 'vitest';
import { checkGermanAccount, IMPLEMENTED_METHODS } from '../../src/domain/de-account-check/index.js';
import { BANK_METHODS, BANK_METHODS_SOURCE, ENTRIES_PER_METHOD } from '../../src/domain/de-account-check/bank-methods.js';
import { validateIban } from '../../src/domain/iban.js';

/**
 * Test account numbers ("Testkontonummern", right and wrong) of the Deutsche Bundesbank's publication
 * "Prüfzifferberechnungsmethoden" for each implemented method, as written there (without leading zeros where the
 * publication omits them); `unchecked` are numbers the method exempts. Transcribed with the help of a public
 * library's test suite that cites the publication; a few numbers there (e.g. 1234567897 for method 00) are that
 * suite's own additions, computed by the same rule, and are kept.
 */
const EXAMPLES: Record<string, { valid: string[]; invalid: string[]; unchecked?: string[] }> = {
  '00': {
    valid: ['9290701', '539290858', '1501824', '1501832', '1234567897'],
    invalid: ['9290801', '539190858', '1601824', '1501842', '1234667897'],
  },
  '01': { valid: ['1234567899'], invalid: ['1244567899'] },
  '02': { valid: ['1234567897', '5834567890'], invalid: ['5234567890', '1234667897'] },
  '03': { valid: ['1234567890'], invalid: ['1235567890'] },
  '04': { valid: ['1234567892'], invalid: ['1234577892'] },
  '05': { valid: ['1234567897'], invalid: ['1234667897'] },
  '06': { valid: ['94012341', '5073321010', '1234567892'], invalid: ['94013341', '5073331010', '1234667892'] },
  '07': { valid: ['2234567890', '3234567891'], invalid: ['1234567890', '3234567890'] },
  '08': { valid: ['1234567897'], invalid: ['1235567897'], unchecked: ['59999'] },
  '09': { valid: [], invalid: [], unchecked: ['12345'] },
  '10': { valid: ['12345008', '87654008', '1234567890'], invalid: ['12346008', '87656008', '1234577890'] },
  '11': { valid: ['3234567891', '2234567890', '1234567899'], invalid: ['3234667891', '2235567890', '1244567899'] },
  '13': { valid: ['12345676', '1234567600'], invalid: ['12355676', '1244567600'] },
  '16': {
    valid: ['1134567895', '1234563811', '1234567841', '1234568499'],
    invalid: ['1135567895', '1234563821', '1235567841'],
  },
  '17': { valid: ['1234567990', '0446786040'], invalid: ['1235567990', '0446886040'] },
  '18': { valid: ['1234567899'], invalid: ['1234557899'] },
  '19': { valid: ['0240334000', '0200520016', '1234567898'], invalid: ['0240434000', '0200620016', '1234577898'] },
  '20': { valid: ['1234567896'], invalid: ['1244567890'] },
  '21': { valid: ['1234567893', '9290708', '2345678909', '5678901237'], invalid: ['1234467893'] },
  '22': { valid: ['1234567895'], invalid: ['1233567890'] },
  '24': {
    valid: ['138301', '1306118605', '6000138301', '3307118608', '9990138301', '9307118603'],
    invalid: ['128301', '1306118705', '6000139301', '3306118608', '9991138301', '9307118613'],
  },
  '25': {
    valid: ['521382181', '123456789', '123456770', '823456480'],
    invalid: ['521482181', '124456789', '123556770', '823466480', '1234567881', '123456720'],
  },
  '26': { valid: ['0520309001', '1111118111', '0005501024'], invalid: ['0520319001', '1121118111', '1005501024'] },
  '28': {
    valid: ['19999000', '1234561090', '9130000201', '1234567990'],
    invalid: ['19999101', '1234561190', '9130100201', '1235567990'],
  },
  '30': { valid: ['1234567892', '1230'], invalid: ['2234567892', '1240'] },
  '32': {
    valid: ['9141405', '1709107983', '0122116979', '0121114867', '9030101192', '9245500460', '1234567897', '0004567897'],
    invalid: ['9143405', '1709207983', '0122117979', '0121124867', '9030111192', '9246500460', '1234568897', '0004667897'],
  },
  '33': {
    valid: ['48658', '84956', '1234567892', '0000567892'],
    invalid: ['48758', '94956', '1234568892', '0000566892'],
  },
  '34': { valid: ['9913000700', '9914001000', '1234567190'], invalid: ['9914000700', '9914002000', '1234667190'] },
  '38': {
    valid: ['191919', '1100660', '1234567899', '4567899'],
    invalid: ['192919', '1101660', '1234568899', '5567899'],
  },
  '40': { valid: ['1258345', '3231963', '1234567899'], invalid: ['1358345', '3232963', '1234568899'] },
  '42': { valid: ['59498', '59510', '1234567899'], invalid: ['59598', '59520', '1234568899'] },
  '44': { valid: ['889006', '2618040504', '1234567891'], invalid: ['889106', '2618040514', '1234566891'] },
  '46': {
    valid: ['0235468612', '0837890901', '1041447600', '1234567990', '1234567900', '34567990'],
    invalid: ['0235568612', '0837891901', '1042447600', '1234667990', '1234577900', '34568990'],
  },
  '48': { valid: ['1234567810', '1234567819', '34567810'], invalid: ['1235567810', '1234667819', '34577810'] },
  '49': { valid: ['1234567897', '1234567899'], invalid: ['1244567899'] },
  '50': {
    valid: ['4000005001', '4444442001', '1234560000', '1234560'],
    invalid: ['4001005001', '4444452001', '1234570000', '1334560'],
  },
  '56': {
    valid: ['290545005', '9234567877', '9718304037', '9234567818', '9234567858'],
    invalid: ['291545005', '9244567877', '9719304037', '9234667818', '9234568858', '900000097', '900000038'],
  },
  '60': { valid: ['1234567891', '34567891'], invalid: ['1235567891', '34567881'] },
  '61': {
    valid: ['2063099200', '2063099299', '0260760481', '1234526000', '1234551080'],
    invalid: ['2063098200', '2063099288', '0260860481'],
  },
  '63': { valid: ['123456600', '1234566'], invalid: ['123466600', '1244566', '1234567890'] },
  '64': {
    valid: ['1206473010', '5016511020', '1234562890', '1234562000'],
    invalid: ['1206483010', '5015511020', '1234563890', '1134562000'],
  },
  '65': { valid: ['1234567400', '1234567590'], invalid: ['1234667400', '1234568590'] },
  '67': { valid: ['1234567490', '1234567400'], invalid: ['1235567490', '1334567400'] },
  '68': {
    valid: ['8889654328', '987654324', '987654328', '900654328', '654327', '99654327'],
    invalid: ['8889654338', '987654424', '987655328', '59999', '8880654327'],
    unchecked: ['400000000', '499999999'],
  },
  '76': {
    valid: ['12345600', '0006543200', '9012345600', '90123456', '7876543100', '78765431'],
    invalid: ['12344600', '0006543300', '9112345600', '90223466', '7876542100', '78865431', '1234567890'],
  },
  '88': {
    valid: ['2525259', '1000500', '90013000', '92525253', '99913003'],
    invalid: ['2535259', '1000600', '90013100', '93525253', '99913013', '1234567890'],
  },
  '91': {
    valid: ['2974118000', '5281741000', '9952810000', '2974117000', '5281770000', '9952812000', '8840019000', '8840050000', '8840087000', '8840045000', '8840012000', '8840055000', '8840080000'],
    invalid: ['2984118000', '2984117000', '8850019000', '8850012000'],
  },
  '92': { valid: ['1234567893', '4567893'], invalid: ['1235567893'] },
  '95': {
    valid: ['0068007003', '0847321750', '6450060494', '6454000003'],
    invalid: ['0069007003', '0847322750', '6450160494', '6455000003'],
    unchecked: ['0000000001', '0001999999', '0009000000', '0025999999', '0396000000', '0499999999', '0700000000', '0799999999', '0910000000', '0989999999'],
  },
  '99': {
    valid: ['0068007003', '0847321750'],
    invalid: ['0068008003', '0847221750', '0395999999', '500000000'],
    unchecked: ['0396000000', '0499999999'],
  },
  'A2': { valid: ['3456789019', '5678901231', '6789012348', '3456789012'], invalid: ['1234567890', '0123456789'] },
  'A3': {
    valid: ['1234567897', '0123456782', '9876543210', '1234567890', '0123456789'],
    invalid: ['6543217890', '0543216789'],
  },
  'A7': { valid: ['19010008', '19010438', '19010660', '19010876', '209010892'], invalid: ['209010893', '1234567899'] },
  'B1': {
    valid: ['1434253150', '2746315471', '7414398260', '8347251693', '1501824', '1501832', '539290858', '7414398268', '8347251699'],
    invalid: ['0123456789', '2345678901', '5678901234'],
  },
  'B2': {
    valid: ['0020012357', '0080012345', '0926801910', '1002345674', '8000990054', '9000481805'],
    invalid: ['0020012399', '0080012347', '0080012370', '0932100027', '3310123454', '8000990057', '8011000126', '9000481800', '9980480111'],
  },
  'D8': {
    valid: ['1403414848', '6800000439', '6899999954'],
    invalid: ['3012084101', '1062813622', '0000260986', '0009999999', '0100000000', '0999999999'],
    unchecked: ['0010000000', '0099999999'],
  },
};

const rows = (kind: 'valid' | 'invalid' | 'unchecked') =>
  Object.entries(EXAMPLES).flatMap(([method, e]) => (e[kind] ?? []).map((account) => [method, account] as const));

describe('German account check methods: the Bundesbank publication\'s test accounts', () => {
  it('has examples for every implemented method, and a method for every example', () => {
    expect(Object.keys(EXAMPLES).sort()).toEqual([...IMPLEMENTED_METHODS]);
    for (const [method, e] of Object.entries(EXAMPLES)) {
      if (method !== '09') expect(e.valid.length + e.invalid.length, method).toBeGreaterThan(0);
    }
  });

  it.each(rows('valid'))('method %s: %s is right', (method, account) => {
    expect(checkGermanAccount(method, account.padStart(10, '0'))).toBe('valid');
  });

  it.each(rows('invalid'))('method %s: %s is wrong', (method, account) => {
    expect(checkGermanAccount(method, account.padStart(10, '0'))).toBe('invalid');
  });

  it.each(rows('unchecked'))('method %s: %s is not checked', (method, account) => {
    expect(checkGermanAccount(method, account.padStart(10, '0'))).toBe('unchecked');
  });

  it('a method not implemented answers null; a non-numeric account is wrong', () => {
    expect(checkGermanAccount('E4', '1234567890')).toBeNull();
    expect(checkGermanAccount('00', '12345678X0')).toBe('invalid');
  });
});

describe('German account check methods: coverage of the bank codes', () => {
  const entries = Object.values(ENTRIES_PER_METHOD).reduce((a, b) => a + b, 0);
  const coveredEntries = IMPLEMENTED_METHODS.reduce((sum, m) => sum + (ENTRIES_PER_METHOD[m] ?? 0), 0);
  const codes = [...BANK_METHODS.values()];
  const coveredCodes = codes.filter((m) => IMPLEMENTED_METHODS.includes(m)).length;
  const inUse = new Set(codes);

  it('covers at least 95% of the German bank codes of the registry (printed)', () => {
    console.info(
      `DE check methods: ${IMPLEMENTED_METHODS.length} implemented (${IMPLEMENTED_METHODS.join(' ')}), ` +
        `${[...inUse].filter((m) => IMPLEMENTED_METHODS.includes(m)).length} of ${inUse.size} methods in use; ` +
        `${coveredEntries} of ${entries} registry entries (${((coveredEntries / entries) * 100).toFixed(2)}%), ` +
        `${coveredCodes} of ${codes.length} distinct bank codes (${((coveredCodes / codes.length) * 100).toFixed(2)}%); ` +
        `table from schwifty ${BANK_METHODS_SOURCE.commit.slice(0, 12)}, ${BANK_METHODS_SOURCE.date}`,
    );
    expect(entries).toBe(BANK_METHODS_SOURCE.entries);
    expect(coveredEntries / entries).toBeGreaterThanOrEqual(0.95);
    expect(coveredCodes / codes.length).toBeGreaterThanOrEqual(0.95);
  });

  it('the table holds every German bank code once, with a method id of the Bundesbank\'s form', () => {
    expect(BANK_METHODS.size).toBeGreaterThan(3000);
    for (const [code, method] of BANK_METHODS) {
      expect(code).toMatch(/^[1-8][0-9]{7}$/);
      expect(method).toMatch(/^[0-9A-E][0-9]$/);
    }
  });
});

describe('German IBANs: the account checked with its bank\'s method', () => {
  const noBic = () => null;

  it('the registry example passes its bank\'s method (Commerzbank 37040044, method 13)', () => {
    expect(BANK_METHODS.get('37040044')).toBe('13');
    expect(validateIban('DE89370400440532013000', noBic)).toMatchObject({ valid: true, nationalCheck: 'passed' });
  });

  it('an account failing its method is invalid although MOD 97 passes (the contract\'s example)', () => {
    expect(validateIban('DE08370400440532013100', noBic)).toMatchObject({ valid: false, nationalCheck: 'failed' });
  });

  it('a bank whose method is not implemented is judged on MOD 97 alone (not-applicable)', () => {
    const [code] = [...BANK_METHODS].find(([, m]) => !IMPLEMENTED_METHODS.includes(m))!;
    const bban = `${code}0000000001`;
    const n = BigInt(`${bban}131400`);
    const iban = `DE${String(98n - (n % 97n)).padStart(2, '0')}${bban}`;
    expect(validateIban(iban, noBic)).toMatchObject({ valid: true, nationalCheck: 'not-applicable' });
    // The same account with a method looked up through the caller's table is checked.
    expect(validateIban(iban, noBic, () => '00').nationalCheck).not.toBe('not-applicable');
  });

  it('an unknown bank code and method 09 (no check digit) are not-applicable', () => {
    expect(validateIban('DE89370400440532013000', noBic, () => null).nationalCheck).toBe('not-applicable');
    expect(validateIban('DE89370400440532013000', noBic, () => '09')).toMatchObject({ valid: true, nationalCheck: 'not-applicable' });
  });

  it('a MOD 97 failure does not run the national check', () => {
    expect(validateIban('DE88370400440532013000', noBic).nationalCheck).toBe('not-applicable');
  });
});
