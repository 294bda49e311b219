// Mail-security analysis beyond SPF and DKIM: DMARC discovery (RFC 7489), MTA-STS (RFC 8461), TLS-RPT (RFC 8460), BIMI, CAA (RFC 8659), DNSSEC AD flag.
import { analyseBimiRecords, bimiName, type BimiResult } from './bimi.js';
import { analyseCaa, type CaaResult } from './caa.js';
import { appliedPolicy, discoverDmarc, type DmarcResult, type TxtLookup } from './dmarc.js';
import { analyseMtaSts, mtaStsName, type MtaStsResult, type PolicyFetch } from './mta-sts.js';
import { parseTlsRpt, tlsRptName, type TlsRptResult } from './tls-rpt.js';

/** One DNS answer as the resolver gives it (src/adapters/dns/resolver.ts). */
interface AnswerLike {
  records: Array<{ value: string }>;
  authenticated?: boolean;
}

export interface MailSecurityIo {
  /** TXT strings of a name; rejects on upstream failure. */
  txt: TxtLookup;
  /** The answer for a name and type; rejects on upstream failure. */
  query: (name: string, type: 'MX' | 'CAA' | 'TXT') => Promise<AnswerLike>;
  /** GET https://mta-sts.DOMAIN/.well-known/mta-sts.txt under the TLS inspection's guard, timeout and size cap. */
  fetchMtaStsPolicy: (domain: string) => Promise<PolicyFetch>;
}

interface DnssecResult {
  /**
   * The resolver set the AD bit on the answer for the domain's TXT records: a validating resolver vouches that the
   * answer was DNSSEC-authenticated. Best effort: false from a non-validating resolver whatever the zone's signing.
   */
  authenticated: boolean;
}

export interface MailSecurityExtras {
  dmarc: DmarcResult;
  mtaSts: MtaStsResult;
  tlsRpt: TlsRptResult;
  bimi: BimiResult;
  caa: CaaResult;
  dnssec: DnssecResult;
}

const MAX_NAME = 253;

/**
 * Everything of the mail-security block except SPF and DKIM. Every DNS question is asked at once (one round trip
 * plus the MTA-STS policy fetch when the record exists, plus the DMARC report-authorisation lookups). The lookup of
 * _dmarc.DOMAIN rejects as the lookup does; a failed lookup of the other names becomes a warning of its block.
 */
export async function analyseMailSecurity(io: MailSecurityIo, domain: string): Promise<MailSecurityExtras> {
  const txtOf = (name: string): Promise<string[]> => (name.length > MAX_NAME ? Promise.resolve([]) : io.txt(name));
  const soft = <T>(p: Promise<T>): Promise<T | null> => p.catch(() => null);
  const caaLookup = (name: string): Promise<string[]> => io.query(name, 'CAA').then((a) => a.records.map((r) => r.value));
  const mxHosts = soft(io.query(domain, 'MX').then((a) => a.records.map((r) => r.value)));
  const mtaRecord = soft(txtOf(mtaStsName(domain)));
  const mtaSts = mtaRecord.then(async (txt): Promise<MtaStsResult> => {
    if (txt === null) return { ...analyseMtaSts([], null, []), warnings: [`the lookup of ${mtaStsName(domain)} failed`] };
    const announced = analyseMtaSts(txt, null, []);
    if (!announced.present) return announced;
    const [policy, mx] = await Promise.all([io.fetchMtaStsPolicy(domain), mxHosts]);
    const result = analyseMtaSts(txt, policy, mx ?? []);
    if (mx === null) result.warnings.push(`the MX lookup of ${domain} failed: coverage of the MX hosts is not checked`);
    return result;
  });
  const tlsRpt = soft(txtOf(tlsRptName(domain))).then((txt) =>
    txt === null ? { ...parseTlsRpt([]), warnings: [`the lookup of ${tlsRptName(domain)} failed`] } : parseTlsRpt(txt),
  );
  const bimiTxt = soft(txtOf(bimiName(domain)));
  const dnssec = soft(io.query(domain, 'TXT')).then((a) => ({ authenticated: a?.authenticated === true }));
  const [dmarc, mta, rpt, bimiRecords, caa, sec] = await Promise.all([discoverDmarc(domain, txtOf), mtaSts, tlsRpt, bimiTxt, analyseCaa(domain, caaLookup), dnssec]);
  // The policy that applies to this name (sp= for a subdomain under its organisational domain's record), worked out
  // once: every rule that reads "the DMARC policy" judges this one.
  const policy = appliedPolicy(dmarc, domain);
  const bimi = bimiRecords === null ? { ...analyseBimiRecords([], policy), warnings: [`the lookup of ${bimiName(domain)} failed`] } : analyseBimiRecords(bimiRecords, policy);
  if (mta.present && !rpt.present && rpt.warnings.length === 0) {
    rpt.warnings.push('MTA-STS is published without TLS-RPT: failures to deliver over TLS go unreported');
  }
  return { dmarc, mtaSts: mta, tlsRpt: rpt, bimi, caa, dnssec: sec };
}
