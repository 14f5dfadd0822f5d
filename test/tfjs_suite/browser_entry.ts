/** The karma entry of tfjs's own convolution tests on webgl: the set-up, then the test files. */
import './webgl_environment';
import './tfjs_conv_tests';
