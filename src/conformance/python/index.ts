/**
 * Python source reading for the conformance tools: tree-sitter's Python grammar (WASM), definition
 * extraction with drift-check segments, and function signatures. See docs/conformance/drift.md.
 */
export {
  type DefinitionKind,
  type ExtractOptions,
  extractDefinitions,
  type PythonDefinition,
} from "./definitions.js";
export type { ParameterKind, PythonParameter } from "./signature.js";
export type {
  IndexedParameter,
  ParameterChange,
  ParameterDiff,
  ParameterRename,
} from "./signatureDiff.js";
