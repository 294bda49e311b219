// Types for the CommonJS packages that ship none, declared for just what src/domain reads of their public exports
// (both exact-pinned and guarded: docs/adr/0020).

declare module 'tr46' {
  export interface Tr46Options {
    checkHyphens: boolean;
    checkBidi: boolean;
    checkJoiners: boolean;
    useSTD3ASCIIRules: boolean;
    transitionalProcessing: boolean;
    verifyDNSLength: boolean;
    ignoreInvalidPunycode: boolean;
  }
  /** UTS #46 ToASCII; null when the name is refused. */
  export function toASCII(domain: string, options: Tr46Options): string | null;
}

declare module 'whatwg-url' {
  /** The URL Standard's URL class; throws a TypeError for what the standard's parser refuses. */
  export class URL {
    constructor(text: string, base?: string);
    readonly href: string;
    readonly protocol: string;
    readonly host: string;
    readonly hostname: string;
    readonly port: string;
    readonly pathname: string;
    readonly search: string;
  }
}
