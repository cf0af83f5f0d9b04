/** A mistake the user can fix: printed as one line, exit code 1. */
export class CliError extends Error {}
