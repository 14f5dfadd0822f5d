/** The karma entry of tfjs's own convolution tests on webgpu: the set-up, then the test files. */
import './webgpu_environment';
import './tfjs_conv_tests';
