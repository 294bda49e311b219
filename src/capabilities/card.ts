// Card numbers (openapi.yaml validateCard, ISO/IEC 7812): Luhn, scheme and the issuer from the BIN ranges file
// (BIN_DATA_FILE, default data/bin/ranges.csv; reloadable).
import { loadBinTable, type LoadedBinTable } from '../adapters/bank-data/bin-table.js';
import { Dataset } from '../adapters/files/dataset.js';
import { ConfigError } from '../errors.js';
import { projectPath } from '../http/spec.js';
import { createCardOperations } from '../operations/security.js';
import { defineCapability } from './capability.js';

export const card = defineCapability({
  name: 'card',
  config: ['binDataFile'],
  async start({ config, catalogue, logger }) {
    const path = config.binDataFile ?? projectPath('data/bin/ranges.csv');
    const read = async () => {
      const table = await loadBinTable(path);
      // A file without one usable row would leave every card without issuer data while the server looks ready.
      if (table.size === 0) throw new ConfigError('BIN_DATA_FILE', `${path} holds no BIN range (a CSV with an iin_start column)`);
      return { value: table };
    };
    // A failure other than the file's access or the check above is a fault of ours, not of BIN_DATA_FILE ("fatal").
    const bin = new Dataset<LoadedBinTable>({ name: 'bin-ranges', files: () => [path], read, variable: 'BIN_DATA_FILE', contentErrorsNameVariable: false }, catalogue);
    logger.info({ entries: (await bin.load()).size }, 'BIN table loaded');
    return { handlers: createCardOperations({ bin: () => bin.value }), datasets: [bin] };
  },
});
