// Choosing a content coding from an Accept-Encoding field (RFC 9110 §12.5.3): the client's weights, ties to ours.

/**
 * The coding of `offered` (in the server's order of preference) with the highest weight the client gives it,
 * or null for none (send the representation as it is). A coding the field does not name takes the weight of
 * `*`, else 0; a weight of 0 means "not acceptable". No field at all: null.
 */
export function chooseCoding(field: string | undefined, offered: readonly string[]): string | null {
  if (field === undefined) return null;
  const weights = new Map<string, number>();
  for (const part of field.split(',')) {
    const [name, ...params] = part.split(';').map((s) => s.trim());
    if (name === '') continue;
    let q = 1;
    for (const p of params) {
      const m = /^q\s*=\s*([01](?:\.\d{0,3})?)$/i.exec(p);
      if (m) q = Math.min(1, Number(m[1]));
    }
    weights.set(name.toLowerCase(), q);
  }
  let best: string | null = null;
  let bestQ = 0;
  for (const coding of offered) {
    const q = weights.get(coding) ?? weights.get('*') ?? 0;
    if (q > bestQ) {
      best = coding;
      bestQ = q;
    }
  }
  return best;
}
