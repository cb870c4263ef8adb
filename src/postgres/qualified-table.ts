/** "schema.table" (the config schema always qualifies the name) -> [schema, table]. */
export function splitTable(qualified: string): [string, string] {
  const dot = qualified.indexOf('.');
  return [qualified.slice(0, dot), qualified.slice(dot + 1)];
}
