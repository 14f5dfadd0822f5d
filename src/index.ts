/** The public API, without kernel registration (see kernels/index.ts for the package entry). */
export * from './names';
export {fromSpecAttrs} from './attributes';
export type {
  AutoPad, ConvolutionBackpropFiltersAttrs, ConvTransposeBackpropFiltersAttrs, DataFormat, FilterFormat,
  FilterGradientAttrs, SpecAttrs, TransposedFilterFormat,
} from './attributes';
export {computeGeometry} from './geometry';
export type {CanonicalTensor, FilterGradientGeometry, SpatialAxis} from './geometry';
export {convolutionBackpropFilters, convTransposeBackpropFilters} from './ops';
