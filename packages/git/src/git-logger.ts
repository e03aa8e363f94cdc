/** The slice of a pino logger this package uses (structured object first, message second). */
export interface GitLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  debug(obj: object, msg?: string): void;
}
