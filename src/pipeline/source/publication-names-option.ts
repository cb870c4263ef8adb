/**
 * The value of START_REPLICATION's publication_names option for one
 * publication, as an SQL string literal. pgoutput parses the value as a list
 * of identifiers (SplitIdentifierString): unquoted, a name is split on commas
 * and lowercased, so "Orders", which init creates quoted, would be asked for
 * as orders. Double-quoted inside the literal, the name is taken as it is.
 */
export function publicationNamesOption(publication: string): string {
  const identifier = `"${publication.replace(/"/g, '""')}"`;
  return `'${identifier.replace(/'/g, "''")}'`;
}
