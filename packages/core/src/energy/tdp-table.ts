import type { TdpFacts } from '../contracts/energy.js';

export interface TdpRow {
  /** The model as vendors name it, matched as whole words against the normalised CPU model string. */
  name: string;
  vendor: 'intel' | 'amd';
  /** TDP (Intel: TDP or Processor Base Power; AMD: default TDP), watts of one package. */
  watts: number;
  cores: number;
  threads: number;
}

/** From the vendors' specification pages (Intel ARK, AMD product pages); one package each. */
export const TDP_TABLE: readonly TdpRow[] = [
  { name: 'Xeon Platinum 8592+', vendor: 'intel', watts: 350, cores: 64, threads: 128 },
  { name: 'Xeon Platinum 8490H', vendor: 'intel', watts: 350, cores: 60, threads: 120 },
  { name: 'Xeon Platinum 8480+', vendor: 'intel', watts: 350, cores: 56, threads: 112 },
  { name: 'Xeon Platinum 8470', vendor: 'intel', watts: 350, cores: 52, threads: 104 },
  { name: 'Xeon Platinum 8468', vendor: 'intel', watts: 350, cores: 48, threads: 96 },
  { name: 'Xeon Gold 6430', vendor: 'intel', watts: 270, cores: 32, threads: 64 },
  { name: 'Xeon Gold 6448Y', vendor: 'intel', watts: 225, cores: 32, threads: 64 },
  { name: 'Xeon Platinum 8380', vendor: 'intel', watts: 270, cores: 40, threads: 80 },
  { name: 'Xeon Platinum 8375C', vendor: 'intel', watts: 300, cores: 32, threads: 64 },
  { name: 'Xeon Platinum 8358', vendor: 'intel', watts: 250, cores: 32, threads: 64 },
  { name: 'Xeon Gold 6338', vendor: 'intel', watts: 205, cores: 32, threads: 64 },
  { name: 'Xeon Platinum 8280', vendor: 'intel', watts: 205, cores: 28, threads: 56 },
  { name: 'Xeon Gold 6248', vendor: 'intel', watts: 150, cores: 20, threads: 40 },
  { name: 'Xeon Gold 6230', vendor: 'intel', watts: 125, cores: 20, threads: 40 },
  { name: 'Xeon Silver 4214', vendor: 'intel', watts: 85, cores: 12, threads: 24 },
  { name: 'Core i9-13900K', vendor: 'intel', watts: 125, cores: 24, threads: 32 },
  { name: 'Core i7-12700K', vendor: 'intel', watts: 125, cores: 12, threads: 20 },
  { name: 'EPYC 9754', vendor: 'amd', watts: 360, cores: 128, threads: 256 },
  { name: 'EPYC 9654', vendor: 'amd', watts: 360, cores: 96, threads: 192 },
  { name: 'EPYC 9554', vendor: 'amd', watts: 360, cores: 64, threads: 128 },
  { name: 'EPYC 9124', vendor: 'amd', watts: 200, cores: 16, threads: 32 },
  { name: 'EPYC 7763', vendor: 'amd', watts: 280, cores: 64, threads: 128 },
  { name: 'EPYC 7742', vendor: 'amd', watts: 225, cores: 64, threads: 128 },
  { name: 'EPYC 7713', vendor: 'amd', watts: 225, cores: 64, threads: 128 },
  { name: 'EPYC 7543', vendor: 'amd', watts: 225, cores: 32, threads: 64 },
  { name: 'EPYC 7443', vendor: 'amd', watts: 200, cores: 24, threads: 48 },
  { name: 'EPYC 7302', vendor: 'amd', watts: 155, cores: 16, threads: 32 },
  { name: 'Ryzen 9 7950X', vendor: 'amd', watts: 170, cores: 16, threads: 32 },
  { name: 'Ryzen 9 5950X', vendor: 'amd', watts: 105, cores: 16, threads: 32 },
];

/** Lower case, trademarks and the words vendors add around a model ("Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz") gone. */
export function normaliseCpuModel(model: string): string {
  return model
    .toLowerCase()
    .replace(/\((r|tm)\)|[®™]/g, ' ')
    .replace(/@.*$/, ' ')
    .replace(/\b(intel|amd|cpu|processor)\b/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export function tdpRowFor(cpuModel: string): TdpRow | undefined {
  const model = ` ${normaliseCpuModel(cpuModel)} `;
  return TDP_TABLE.find((row) => new RegExp(`\\s${escape(normaliseCpuModel(row.name))}\\s`).test(model));
}

function vendorOf(vendor: string): TdpRow['vendor'] | null {
  return /intel/i.test(vendor) ? 'intel' : /amd/i.test(vendor) ? 'amd' : null;
}

export interface TdpChoice {
  /** Set by pbh run --tdp-w or energy.tdp_w. */
  watts: number | null;
  /** Logical CPUs the watts are shared among: energy.tdp_threads, else the table row's, else the machine's. */
  threads: number | null;
}

/**
 * The TDP the estimate charges: the user's watts (their threads, else the table row's, else this machine's logical
 * CPUs), else the CPU model's row, else the median W/thread of the vendor's rows (labelled `default`), else null.
 */
export function resolveTdp(cpuModel: string, cpuVendor: string, machineThreads: number, choice: TdpChoice): TdpFacts | { unavailable: string } {
  const row = tdpRowFor(cpuModel);
  if (choice.watts !== null) {
    const threads = choice.threads ?? row?.threads ?? machineThreads;
    return { watts: choice.watts, threads, watts_per_thread: choice.watts / threads, source: 'user', entry: row?.name ?? null };
  }
  if (row) return { watts: row.watts, threads: choice.threads ?? row.threads, watts_per_thread: row.watts / (choice.threads ?? row.threads), source: 'table', entry: row.name };
  const vendor = vendorOf(cpuVendor) ?? vendorOf(cpuModel);
  const rows = TDP_TABLE.filter((r) => r.vendor === vendor).map((r) => r.watts / r.threads).sort((a, b) => a - b);
  if (rows.length === 0) return { unavailable: `CPU "${cpuModel}" (vendor "${cpuVendor}") is not in the TDP table and no vendor median applies: pass pbh run --tdp-w WATTS` };
  const perThread = rows.length % 2 ? rows[(rows.length - 1) / 2]! : (rows[rows.length / 2 - 1]! + rows[rows.length / 2]!) / 2;
  const threads = choice.threads ?? machineThreads;
  return {
    watts: perThread * threads,
    threads,
    watts_per_thread: perThread,
    source: 'default',
    entry: `median W/thread of the table's ${rows.length} ${vendor === 'intel' ? 'Intel' : 'AMD'} CPUs ("${cpuModel}" is not in it)`,
  };
}
