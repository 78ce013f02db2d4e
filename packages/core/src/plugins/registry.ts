import { existsSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { PrecisionSchema } from '../contracts/precision.js';
import type { Engine } from '../contracts/engine.js';
import type { Metric } from '../contracts/metric.js';
import type { Plugin } from '../contracts/plugin.js';
import type { Scorer } from '../contracts/scorer.js';
import { didYouMean } from '../config/suggest.js';
import { builtinMetrics } from '../metrics/index.js';
import { builtinScorers, topK } from '../scorers/index.js';
import { MANIFEST_FILE } from '../worker/manifest.js';
import { enginesFromManifest } from '../worker/native-engine.js';

/** Engine packages PBH looks for when the config names none; absent ones are simply not installed. */
export const KNOWN_ENGINE_PACKAGES = ['@pbh/engine-onnx', '@pbh/engine-openvino', '@pbh/engine-tvm', '@pbh/engine-pytorch', '@pbh/engine-genai', '@pbh/engine-tensorflow', '@pbh/engine-litert', '@pbh/engine-openai', '@pbh/engine-llamacpp'];

const fn = z.custom<(...args: never[]) => unknown>((v) => typeof v === 'function');
const PluginShape = z.object({
  name: z.string().min(1),
  engines: z
    .array(
      z
        .object({
          name: z.string().min(1),
          probe: fn,
          prepare: fn,
          optionsSchema: z.custom((v) => typeof (v as { safeParse?: unknown })?.safeParse === 'function'),
          precisions: z.array(PrecisionSchema).optional(),
          // Required since the engine boundary of LoadGen's sample library and system under test (contracts/engine.ts).
          processes: z.array(z.enum(['harness', 'worker'])).min(1),
        })
        .passthrough(),
    )
    .optional(),
  scorers: z.array(z.object({ name: z.string().min(1), score: fn, reduce: fn }).passthrough()).optional(),
  metrics: z.array(z.object({ name: z.string().min(1), start: fn, stop: fn }).passthrough()).optional(),
});

export class UnknownNameError extends Error {
  override name = 'UnknownNameError';
}

/** A plugin the config lists could not be loaded: the message names it, says why and what to do. */
export class PluginLoadError extends Error {
  override name = 'PluginLoadError';
}

export class Registry {
  readonly engines = new Map<string, Engine>();
  readonly scorers = new Map<string, Scorer>();
  readonly metrics = new Map<string, Metric>();
  readonly plugins: string[] = [];
  readonly failures: { pkg: string; error: string }[] = [];

  add(plugin: Plugin): void {
    this.plugins.push(plugin.name);
    // An engine written before precisions existed executes the model's own precision only.
    for (const e of plugin.engines ?? []) this.engines.set(e.name, e.precisions ? e : { ...e, precisions: [] });
    for (const s of plugin.scorers ?? []) this.scorers.set(s.name, s);
    for (const m of plugin.metrics ?? []) this.metrics.set(m.name, m);
  }

  private pick<T>(kind: string, map: Map<string, T>, name: string): T {
    const found = map.get(name);
    if (found) return found;
    const installed = [...map.keys()];
    const hint = didYouMean(name, installed);
    throw new UnknownNameError(
      `unknown ${kind} "${name}"${hint ? ` (did you mean "${hint}"?)` : ''}. Installed ${kind}s: ${installed.join(', ') || 'none'}.` +
        (kind === 'engine' ? ' Install the engine package (e.g. @pbh/engine-<name>) or list it under `plugins:` in the config.' : ''),
    );
  }

  engine(name: string): Engine {
    return this.pick('engine', this.engines, name);
  }
  /** Any `topK` (top3, top10, ...) is available without registering each k. */
  scorer(name: string): Scorer {
    const k = /^top([1-9]\d*)$/.exec(name)?.[1];
    if (k && !this.scorers.has(name)) this.scorers.set(name, topK(Number(k)));
    return this.pick('scorer', this.scorers, name);
  }
  metric(name: string): Metric {
    return this.pick('metric', this.metrics, name);
  }
}

function isNotInstalled(e: unknown, pkg: string): boolean {
  const err = e as NodeJS.ErrnoException;
  return (err.code === 'MODULE_NOT_FOUND' || err.code === 'ERR_MODULE_NOT_FOUND') && String(err.message).includes(pkg);
}

const PACKAGE_BASES = (): string[] => [path.join(process.cwd(), 'package.json'), import.meta.url];

/** The manifest a plugin names: a folder holding pbh-engine.json, a .json file, or a package shipping one at its root. */
function manifestOf(pkg: string, baseDir: string): string | undefined {
  if (pkg.startsWith('.') || path.isAbsolute(pkg)) {
    const file = path.resolve(baseDir, pkg);
    if (file.endsWith('.json')) return file;
    const inFolder = path.join(file, MANIFEST_FILE);
    return existsSync(file) && statSync(file).isDirectory() && existsSync(inFolder) ? inFolder : undefined;
  }
  for (const base of PACKAGE_BASES()) {
    try {
      return createRequire(base).resolve(`${pkg}/${MANIFEST_FILE}`);
    } catch {
      // Not there (or not exported): the package is a JavaScript plugin, or not installed.
    }
  }
  return undefined;
}

/**
 * A plugin is a package name, resolved from the user's project first (third-party plugins live there) and then from
 * core's own install; or a path starting with "." or "/", resolved against `baseDir` (the config file's folder).
 */
async function importPlugin(pkg: string, baseDir: string): Promise<unknown> {
  if (pkg.startsWith('.') || path.isAbsolute(pkg)) return (await import(pathToFileURL(path.resolve(baseDir, pkg)).href)) as unknown;
  const bases = PACKAGE_BASES();
  let lastError: unknown;
  for (const base of bases) {
    try {
      const resolved = createRequire(base).resolve(pkg);
      return (await import(pathToFileURL(resolved).href)) as unknown;
    } catch (e) {
      lastError = e;
      if (!isNotInstalled(e, pkg)) throw e;
    }
  }
  throw lastError;
}

/** A worker engine's manifest (pbh-engine.json) or a JavaScript module whose default export is definePlugin(...). */
export async function loadPlugin(pkg: string, baseDir = process.cwd()): Promise<Plugin> {
  const manifest = manifestOf(pkg, baseDir);
  if (manifest) return { name: pkg, engines: enginesFromManifest(manifest) };
  const mod = (await importPlugin(pkg, baseDir)) as { default?: unknown };
  const parsed = PluginShape.safeParse(mod.default);
  if (!parsed.success) {
    throw new PluginLoadError(
      `package ${pkg} is not a PBH plugin: its default export must be definePlugin({ name, engines?, scorers?, metrics? }) (${parsed.error.issues
        .map((i) => `${i.path.join('.') || 'default'}: ${i.message}`)
        .join('; ')})`,
    );
  }
  return mod.default as Plugin;
}

function pluginLoadError(pkg: string, baseDir: string, e: unknown): PluginLoadError {
  if (isNotInstalled(e, pkg)) return new PluginLoadError(`plugin package ${pkg} (listed under plugins:) is not installed; run npm install ${pkg}`, { cause: e });
  const isPath = pkg.startsWith('.') || path.isAbsolute(pkg);
  const file = path.resolve(baseDir, pkg);
  if (isPath && !existsSync(file)) {
    return new PluginLoadError(`plugin ${pkg} (listed under plugins:) is not there: no file ${file} (paths are relative to the config file's folder). Fix the path or remove it from plugins:.`, { cause: e });
  }
  const why = e instanceof PluginLoadError ? e.message : e instanceof Error ? `${e.name}: ${e.message.split('\n')[0]}` : String(e);
  return new PluginLoadError(
    `plugin ${pkg} (listed under plugins:${isPath ? `, ${file}` : ''}) failed to load: ${why}. Fix the plugin, or remove it from plugins: in the config.`,
    { cause: e },
  );
}

/** Built-ins plus every known engine package that is installed plus the config's extra plugins (which must load). */
export async function createRegistry(extra: string[] = [], baseDir = process.cwd()): Promise<Registry> {
  const registry = new Registry();
  registry.add({ name: '@pbh/core', scorers: builtinScorers, metrics: builtinMetrics });
  for (const pkg of KNOWN_ENGINE_PACKAGES.filter((p) => !extra.includes(p))) {
    try {
      registry.add(await loadPlugin(pkg));
    } catch (e) {
      if (!isNotInstalled(e, pkg)) registry.failures.push({ pkg, error: (e as Error).message });
    }
  }
  for (const pkg of extra) {
    try {
      registry.add(await loadPlugin(pkg, baseDir));
    } catch (e) {
      throw pluginLoadError(pkg, baseDir, e);
    }
  }
  return registry;
}
