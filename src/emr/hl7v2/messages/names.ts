// The service names a person with one string, HL7 with family and given names (XPN, XCN). The rule, one place:
// the last word is the family name and the words before it the given names ("Ada Lovelace" → Lovelace^Ada;
// "Ada King Lovelace" → Lovelace^Ada King); one word is a family name alone. A compound family name ("Ludwig van
// Beethoven") splits wrongly (Beethoven^Ludwig van), but joinName gives back the service's string either way,
// which is what the round trip through the EMR needs; nothing better can be told from one string.

export interface PersonName {
  family: string;
  given: string;
}

export function splitName(name: string): PersonName {
  const words = name.trim().split(/\s+/).filter(Boolean);
  const family = words.pop() ?? '';
  return { family, given: words.join(' ') };
}

/** The reverse, in the service's order: given (and middle) names first, then the family name. */
export function joinName(p: { given?: string; middle?: string; family?: string }): string {
  return [p.given, p.middle, p.family]
    .map((s) => (s ?? '').trim())
    .filter(Boolean)
    .join(' ');
}
