/** The public API, without kernel registration (see kernels/index.ts for the package entry). */
export * from './names';
export {fromSpecAttrs} from './attributes';
export type {
  AutoPad, ConvolutionBackpropFiltersAttrs, ConvTransposeBackpropFiltersAttrs, DataFormat, FilterFormat,
  FilterGradientAttrs, SpecAttrs, TransposedFilterFormat,
} from './attributes';
export {computeGeometry} from './geometry';
export type {CanonicalTensor, FilterGradientGeometry, GeometryInputs, SpatialAxis, TensorDescription} from './geometry';
export {convolutionBackpropFilters, convTransposeBackpropFilters} from './ops';
export type {FilterShapeArgument} from './ops';
// Training (issue 5): differentiable forward ops, gradients of the filter-gradient kernels, and a
// gradient checker for tests.
export {convolution, convTranspose} from './training/forward_ops';
export type {ConvolutionAttrs, ConvTransposeAttrs} from './training/forward_ops';
export {registerFilterGradientGradients} from './training/gradients';
export {checkGradients} from './training/check_gradients';
export type {CheckGradientsOptions, GradientCheckReport, InputGradientReport} from './training/check_gradients';
// Drop-in gradients for tfjs's own convolution kernels (issue 6); `tfjs-conv-backprop-filters/gradients`
// installs them on import.
export {DROP_IN_GRADIENT_KERNELS, dropInGradientsInstalled, installDropInGradients, uninstallDropInGradients} from './training/dropin_gradients';
