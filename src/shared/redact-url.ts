/**
 * The URL with its password replaced by `***`, keeping the rest (host,
 * database) for diagnosis. Text that is not a URL keeps only what can be
 * masked for sure (`//user:***@`); anything else is hidden whole.
 */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    const masked = url.replace(/(\/\/[^:/@\s]*:)\S*@/, '$1***@');
    return masked === url ? '***' : masked;
  }
}
