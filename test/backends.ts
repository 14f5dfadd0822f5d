/**
 * The backends the Node suite runs every case on. A backend may skip a case by id, with the
 * reason printed.
 */
export interface BackendUnderTest {
  name: string;
  skips?: Readonly<Record<string, string>>;
}

export const NODE_BACKENDS: readonly BackendUnderTest[] = [{name: 'cpu'}];
