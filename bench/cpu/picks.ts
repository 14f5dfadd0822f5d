/** The workloads of `npm run bench`: picks from oneDNN's benchdnn shape lists (bench/workloads.ts). */
export interface Pick {
  readonly file: string;
  readonly name: string;
  /** The batch of this run (the files say mb50…mb256: too much for JavaScript). */
  readonly batch: number;
  /** Whether the key figures are read off this workload. */
  readonly key?: boolean;
}

/** The workloads: the kinds of problem DESIGN.md §7 and issue 7 name. */
export const PICKS: readonly Pick[] = [
  {file: 'conv/shapes_resnet_50', name: 'resnet_50:res2a_branch2b', batch: 2, key: true},
  {file: 'conv/shapes_resnet_50', name: 'resnet_50:res3a_branch2b', batch: 2, key: true},
  {file: 'conv/shapes_resnet_50', name: 'resnet_50:res2a_branch2a', batch: 2},
  {file: 'conv/shapes_resnet_50', name: 'resnet_50:res3a_branch2c', batch: 2},
  {file: 'conv/shapes_resnet_50', name: 'resnet_50:conv1', batch: 2},
  {file: 'conv/shapes_mobilenet_dw', name: 'mobilenet:conv3_1/dw', batch: 2},
  {file: 'conv/shapes_mobilenet_dw', name: 'mobilenet:conv2_2/dw', batch: 2},
  {file: 'conv/shapes_googlenet_v1', name: 'googlenet_v1:inception_3a/3x3', batch: 2},
  {file: 'conv/shapes_googlenet_v1', name: 'googlenet_v1:inception_3a/5x5', batch: 2},
  {file: 'conv/shapes_1d', name: 'conv1d:8', batch: 1},
  {file: 'conv/shapes_3d', name: '3d_conv_pad:2', batch: 1},
  {file: 'conv/shapes_3d_unet', name: '3d_unet:conv_7', batch: 1},
  {file: 'conv/shapes_dilated', name: 'dilated_conv:19', batch: 2},
  {file: 'conv/shapes_dilated', name: 'dilated_conv:22', batch: 2},
  {file: 'deconv/shapes_2d', name: 'googlenet_v1:inception_3a/3x3', batch: 2},
  {file: 'deconv/shapes_2d', name: 'resnet_50:res3a_branch1', batch: 2},
];

/** The shape tfjs's built-in cpu Conv2DBackpropFilter is timed on: ResNet-50 res2a_branch2b at batch 1. */
export const ANCHOR: Pick = {file: 'conv/shapes_resnet_50', name: 'resnet_50:res2a_branch2b', batch: 1};

/** The training layers' file. */
export const TRAINING_FILE = 'conv/shapes_tfjs_training';
/**
 * How long one timed run of ours lasts: as many back-to-back calls as take about this long, at most
 * MAX_CALLS_PER_RUN, at least one (DESIGN.md §7: small problems amortized). A call shorter than a
 * millisecond or two would otherwise time the read-back and, after the bench's idle pauses, how
 * soon the OS wakes a parked worker.
 */
export const RUN_MS = 40;
export const MAX_CALLS_PER_RUN = 64;

/** The thread targets of issue 31: N threads ÷ 1 on layers of at least these many MFLOP. */
export const THREAD_TARGETS = {bigLayerMflop: 50, bigLayerSpeedUp: 1.8, trainingLayerMflop: 10, trainingSpeedUp: 1.4, floor: 0.95};
