/** A problem with the operator's input: printed as a message, never as a stack. */
export class CliError extends Error {}
