/** Runs one statement and returns its rows. */
export type RunSql = (sql: string, params?: unknown[]) => Promise<Array<Record<string, unknown>>>;

/**
 * Puts `lines` at the top of the server's pg_hba.conf and reloads; returns a
 * function that writes the original back. The file is written by COPY, so by
 * the server's own user: this works on a native server and in a container
 * alike. COPY takes no parameters, so the lines go through a table of the
 * connected database; its text format escapes tabs and backslashes, which hba
 * lines do not need (tabs become spaces).
 */
export async function prependHbaLines(run: RunSql, lines: string[]): Promise<() => Promise<void>> {
  const [row] = await run("select current_setting('hba_file') as file, pg_read_file(current_setting('hba_file')) as text");
  const file = String(row!.file);
  const original = String(row!.text).replace(/\t/g, ' ').split('\n');
  const write = async (content: string[]) => {
    await run('create table if not exists hba_lines (n int primary key, l text)');
    await run('truncate hba_lines');
    await run('insert into hba_lines select n, l from unnest($1::text[]) with ordinality as t(l, n)', [content]);
    await run(`copy (select l from hba_lines order by n) to '${file.replace(/'/g, "''")}'`);
    await run('select pg_reload_conf()');
  };
  await write([...lines, ...original]);
  return () => write(original);
}
