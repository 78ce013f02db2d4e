import { existsSync } from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { z } from 'zod';
import { findProjectRoot, findVenvPython, VENV_FIX } from '../worker/venv.js';

/**
 * Model formats born in other frameworks, which PBH converts to ONNX once (cached) for the ONNX engines and the
 * model analysis; engines of that framework run the source itself, found through the export's metadata. One row per
 * framework: `module` is the converter in python/model_convert (its CONVERTERS holds the same names).
 */
export const CONVERTERS = [
  {
    name: 'pytorch',
    framework: 'pytorch',
    accepts: 'a TorchScript .pt or a torch.export .pt2',
    matches: (file: string): boolean => file.endsWith('.pt') || file.endsWith('.pt2'),
  },
  {
    name: 'tensorflow',
    framework: 'tensorflow',
    accepts: 'a TensorFlow SavedModel folder, a Keras .keras file or a LiteRT .tflite file',
    matches: (file: string): boolean => file.endsWith('.keras') || file.endsWith('.tflite') || existsSync(path.join(file, 'saved_model.pb')),
  },
  {
    // Before transformers: a GenAI folder may carry a config.json beside genai_config.json.
    name: 'genai',
    framework: 'onnxruntime-genai',
    accepts: 'an ONNX Runtime GenAI folder (genai_config.json, its decoder, tokenizer.json)',
    matches: (file: string): boolean => existsSync(path.join(file, 'genai_config.json')),
  },
  {
    // Before transformers: optimum-intel writes config.json beside the IR.
    name: 'openvino',
    framework: 'openvino',
    accepts: "an OpenVINO IR folder of a decoder LM (optimum-cli export openvino: openvino_model.xml, config.json, tokenizer.json)",
    matches: (file: string): boolean => existsSync(path.join(file, 'openvino_model.xml')),
  },
  {
    name: 'transformers',
    framework: 'transformers',
    accepts: 'a Hugging Face model folder (config.json, weights, tokenizer.json)',
    matches: (file: string): boolean => existsSync(path.join(file, 'config.json')),
  },
  {
    name: 'gguf',
    framework: 'llama.cpp',
    accepts: 'a GGUF file (llama.cpp)',
    matches: (file: string): boolean => file.endsWith('.gguf'),
  },
] as const satisfies readonly { name: string; framework: string; accepts: string; matches: (file: string) => boolean }[];
export type Converter = (typeof CONVERTERS)[number];

/** The converter for a model path (a file, or a folder such as a SavedModel), or undefined for an ONNX file. */
export const converterFor = (file: string): Converter | undefined => CONVERTERS.find((c) => c.matches(file));

/** What python -m model_convert answers: the ONNX export the other engines and the model analysis read. */
export const ConversionSchema = z.object({
  onnx_path: z.string(),
  format: z.string().min(1),
  source_sha256: z.string(),
  exporter: z.string(),
  exporter_version: z.string(),
  framework_version: z.string(),
  export_ms: z.number(),
  cache_hit: z.boolean(),
  input_names: z.array(z.string()),
  output_names: z.array(z.string()),
});
export type Conversion = z.infer<typeof ConversionSchema>;

export class ConversionError extends Error {
  override name = 'ConversionError';
}

/** Where conversions are kept: $PBH_CONVERT_CACHE, else .cache/converted-onnx under the working folder. */
export const conversionCache = (): string => process.env.PBH_CONVERT_CACHE ?? path.resolve('.cache', 'converted-onnx');

/**
 * The ONNX export of `file`, made once by `python -m model_convert` and kept under `cacheDir` (keyed by the source's
 * bytes, the converter and the framework's version, so every cell of the model and every later sweep reads one file).
 */
export async function convertModel(file: string, converter: Converter, cacheDir = conversionCache()): Promise<Conversion> {
  const venv = findVenvPython();
  const root = findProjectRoot();
  if (!venv || !root) throw new ConversionError(`model ${file} is ${converter.accepts}; converting it to ONNX needs the project venv. Fix: ${VENV_FIX}`);
  const result = await execa(venv.python, ['-m', 'model_convert', '--cache', cacheDir, '--from', converter.name, file], {
    env: { PYTHONPATH: path.join(root, 'python') },
    reject: false,
    timeout: 20 * 60_000,
  });
  if (result.exitCode !== 0) {
    // The converter's own message is its last line; frameworks log freely before it.
    const said = result.stderr.split('\n').filter((l) => l.trim()).at(-1);
    throw new ConversionError(`could not convert ${file} to ONNX: ${said || result.shortMessage}`);
  }
  const parsed = ConversionSchema.safeParse(JSON.parse(result.stdout.trim().split('\n').at(-1) ?? 'null'));
  if (!parsed.success) throw new ConversionError(`python -m model_convert answered for ${file} with a shape PBH does not know: ${parsed.error.message}`);
  return parsed.data;
}
