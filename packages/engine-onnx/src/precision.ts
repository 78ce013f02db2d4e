import { precisionOfDtypes, type ExecutedPrecision, type TensorSpec } from '@pbh/core';

/**
 * onnxruntime runs the graph in its own element types: it has no option that converts precision, and PBH sets none.
 * The executed precision is therefore the graph's, read from the session's own metadata (either binding's).
 */
export function graphPrecision(inputs: TensorSpec[], outputs: TensorSpec[]): ExecutedPrecision {
  const tensors = [...outputs, ...inputs];
  const floats = tensors.filter((t) => t.dtype.startsWith('float')).map((t) => `${t.name} ${t.dtype}`);
  return {
    executed: precisionOfDtypes(tensors.map((t) => t.dtype)),
    evidence: `onnxruntime executes the graph's own element types (no precision conversion); session metadata: ${floats.length ? floats.join(', ') : 'no float inputs or outputs'}`,
  };
}

/** Refuses a precision other than the graph's: onnxruntime cannot execute it. */
export function checkPrecision(precision: ExecutedPrecision, requested: string, modelPath: string): void {
  if (precision.executed !== requested) {
    throw new Error(
      `onnxruntime executes ${modelPath} in the graph's own precision, ${precision.executed}; it cannot execute it in ${requested}: convert the model first, or leave engines[].precision unset`,
    );
  }
}

/** The session runs any batch its graph leaves symbolic on axis 0. */
export const acceptsSmallerBatch = (inputs: TensorSpec[]): boolean => inputs.every((i) => typeof i.shape[0] !== 'number');
