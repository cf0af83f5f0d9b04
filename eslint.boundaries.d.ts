import type { Linter } from 'eslint';

export declare const layers: [type: string, patterns: string[]][];
export declare const allowed: Record<string, string[]>;
export declare const boundariesSettings: Record<string, unknown>;
export declare const boundariesRule: Linter.RuleEntry;
