/**
 * What tfjs's jasmine_util.js takes from 'jasmine-core/lib/jasmine-core/jasmine.js' (jasmine-core
 * 3's jasmineRequire, which jasmine-core 5+ no longer exports): `core(jasmineRequire)`, a fresh
 * core object it sets DEFAULT_TIMEOUT_INTERVAL on and otherwise leaves alone. The jasmine that
 * runs the tests is the runner's own; setup.ts sets tfjs's timeout on it.
 */
export function core(): Record<string, unknown> {
  return {};
}
