import { describe, expect, it } from 'vitest';
import { publicationNamesOption } from '../../../../src/pipeline/source/publication-names-option.js';

describe('publication_names of START_REPLICATION', () => {
  it('quotes the publication as an identifier inside the literal, so PostgreSQL neither lowercases it nor splits it on commas', () => {
    expect(publicationNamesOption('outbox_tail')).toBe(`'"outbox_tail"'`);
    expect(publicationNamesOption('Orders')).toBe(`'"Orders"'`);
    expect(publicationNamesOption('a,b')).toBe(`'"a,b"'`);
    // A double quote is doubled for the identifier, a single quote for the literal.
    expect(publicationNamesOption(`it's "x"`)).toBe(`'"it''s ""x"""'`);
  });
});
