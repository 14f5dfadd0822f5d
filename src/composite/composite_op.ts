import * as tf from '@tensorflow/tfjs-core';

import {copyOfForeignInput, geometryOfKernelCall} from '../kernel_inputs';
import {OpName} from '../names';
import {routedFilterGradient} from '../native/native_filter_gradient';

/**
 * Whether the active backend has a kernel registered under `op`'s name. Asked per call, so a
 * backend registered (or selected) after this package was imported is covered too.
 */
export function activeBackendHasKernel(kernelName: string): boolean {
  return tf.getKernel(kernelName, tf.getBackend()) !== undefined;
}

/**
 * `op` on the active backend, for a backend this package has no kernel for: the backend's own
 * filter-gradient kernel where it computes the problem exactly (src/native/native_plan.ts), the
 * composite of tfjs ops (src/composite/filter_gradient_composite.ts) elsewhere. The same
 * validation and errors as the kernels, the same result within float32 summation order, and
 * differentiable with the gradient registered for the kernel (src/training/gradients.ts), so
 * tf.grad through the op works there as it does through runKernel. `inputs` are the kernel's inputs.
 */
export function compositeFilterGradientOp(op: OpName, inputs: tf.NamedTensorMap, attrs: tf.NamedAttrMap): tf.Tensor {
  const backend = tf.backend();
  const geometry = geometryOfKernelCall(op, inputs, backend, attrs);  // throws every input error before any work
  const backendName = tf.getBackend();
  const withGradient = tf.customGrad(((input: tf.Tensor, outputDelta: tf.Tensor, save: tf.GradSaveFunc) => {
    save([input, outputDelta]);
    const byName = {input, outputDelta};
    // Inputs another backend holds are copied, never moved (see src/kernel_inputs.ts).
    const srcCopy = copyOfForeignInput(byName[geometry.src.name], backend);
    const diffDstCopy = copyOfForeignInput(byName[geometry.diffDst.name], backend);
    let value: tf.Tensor;
    try {
      value = routedFilterGradient(
          geometry, srcCopy ?? byName[geometry.src.name], diffDstCopy ?? byName[geometry.diffDst.name], backendName);
    } finally {
      tf.dispose([srcCopy, diffDstCopy].filter(copy => copy !== undefined));
    }
    return {
      value,
      gradFunc: (upstream: tf.Tensor, saved: tf.Tensor[]) => {
        const gradient = tf.getGradient(op);
        if (gradient === undefined) {
          throw new Error(`${op}: no gradient is registered for the kernel (import the package entry, which registers it)`);
        }
        const grads = gradient.gradFunc(upstream, saved, attrs);
        return [grads.input(), grads.outputDelta()];
      },
    };
  }) as unknown as Parameters<typeof tf.customGrad>[0]);
  return withGradient(inputs.input, inputs.outputDelta) as tf.Tensor;
}
