// Types of deploy/current.mjs (plain JavaScript so that `pnpm start` checks the build without a TypeScript loader).
export declare const root: string;
export declare const CURRENT: string;
export declare const PACKED: RegExp;
export declare function inputFiles(): string[];
export declare function hashOf(files: string[]): string;
export declare function isCurrent(): boolean;
