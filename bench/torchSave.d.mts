// Types of bench/torchSave.mjs, for the tests that use it.
export function torchPython(): string | null;
export function torchSaveNpzDir(srcDir: string, dstDir: string): string | null;
