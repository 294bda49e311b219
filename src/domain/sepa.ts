// The SEPA schemes' geographical scope (European Payments Council, EPC409-09 "EPC List of Countries and Territories
// included in the SEPA Schemes' Geographical Scope"), by the ISO 3166-1 code an IBAN starts with. Source, date and
// what changed: docs/data-sources.md#sepa.

/** Countries and territories in the scope: the EU, the EEA, and the non-EEA ones the EPC admitted. */
const SEPA_SCOPE: ReadonlySet<string> = new Set([
  // The 27 EU member states.
  'AT', 'BE', 'BG', 'CY', 'CZ', 'DE', 'DK', 'EE', 'ES', 'FI', 'FR', 'GR', 'HR', 'HU', 'IE', 'IT', 'LT', 'LU', 'LV', 'MT',
  'NL', 'PL', 'PT', 'RO', 'SE', 'SI', 'SK',
  // The rest of the EEA.
  'IS', 'LI', 'NO',
  // Admitted outside the EEA: Switzerland, the UK, Monaco, San Marino, Vatican City, Andorra, and since November 2024
  // to May 2025 Albania, Montenegro, Moldova, North Macedonia and Serbia.
  'CH', 'GB', 'MC', 'SM', 'VA', 'AD', 'AL', 'ME', 'MD', 'MK', 'RS',
  // Territories the list names with codes of their own: Åland (FI); French Guiana, Guadeloupe, Martinique, Mayotte,
  // Réunion, Saint Barthélemy, Saint Martin, Saint Pierre and Miquelon (FR); Gibraltar, Guernsey, Jersey, Isle of Man
  // (GB). Not in scope although their IBANs use the French format: New Caledonia, French Polynesia, Wallis and Futuna,
  // the French Southern Territories (NC, PF, WF, TF); nor the Faroe Islands and Greenland (FO, GL).
  'AX', 'GF', 'GP', 'MQ', 'YT', 'RE', 'BL', 'MF', 'PM', 'GI', 'GG', 'JE', 'IM',
]);

/** True when an IBAN of this country or territory code is in the SEPA schemes' geographical scope. */
export function inSepaScope(countryCode: string): boolean {
  return SEPA_SCOPE.has(countryCode);
}

/** How many codes the scope holds (for the docs' figures and their test). */
export const SEPA_SCOPE_SIZE = SEPA_SCOPE.size;
