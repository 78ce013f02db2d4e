import type { EnergyMethod } from '@pbh/core';
import { DASH, fmtNum } from './format.js';

/**
 * Each method in words, as every page prints it: an estimate never reads as a measurement. Short enough that the
 * leaderboard's column stays as narrow as "estimated from TDP" (its 13 columns fit 1400 px); the Profile page says more.
 */
export const ENERGY_METHOD_WORDS: Record<EnergyMethod, string> = {
  rapl: 'measured (RAPL)',
  nvml_energy: 'measured (NVML)',
  nvml_power: 'NVML power samples',
  estimated_tdp: 'estimated from TDP',
};

/** Joules in the unit that keeps three digits readable: J, mJ or µJ. */
export function fmtJoules(joules: number | null | undefined): string {
  if (joules === null || joules === undefined || !Number.isFinite(joules)) return DASH;
  const abs = Math.abs(joules);
  if (abs >= 1) return `${fmtNum(joules)} J`;
  if (abs >= 1e-3) return `${fmtNum(joules * 1e3)} mJ`;
  return `${fmtNum(joules * 1e6)} µJ`;
}

export const methodWords = (method: EnergyMethod | null): string => (method === null ? 'not measured' : ENERGY_METHOD_WORDS[method]);
