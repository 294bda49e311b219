// Strings kept from a parsed file without the file's text: V8 makes a slice of 13 or more characters point into its
// parent, so one kept provider or bank name held the whole hosting list (~1 MB) or BIN CSV (~0.4 MB) in the heap.

/** `s` in a string of its own (JSON's parser builds a fresh one); short strings are copies already. */
export const ownString = (s: string): string => (s.length < 13 ? s : (JSON.parse(JSON.stringify(s)) as string));
