/**
 * The one redaction rule (issue 42). A value is secret when its option is
 * marked secret in the config schema (the callers know that), or by its form:
 * a URL with a password in its userinfo or a `password` / `sslpassword` query
 * parameter (libpq and pg both honour them), `user:password@host` typed
 * without a scheme, or a keyword/value connection string with `password=`.
 * Every exit (log lines, error messages, warnings, command output) goes
 * through redactText, so a secret that reached a message by a path nobody
 * thought of is still masked by its form.
 */
const MASK = '***';

const FORMS: ReadonlyArray<[RegExp, string]> = [
  // scheme://user:password@ — up to the last @ before the host, as URL parsers read a raw @ in a password.
  [/([a-z][a-z0-9+.-]*:\/\/[^\s:/@"'`?#]*):[^\s"'`/]*@/gi, `$1:${MASK}@`],
  // password= and sslpassword= in a query string or a keyword/value string (libpq quotes values with ').
  [/\b((?:ssl)?password\s*=\s*)(?:'(?:[^'\\]|\\.)*'|[^\s&#"'`]+)/gi, `$1${MASK}`],
  // user:password@host typed without a scheme.
  [/(^|[\s"'`(=,[])([^\s:/@"'`?#]+):[^\s@/"'`]+@(?=[^\s@])/g, `$1$2:${MASK}@`],
];

/** Free text with every credential of a recognised form masked; anything else unchanged. */
export function redactText(text: string): string {
  let out = text;
  for (const [form, replacement] of FORMS) out = out.replace(form, replacement);
  return out;
}

/** Whether a value carries a credential by its form (see the rule above). */
export function carriesCredentials(value: string): boolean {
  return redactText(value) !== value;
}

/**
 * A URL with its password and password parameters replaced by `***`, keeping
 * the rest (host, database) for diagnosis. Text that is not a URL with a
 * scheme keeps only what can be masked for sure; anything else is hidden whole.
 */
export function redactUrl(url: string): string {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) {
    try {
      const parsed = new URL(url);
      if (parsed.password) parsed.password = MASK;
      for (const name of [...parsed.searchParams.keys()]) if (/^(ssl)?password$/i.test(name)) parsed.searchParams.set(name, MASK);
      return redactText(parsed.toString());
    } catch {
      // Not a URL after all: the text rule below.
    }
  }
  const masked = redactText(url);
  return masked === url || /password/i.test(masked) ? MASK : masked;
}
