/**
 * Loaded first into a worker's shared workflow context unless `WORKFLOW_STACK_TRACES` is on
 * (src/process/worker.ts). The SDK captures a stack trace for every promise a workflow makes, each frame
 * mapped through the bundle's source map, and keeps it while the promise is pending, only to answer the
 * Temporal UI's Stack Trace tab. With no frames captured that costs next to nothing: a worker spends about
 * 12 % less CPU per transaction and a cached waiting workflow keeps 68 KB of heap instead of 95
 * (bench/README.md, workflow stack traces off). Failures in histories carry no stack trace anyway
 * (src/temporal/failure-converter.cjs); an error workflow code throws is logged by the worker without one. The context's built-ins are frozen once this module has run, so
 * the limit holds for every workflow in it.
 */
Error.stackTraceLimit = 0;

export {};
