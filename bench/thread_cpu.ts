/**
 * Which CPU a thread runs on, for the thread probes (bench:wake, bench:cores): as source text, so
 * that a worker started from a string runs the same function as the calling thread.
 */

/** The CPU the calling thread runs on now (Linux: field 39 of /proc/thread-self/stat), or −1 elsewhere. */
export const CPU_NOW_SOURCE =
    `() => { try { return Number(require('fs').readFileSync('/proc/thread-self/stat', 'utf8').split(') ')[1].split(' ')[36]); } catch { return -1; } }`;

/** CPU_NOW_SOURCE on this thread. */
export const cpuNow = eval(CPU_NOW_SOURCE) as () => number;
